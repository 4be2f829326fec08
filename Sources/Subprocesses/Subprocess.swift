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
/// The child is started with `posix_spawn`, not Foundation's `Process`:
/// on Linux, `Process.run()` scans `/proc/self/fd` with a 256-byte copy of
/// each directory entry and crashes the parent now and then when one ends
/// at the edge of a page (swiftlang/swift-corelibs-foundation#5472, seen
/// here in about one full test run in three). The child gets the pipes as
/// its standard streams and no other descriptor of the parent.
///
/// `@unchecked Sendable`: all mutable state is guarded by `condition`; `pid`
/// and the pipes' handles are set once in `init`.
public final class Subprocess: @unchecked Sendable {
    /// Which stream a line came from.
    public enum Stream: Sendable { case output, error }

    /// A name for messages.
    public let name: String
    public let pid: Int32
    private let input: FileHandle
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
        // Each pipe: [read end, write end], closed on exec in the parent's other children.
        var pipes: [[Int32]] = []
        for _ in 0..<3 {
            var ends: [Int32] = [0, 0]
            guard pipe(&ends) == 0 else { throw Self.failure("pipe", errno) }
            for fd in ends { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
            pipes.append(ends)
        }
        var actions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&actions)
        defer { posix_spawn_file_actions_destroy(&actions) }
        posix_spawn_file_actions_adddup2(&actions, pipes[0][0], 0)
        posix_spawn_file_actions_adddup2(&actions, pipes[1][1], 1)
        posix_spawn_file_actions_adddup2(&actions, pipes[2][1], 2)
        // No other descriptor of the parent (a member's lock, a database) reaches the child. It fails only
        // before glibc 2.34, which lacks it: then the descriptors marked close-on-exec are still kept from it.
        _ = Self.addCloseFrom(&actions, 3)
        let argv = ([executable.path] + arguments).map { strdup($0) } + [nil]
        defer { for pointer in argv { free(pointer) } }
        var child: pid_t = 0
        let spawned = posix_spawn(&child, executable.path, &actions, nil, argv, environ)
        close(pipes[0][0])
        close(pipes[1][1])
        close(pipes[2][1])
        guard spawned == 0 else {
            for fd in [pipes[0][1], pipes[1][0], pipes[2][0]] { close(fd) }
            throw Self.failure("cannot start \(executable.path)", spawned)
        }
        pid = child
        input = FileHandle(fileDescriptor: pipes[0][1], closeOnDealloc: true)
        collect(FileHandle(fileDescriptor: pipes[1][0], closeOnDealloc: true), .output)
        collect(FileHandle(fileDescriptor: pipes[2][0], closeOnDealloc: true), .error)
        reap()
    }

    /// `posix_spawn_file_actions_addclosefrom_np` (glibc 2.34), which the
    /// Glibc module does not export.
    @_silgen_name("posix_spawn_file_actions_addclosefrom_np")
    private static func addCloseFrom(_ actions: UnsafeMutablePointer<posix_spawn_file_actions_t>, _ from: Int32) -> Int32

    private static func failure(_ what: String, _ code: Int32) -> NSError {
        NSError(
            domain: NSPOSIXErrorDomain, code: Int(code),
            userInfo: [NSLocalizedDescriptionKey: "\(what): \(String(cString: strerror(code)))"])
    }

    /// Waits for the child on a thread of its own; its status as `Process`
    /// gives it: the exit code, or the signal that ended it.
    private func reap() {
        Thread { [self] in
            var status: Int32 = 0
            while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
            let low = status & 0x7f
            let code = low == 0 ? (status >> 8) & 0xff : low
            condition.withLock {
                exitStatus = code
                condition.broadcast()
            }
        }.start()
    }

    /// The directory of the running executable (where sibling products are built).
    public static var productsDirectory: URL {
        URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
    }

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
        // Not once it was reaped: the number may be another process's by now.
        condition.withLock { if exitStatus == nil { kill(pid, signal) } }
    }

    public func writeLine(_ text: String) {
        input.write(Data((text + "\n").utf8))
    }

    /// Kills the process if it still runs, and waits until it is reaped.
    public func stop() {
        send(SIGKILL)
        condition.withLock {
            while exitStatus == nil { condition.wait() }
        }
    }
}
