import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A demo process started by the launcher; its stdout lines are echoed with a
/// label as they arrive and kept for the summary.
///
/// `@unchecked Sendable`: mutable state is guarded by `condition`.
final class DemoChild: @unchecked Sendable {
    let label: String
    private let process = Process()
    private let input = Pipe()
    private let condition = NSCondition()
    private var lines: [String] = []
    private var errors: [String] = []
    private var openStreams = 2
    private let echo: @Sendable (String) -> Void

    init(_ executable: String, _ arguments: [String], label: String, echo: @escaping @Sendable (String) -> Void) throws {
        self.label = label
        self.echo = echo
        process.executableURL = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
            .appendingPathComponent(executable)
        process.arguments = arguments
        let output = Pipe()
        let errorOutput = Pipe()
        process.standardOutput = output
        process.standardError = errorOutput
        process.standardInput = input
        try process.run()
        read(output.fileHandleForReading, isError: false)
        read(errorOutput.fileHandleForReading, isError: true)
    }

    private func read(_ handle: FileHandle, isError: Bool) {
        Thread { [self] in
            var buffer = Data()
            while true {
                let data = handle.availableData
                if data.isEmpty { break }
                buffer.append(data)
                while let newline = buffer.firstIndex(of: 0x0A) {
                    let line = String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self)
                    buffer = Data(buffer[(newline + 1)...])
                    condition.withLock {
                        if isError { errors.append(line) } else { lines.append(line) }
                        condition.broadcast()
                    }
                    if !isError { echo("[\(label)] \(line)") }
                }
            }
            condition.withLock {
                openStreams -= 1
                condition.broadcast()
            }
        }.start()
    }

    /// Waits until a stderr line contains `text`.
    func waitForStderr(_ text: String, timeout: TimeInterval) -> Bool {
        wait(timeout) { self.errors.contains { $0.contains(text) } }
    }

    /// Waits for exit (and all output); returns the status, or nil on timeout.
    func waitForExit(timeout: TimeInterval) -> Int32? {
        guard wait(timeout, { self.openStreams == 0 }) else { return nil }
        process.waitUntilExit()
        return process.terminationStatus
    }

    private func wait(_ timeout: TimeInterval, _ done: () -> Bool) -> Bool {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while !done() {
            if !condition.wait(until: deadline) { return done() }
        }
        return true
    }

    var output: [String] { condition.withLock { lines } }
    var errorOutput: [String] { condition.withLock { errors } }

    func send(_ signal: Int32) { kill(process.processIdentifier, signal) }
    func writeLine(_ text: String) { input.fileHandleForWriting.write(Data((text + "\n").utf8)) }

    func stop() {
        if process.isRunning {
            send(SIGKILL)
            process.waitUntilExit()
        }
    }
}
