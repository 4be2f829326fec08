import Foundation
import Subprocesses

/// Shared plumbing of the scenarios: scratch directories and child roles.
final class Bench: Sendable {
    enum Storage: String, Sendable {
        case tmpfs, disk

        var root: String { self == .tmpfs ? "/dev/shm" : "/var/tmp" }
    }

    let quick: Bool
    private let scratch: String

    init(quick: Bool) {
        self.quick = quick
        scratch = "groupstore-bench-\(getpid())"
    }

    /// A new empty directory on `storage`.
    func directory(_ name: String, on storage: Storage = .tmpfs) throws -> String {
        let path = "\(storage.root)/\(scratch)/\(name)"
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    func cleanUp() {
        for storage in [Storage.tmpfs, .disk] { try? FileManager.default.removeItem(atPath: "\(storage.root)/\(scratch)") }
    }

    /// Starts this executable in `role`.
    func spawn(_ role: String, _ arguments: [String]) throws -> Subprocess {
        try Subprocess(URL(fileURLWithPath: CommandLine.arguments[0]), [role] + arguments, name: role)
    }

    /// Waits for the child to exit 0, or fails with its last words.
    func finish(_ child: Subprocess, timeout: TimeInterval = 300) throws {
        guard let status = child.waitForExit(timeout: timeout) else {
            child.stop()
            throw BenchFailure("\(child.name) did not finish in \(timeout) s: \(child.errors.suffix(3))")
        }
        guard status == 0 else { throw BenchFailure("\(child.name) exited \(status): \(child.errors.suffix(3))") }
    }

    func ready(_ child: Subprocess, _ text: String = "ready") throws {
        guard child.waitForError(containing: text, timeout: 60) else {
            throw BenchFailure("\(child.name) did not get ready: \(child.errors.suffix(3))")
        }
    }

    /// Lines of a child's output starting with `tag`, split into fields after it.
    static func fields(_ lines: [String], _ tag: String) -> [[Substring]] {
        lines.filter { $0.hasPrefix(tag + " ") }.map { $0.split(separator: " ").dropFirst().map { $0 } }
    }
}

struct BenchFailure: Error, CustomStringConvertible {
    var description: String
    init(_ description: String) { self.description = description }
}
