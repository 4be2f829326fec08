import Foundation
import GRDB
import GroupStore
import Logging
import Subprocesses

/// Plumbing of the `cloud` section: `groupstore cloud run` bridges as child
/// processes, `groupstore cloud status`, and reads of groups and of the
/// embedded remote's file (docs/EMBEDDED-REMOTE.md) from outside.
struct CloudHarness {
    let suite: FaultSuite
    /// The account every bridge syncs as on the embedded remote.
    static let user = "trials"

    /// `groupstore cloud run --format jsonl` for `group` (not waited for).
    func bridge(_ group: String, remote: String, tables: [String], policy: String = "server-wins", name: String) throws -> Subprocess {
        try suite.spawn(
            "groupstore",
            [
                "cloud", "run", "--group", group, "--remote", remote, "--tables", tables.joined(separator: ","),
                "--user", Self.user, "--policy", policy, "--format", "jsonl",
            ],
            name: name)
    }

    /// Waits until `bridge` says it is the group's syncing member.
    static func waitSyncing(_ bridge: Subprocess, timeout: TimeInterval) -> Bool {
        bridge.waitForError(containing: "groupstore: syncing", timeout: timeout)
    }

    /// Waits until `bridge` says it stands by.
    static func waitStandingBy(_ bridge: Subprocess, timeout: TimeInterval) -> Bool {
        bridge.waitForError(containing: "groupstore: standing by", timeout: timeout)
    }

    /// `groupstore cloud status --format json`, parsed.
    func status(_ group: String) throws -> CloudStatusReport {
        // Not kept by the suite: hundreds are run per trial, each waited for here.
        let child = try Subprocess(
            Subprocess.productsDirectory.appendingPathComponent("groupstore"), ["cloud", "status", "--group", group, "--format", "json"],
            name: "cloud status")
        defer { child.stop() }
        guard let exit = child.waitForExit(timeout: 30) else { throw FaultFailure("cloud status of \(group) hung") }
        guard exit == 0, let line = child.output.first,
            let object = try? JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any],
            let live = object["live"] as? Bool, let pending = (object["pending"] as? NSNumber)?.intValue,
            let parked = (object["parked"] as? NSNumber)?.intValue
        else {
            throw FaultFailure("cloud status of \(group) failed (exit \(exit)): \(child.output) \(child.errors)")
        }
        let last = object["lastSync"] as? [String: Any]
        return CloudStatusReport(
            live: live, pending: pending, parked: parked, conflicts: (object["conflicts"] as? NSNumber)?.intValue ?? 0,
            hasLastSync: last != nil, lastError: last?["error"] as? String,
            parkedRecords: (object["parkedRecords"] as? [[String: Any]] ?? []).map {
                "\($0["table"] ?? "?")/\($0["record"] ?? "?") (\($0["direction"] ?? "?")): \($0["reason"] ?? "?")"
            })
    }

    /// Rows of `table` in `group`, by text key, each as a canonical string of
    /// its other columns (`i:3|t:note|null`), read from outside.
    static func rows(_ group: String, _ table: String, columns: [String]) throws -> [String: String] {
        try read(group + "/store.sqlite") { db in
            var rows: [String: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT id, \(columns.joined(separator: ", ")) FROM \(table)") {
                rows[row["id"]] = columns.map { canonical(row[$0] as DatabaseValue) }.joined(separator: "|")
            }
            return rows
        }
    }

    /// The live records of `type` on the remote, in the same shape as ``rows(_:_:columns:)``.
    static func remoteRecords(_ remote: String, type: String, columns: [String]) throws -> [String: String] {
        try read(remote) { db in
            var records: [String: String] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT name, fields FROM records WHERE type = ? AND deleted = 0", arguments: [type]) {
                let text: String = row["fields"]
                guard let fields = try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any] else {
                    throw FaultFailure("remote record \(type)/\(row["name"] as String) has unreadable fields: \(text)")
                }
                records[row["name"]] = columns.map { canonical(json: fields[$0]) }.joined(separator: "|")
            }
            return records
        }
    }

    /// Accepted changes (saves and deletes) per record name of `type`, from the remote's change log.
    static func remoteChangeCounts(_ remote: String, type: String) throws -> [String: Int] {
        try read(remote) { db in
            var counts: [String: Int] = [:]
            for row in try Row.fetchAll(
                db, sql: "SELECT name, count(*) AS n FROM change_log WHERE type = ? GROUP BY name", arguments: [type])
            {
                counts[row["name"]] = row["n"]
            }
            return counts
        }
    }

    static func read<T>(_ path: String, _ body: (Database) throws -> T) throws -> T {
        var configuration = Configuration()
        configuration.readonly = true
        configuration.busyMode = .timeout(10)
        return try DatabaseQueue(path: path, configuration: configuration).read(body)
    }

    static func canonical(_ value: DatabaseValue) -> String {
        switch value.storage {
        case .null: return "null"
        case .int64(let i): return "i:\(i)"
        case .double(let d): return "r:\(d)"
        case .string(let s): return "t:\(s)"
        case .blob(let b): return "b:\(b.base64EncodedString())"
        }
    }

    /// A field of the remote's JSON (`{"i":3}`, `{"t":"x"}`, `null`) in the form of ``canonical(_:)``.
    static func canonical(json: Any?) -> String {
        guard let object = json as? [String: Any], let (kind, value) = object.first else { return "null" }
        switch kind {
        case "i": return "i:\((value as? NSNumber)?.int64Value ?? 0)"
        case "r": return "r:\((value as? NSNumber)?.doubleValue ?? .nan)"
        case "t": return "t:\(value as? String ?? "")"
        case "b": return "b:\(value as? String ?? "")"
        default: return "\(kind):\(value)"
        }
    }

    /// Stops `children` with SIGTERM; the names of those that did not exit 0 within `timeout`.
    static func terminate(_ children: [Subprocess], timeout: TimeInterval = 20) -> [String] {
        for child in children where child.status == nil { child.send(SIGTERM) }
        return children.compactMap { child in
            let status = child.waitForExit(timeout: timeout)
            return status == 0 ? nil : "\(child.name) (exit \(status.map(String.init) ?? "none: still running"))"
        }
    }

    /// Writes what `children` printed into `folder` (`<name>.out`, `<name>.err`), for a post-mortem.
    static func saveOutput(_ children: [Subprocess], in folder: String) {
        for child in children {
            let name = child.name.map { $0.isLetter || $0.isNumber ? $0 : "-" }
            try? (child.output.joined(separator: "\n") + "\n").write(
                toFile: "\(folder)/\(String(name)).out", atomically: false, encoding: .utf8)
            try? (child.errors.joined(separator: "\n") + "\n").write(
                toFile: "\(folder)/\(String(name)).err", atomically: false, encoding: .utf8)
        }
    }

    /// The last few lines a child printed, for failure messages.
    static func tail(_ child: Subprocess) -> String {
        "\(child.name): stderr \(child.errors.suffix(3)); stdout \(child.output.suffix(2))"
    }
}

/// `groupstore cloud status --format json`, the parts the trials check.
struct CloudStatusReport {
    var live: Bool
    var pending: Int
    var parked: Int
    var conflicts: Int
    var hasLastSync: Bool
    var lastError: String?
    var parkedRecords: [String]
}

/// Median and maximum of measured durations, for the report.
struct Durations {
    var values: [TimeInterval] = []

    mutating func add(_ value: TimeInterval) { values.append(value) }

    var median: TimeInterval {
        guard !values.isEmpty else { return .nan }
        let sorted = values.sorted()
        return sorted.count % 2 == 1 ? sorted[sorted.count / 2] : (sorted[sorted.count / 2 - 1] + sorted[sorted.count / 2]) / 2
    }

    var max: TimeInterval { values.max() ?? .nan }
}

extension FaultSuite {
    /// A scratch folder (created) for a trial's groups and remote.
    func newFolder(_ name: String) throws -> String {
        let path = newGroup(name)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// Removes a trial's folder, or after a failure moves it where it
    /// outlives the suite (for a post-mortem); returns where it was kept.
    @discardableResult
    func finish(folder: String, failed: Bool) -> String? {
        guard failed || ProcessInfo.processInfo.environment["GROUPSTORE_FAULTS_KEEP"] != nil else {
            try? FileManager.default.removeItem(atPath: folder)
            return nil
        }
        let kept = "/tmp/groupstore-faults-kept-\(getpid())-" + URL(fileURLWithPath: folder).lastPathComponent
        return (try? FileManager.default.moveItem(atPath: folder, toPath: kept)) != nil ? kept : folder
    }
}

extension GroupConfiguration {
    /// A writer of the cloud trials: only writes, logs warnings and worse only.
    static func cloudTrialWriter(_ directory: String) throws -> GroupConfiguration {
        var logger = Logger(label: "faults.writer")
        logger.logLevel = .warning
        var configuration = GroupConfiguration(directory: directory, member: try MemberName("writer"), logger: logger)
        configuration.writesOnly = true
        return configuration
    }
}
