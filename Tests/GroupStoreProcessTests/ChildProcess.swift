import Foundation
import Subprocesses
import XCTest

/// A built executable run as a child process for a test: ``Subprocess`` with
/// waits that fail the test, saying what was seen, when they time out.
final class ChildProcess: Sendable {
    let process: Subprocess
    var name: String { process.name }

    /// The directory holding the built executables (next to the test bundle).
    static let productsDirectory: URL = {
        let bundle = Bundle.main.bundleURL
        if FileManager.default.fileExists(atPath: bundle.appendingPathComponent("groupstore").path) { return bundle }
        return Subprocess.productsDirectory
    }()

    init(_ executable: String, _ arguments: [String], name: String? = nil) throws {
        let url =
            executable.hasPrefix("/")
            ? URL(fileURLWithPath: executable) : Self.productsDirectory.appendingPathComponent(executable)
        process = try Subprocess(url, arguments, name: name ?? executable)
    }

    var pid: Int32 { process.pid }
    var output: [String] { process.output }
    var errors: [String] { process.errors }

    /// Waits until `predicate` holds over (stdout lines, stderr lines, exit status).
    @discardableResult
    func wait<T>(
        _ what: String, timeout: TimeInterval, file: StaticString = #filePath, line: UInt = #line,
        until predicate: (_ stdout: [String], _ stderr: [String], _ exit: Int32?) -> T?
    ) throws -> T {
        if let result = process.wait(timeout: timeout, until: predicate) { return result }
        let output = process.output
        let errors = process.errors
        // A crash report (the Swift runtime's backtrace starts with "*** ")
        // is kept whole up to its frames; the rest of stderr by its end.
        let crash = errors.firstIndex { $0.hasPrefix("*** ") }.map { Array(errors[$0...].prefix(80)) } ?? []
        let message =
            "\(name): timed out after \(timeout) s waiting for \(what); exit=\(process.status.map(String.init) ?? "running"), "
            + "\(output.count) stdout lines (last: \(output.last ?? "-")), stderr:\n"
            + (crash.isEmpty ? "" : crash.joined(separator: "\n") + "\n…\n")
            + errors.suffix(15).joined(separator: "\n")
        XCTFail(message, file: file, line: line)
        throw HarnessError(message: message)
    }

    /// Waits for a stderr line containing `text`.
    func waitForStderr(_ text: String, timeout: TimeInterval = 30, file: StaticString = #filePath, line: UInt = #line) throws {
        try wait("stderr containing '\(text)'", timeout: timeout, file: file, line: line) { _, errors, _ in
            errors.contains { $0.contains(text) } ? true : nil
        }
    }

    /// Waits for at least `count` stdout lines and returns them all.
    @discardableResult
    func waitForLines(_ count: Int, timeout: TimeInterval = 30, file: StaticString = #filePath, line: UInt = #line) throws -> [String] {
        try wait("\(count) stdout lines", timeout: timeout, file: file, line: line) { lines, _, _ in
            lines.count >= count ? lines : nil
        }
    }

    /// Waits for the process to exit (and its output to end) and returns its status.
    @discardableResult
    func waitForExit(timeout: TimeInterval = 30, file: StaticString = #filePath, line: UInt = #line) throws -> Int32 {
        if let status = process.waitForExit(timeout: timeout) { return status }
        return try wait("exit", timeout: 0, file: file, line: line) { _, _, _ in nil as Int32? }
    }

    func send(_ signal: Int32) { process.send(signal) }
    func writeLine(_ text: String) { process.writeLine(text) }
    func stop() { process.stop() }
}

struct HarnessError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
