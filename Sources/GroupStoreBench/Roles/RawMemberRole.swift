import ArgumentParser
import Foundation
import GRDBSQLite

#if canImport(Glibc)
    import Glibc
#endif

/// The floor of a member's path, with no Swift layer above SQLite: one
/// thread blocks on an inotify watch of the `-wal` file, and on each
/// wake-up reads the new transactions and their change rows with the
/// statements the library's merge runs (through the C API), retrying at
/// once while the commit is not visible yet (for at most 150 µs). Prints
/// `R <seq> <receivedAt µs> <committedAt µs> <woken µs>` per transaction
/// once it has `--expect` of them.
struct RawMemberRole: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "raw-member", shouldDisplay: false)

    @Option var group: String
    @Option var expect: Int

    func run() throws {
        let database = try RawSQLite(path: group + "/store.sqlite")
        var cursor: Int64 = 0
        try database.run("SELECT id FROM groupstore_change WHERE op = 6 ORDER BY id DESC LIMIT 1") { row in
            cursor = sqlite3_column_int64(row, 0)
        }
        let fd = inotify_init1(CInt(IN_CLOEXEC))
        guard fd >= 0, inotify_add_watch(fd, group + "/store.sqlite-wal", UInt32(IN_MODIFY)) >= 0 else {
            throw ValidationError("cannot watch \(group)/store.sqlite-wal")
        }
        FileHandle.standardError.write(Data("raw member ready\n".utf8))
        var events = [UInt8](repeating: 0, count: 65536)
        var received: [(seq: Int64, at: Double, committed: Double, woke: Double)] = []
        received.reserveCapacity(expect)
        while received.count < expect {
            _ = events.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            let wokeAt = ProcessFacts.nowMicros
            // An early wake-up (the -wal written before the commit is
            // visible) looks again at once, for at most 150 µs (a wake-up by
            // a commit's later writes finds nothing and waits again).
            let giveUpAt = ProcessFacts.nowMicros + 150
            while ProcessFacts.nowMicros < giveUpAt {
                var found: [(seq: Int64, committed: Double)] = []
                try database.run("BEGIN")
                try database.run(Self.stateSQL)
                try database.run("PRAGMA schema_version")
                try database.run("PRAGMA data_version")
                try database.run(
                    "SELECT id, rid FROM groupstore_change WHERE id > ? AND op = 6 ORDER BY id LIMIT 513",
                    [Double(cursor)]
                ) { row in
                    found.append((sqlite3_column_int64(row, 0), Double(sqlite3_column_int64(row, 1)) / 1e6))
                }
                if let last = found.last {
                    try database.run(
                        "SELECT id, entity, op, key, rid FROM groupstore_change WHERE id > ? AND id <= ? ORDER BY id",
                        [Double(cursor), Double(last.seq)])
                }
                try database.run("COMMIT")
                guard let last = found.last else {
                    sched_yield()
                    continue
                }
                let now = ProcessFacts.nowMicros
                for transaction in found { received.append((transaction.seq, now, transaction.committed * 1e6, wokeAt)) }
                cursor = last.seq
                break
            }
        }
        for save in received { emit("R \(save.seq) \(save.at) \(save.committed) \(save.woke)") }
    }

    /// The state row every merge of the library reads first (then the two
    /// pragmas, as it does).
    static let stateSQL = """
        SELECT (SELECT id FROM groupstore_change WHERE op = 6 ORDER BY id DESC LIMIT 1), (SELECT value FROM groupstore_meta WHERE key = 'epoch'),
               (SELECT value FROM groupstore_meta WHERE key = 'schema_version'),
               (SELECT value FROM groupstore_meta WHERE key = 'pruned_through'), (SELECT max(id) FROM groupstore_change),
               (SELECT value FROM groupstore_meta WHERE key = 'registry_version'),
               (SELECT value FROM groupstore_meta WHERE key = 'trigger_format')
        """
}
