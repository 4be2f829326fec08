import ArgumentParser
import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The physical limit: a bare temp-file + rename publisher, no library.
/// Each file holds its publication time in µs.
struct InotifyWriterRole: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "inotify-writer", shouldDisplay: false)

    @Option var directory: String
    @Option var count: Int
    @Option var intervalUs: Double

    func run() throws {
        var next = monotonicSeconds()
        for index in 0..<count {
            let temp = directory + "/tmp/\(index)"
            let text = Array(String(ProcessFacts.nowMicros).utf8) + [UInt8](repeating: 32, count: 180)
            let fd = open(temp, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
            _ = text.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            close(fd)
            rename(temp, directory + "/in/\(index)")
            next += intervalUs / 1e6
            sleepUntil(next)
        }
    }
}

/// Reads each file renamed into `in/` through a blocking inotify descriptor
/// and prints `L <latency µs>`.
struct InotifyReaderRole: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "inotify-reader", shouldDisplay: false)

    @Option var directory: String
    @Option var count: Int

    func run() throws {
        let fd = inotify_init1(CInt(IN_CLOEXEC))
        guard fd >= 0, inotify_add_watch(fd, directory + "/in", UInt32(IN_MOVED_TO)) >= 0 else {
            throw ValidationError("cannot watch \(directory)/in")
        }
        FileHandle.standardError.write(Data("reader ready\n".utf8))
        var buffer = [UInt8](repeating: 0, count: 65536)
        var content = [UInt8](repeating: 0, count: 512)
        var seen = 0
        var latencies: [Double] = []
        while seen < count {
            let length = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
            guard length > 0 else { continue }
            var offset = 0
            while offset < length {
                let nameLength = buffer.withUnsafeBytes { Int($0.loadUnaligned(fromByteOffset: offset + 12, as: UInt32.self)) }
                let name = String(decoding: buffer[(offset + 16)..<(offset + 16 + nameLength)].prefix { $0 != 0 }, as: UTF8.self)
                offset += 16 + nameLength
                let file = open(directory + "/in/" + name, O_RDONLY)
                let got = content.withUnsafeMutableBytes { read(file, $0.baseAddress, $0.count) }
                close(file)
                let now = ProcessFacts.nowMicros
                let stamp = Double(String(decoding: content[0..<max(got, 0)].prefix { $0 != 32 }, as: UTF8.self)) ?? now
                latencies.append(now - stamp)
                seen += 1
            }
        }
        for latency in latencies { emit("L \(latency)") }
    }
}
