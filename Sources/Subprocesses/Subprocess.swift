import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A child process whose output is collected line by line, for the demo,
/// the benchmark and the multi-process tests.
///
/// Each output stream is read by a thread of its own with blocking reads
/// (dispatch-based `readabilityHandler` proved unreliable for short-lived
/// children). Waits are bounded and event-driven: a condition variable is
/// signalled as lines arrive and when the process exits.
///
/// `@unchecked Sendable`: all mutable state is guarded by `condition`.
public final class Subprocess: @unchecked Sendable {
    /// Which stream a line came from.
    public enum Stream: Sendable { case output, error }

    /// A name for messages.
    public let name: String
    private let process = Process()
    private let input = Pipe()
    private let condition = NSCondition()
    private var outputLines: [String] = []
    private var errorLines: [String] = []
    private var openStreams = 2
    private var exitStatus: Int32?
    private let onLine: (@Sendable (Stream, String) -> Void)?

    /// Starts `executable` with `arguments`; `onLine` sees each line as it arrives.
    public init(
        _ executable: URL, _ arguments: [String], name: String? = nil, onLine: (@Sendable (Stream, String) -> Void)? = nil
    ) throws {
        self.name = name ?? executable.lastPathComponent
        self.onLine = onLine
        process.executableURL = executable
        process.arguments = arguments
        let output = Pipe()
        let errors = Pipe()
        process.standardOutput = output
        process.standardError = errors
        process.standardInput = input
        process.terminationHandler = { [weak self] process in
            guard let self else { return }
            self.condition.withLock {
                self.exitStatus = process.terminationStatus
                self.condition.broadcast()
            }
        }
        try process.run()
        collect(output.fileHandleForReading, .output)
        collect(errors.fileHandleForReading, .error)
    }

    /// The directory of the running executable (where sibling products are built).
    public static var productsDirectory: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }

    public var pid: Int32 { process.processIdentifier }

    private func collect(_ handle: FileHandle, _ stream: Stream) {
        Thread { [self] in
            var buffer = Data()
            while true {
                let data = handle.availableData
                var lines: [String] = []
                if !data.isEmpty {
                    buffer.append(data)
                    while let newline = buffer.firstIndex(of: 0x0A) {
                        lines.append(String(decoding: buffer[buffer.startIndex..<newline], as: UTF8.self))
                        buffer = Data(buffer[(newline + 1)...])
                    }
                } else if !buffer.isEmpty {
                    lines.append(String(decoding: buffer, as: UTF8.self))
                }
                for line in lines { onLine?(stream, line) }
                condition.withLock {
                    if stream == .output { outputLines += lines } else { errorLines += lines }
                    if data.isEmpty { openStreams -= 1 }
                    condition.broadcast()
                }
                if data.isEmpty { return }
            }
        }.start()
    }

    /// Waits until `predicate` over (stdout lines, stderr lines, exit status)
    /// returns a value, or `timeout` passes (then `nil`).
    public func wait<T>(timeout: TimeInterval, until predicate: (_ output: [String], _ errors: [String], _ exit: Int32?) -> T?) -> T? {
        let deadline = Date(timeIntervalSinceNow: timeout)
        condition.lock()
        defer { condition.unlock() }
        while true {
            if let result = predicate(outputLines, errorLines, exitStatus) { return result }
            if !condition.wait(until: deadline) { return predicate(outputLines, errorLines, exitStatus) }
        }
    }

    /// Waits for the exit and the end of both streams; the status, or `nil` on timeout.
    public func waitForExit(timeout: TimeInterval) -> Int32? {
        wait(timeout: timeout) { _, _, status in status != nil && openStreams == 0 ? status : nil }
    }

    /// Waits for a stderr line containing `text`.
    public func waitForError(containing text: String, timeout: TimeInterval) -> Bool {
        wait(timeout: timeout) { _, errors, _ in errors.contains { $0.contains(text) } ? true : nil } ?? false
    }

    public var output: [String] { condition.withLock { outputLines } }
    public var errors: [String] { condition.withLock { errorLines } }
    public var status: Int32? { condition.withLock { exitStatus } }

    public func send(_ signal: Int32) {
        kill(process.processIdentifier, signal)
    }

    public func writeLine(_ text: String) {
        input.fileHandleForWriting.write(Data((text + "\n").utf8))
    }

    /// Kills the process if it still runs, and reaps it.
    public func stop() {
        if process.isRunning {
            send(SIGKILL)
            process.waitUntilExit()
        }
    }
}
