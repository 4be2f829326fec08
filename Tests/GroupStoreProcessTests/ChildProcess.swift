import Foundation
import XCTest

#if canImport(Glibc)
    import Glibc
#endif

/// A built executable run as a child process, its output collected line by line.
///
/// Waits are bounded and event-driven (a condition variable signalled as
/// output arrives or the process exits); a timeout fails with what was seen.
///
/// `@unchecked Sendable`: all mutable state is guarded by `condition`.
final class ChildProcess: @unchecked Sendable {
    let name: String
    private let process = Process()
    private let input = Pipe()
    private let condition = NSCondition()
    private var stdoutLines: [String] = []
    private var stderrLines: [String] = []
    private var openStreams = 2
    private var exitStatus: Int32?

    /// The directory holding the built executables (next to the test bundle).
    static let productsDirectory: URL = {
        let bundle = Bundle.main.bundleURL
        if FileManager.default.fileExists(atPath: bundle.appendingPathComponent("groupstore").path) { return bundle }
        return URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }()

    init(_ executable: String, _ arguments: [String], name: String? = nil) throws {
        self.name = name ?? executable
        process.executableURL = Self.productsDirectory.appendingPathComponent(executable)
        if executable.hasPrefix("/") { process.executableURL = URL(fileURLWithPath: executable) }
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = input
        collect(output, stream: 1)
        collect(errors, stream: 2)
        process.terminationHandler = { [weak self] process in
            guard let self else { return }
            self.condition.lock()
            self.exitStatus = process.terminationStatus
            self.condition.broadcast()
            self.condition.unlock()
        }
        try process.run()
    }

    var pid: Int32 { process.processIdentifier }

    /// Reads `pipe` on a thread of its own with blocking reads until EOF
    /// (dispatch-based `readabilityHandler` proved unreliable for short-lived children).
    private func collect(_ pipe: Pipe, stream: Int) {
        let handle = pipe.fileHandleForReading
        let thread = Thread { [self] in
            var buffer = Data()
            while true {
                let data = handle.availableData
                condition.lock()
                if data.isEmpty {
                    if !buffer.isEmpty { append(buffer, stream: stream) }
                    openStreams -= 1
                    condition.broadcast()
                    condition.unlock()
                    return
                }
                buffer.append(data)
                while let newline = buffer.firstIndex(of: 0x0A) {
                    append(buffer[buffer.startIndex..<newline], stream: stream)
                    buffer = Data(buffer[(newline + 1)...])
                }
                condition.broadcast()
                condition.unlock()
            }
        }
        thread.start()
    }

    private func append(_ line: Data, stream: Int) {
        let text = String(decoding: line, as: UTF8.self)
        if stream == 1 { stdoutLines.append(text) } else { stderrLines.append(text) }
    }

    /// Waits until `predicate` holds over (stdout lines, stderr lines, exit status).
    @discardableResult
    func wait<T>(
        _ what: String, timeout: TimeInterval, file: StaticString = #filePath, line: UInt = #line,
        until predicate: (_ stdout: [String], _ stderr: [String], _ exit: Int32?) -> T?
    ) throws -> T {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let result = predicate(stdoutLines, stderrLines, exitStatus) { return result }
            if !condition.wait(until: deadline) {
                if let result = predicate(stdoutLines, stderrLines, exitStatus) { return result }
                let message =
                    "\(name): timed out after \(timeout) s waiting for \(what); exit=\(exitStatus.map(String.init) ?? "running"), "
                    + "\(stdoutLines.count) stdout lines (last: \(stdoutLines.last ?? "-")), stderr:\n"
                    + stderrLines.suffix(15).joined(separator: "\n")
                XCTFail(message, file: file, line: line)
                throw HarnessError(message: message)
            }
        }
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

    /// Waits for the process to exit and returns its status.
    @discardableResult
    func waitForExit(timeout: TimeInterval = 30, file: StaticString = #filePath, line: UInt = #line) throws -> Int32 {
        try wait("exit", timeout: timeout, file: file, line: line) { _, _, status in
            // Output may still be draining after exit: wait for both streams too.
            status != nil && openStreams == 0 ? status : nil
        }
    }

    var output: [String] { condition.withLock { stdoutLines } }
    var errors: [String] { condition.withLock { stderrLines } }

    func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    func writeLine(_ text: String) {
        input.fileHandleForWriting.write(Data((text + "\n").utf8))
    }

    /// Ends the process if still running (tear-down).
    func stop() {
        if process.isRunning {
            send(SIGKILL)
            process.waitUntilExit()
        }
    }
}

struct HarnessError: Error, CustomStringConvertible {
    var message: String
    var description: String { message }
}
