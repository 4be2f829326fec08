import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// A sorted sample of measurements.
struct Distribution: Sendable {
    let sorted: [Double]

    init(_ values: [Double]) { sorted = values.sorted() }

    var count: Int { sorted.count }
    var median: Double { percentile(0.5) }
    var p99: Double { percentile(0.99) }
    var max: Double { sorted.last ?? .nan }

    func percentile(_ p: Double) -> Double {
        guard !sorted.isEmpty else { return .nan }
        return sorted[Swift.min(sorted.count - 1, Int((Double(sorted.count) * p).rounded(.down)))]
    }
}

/// Process facts for the roles.
enum ProcessFacts {
    /// User + system CPU seconds used by this process so far.
    static var cpuSeconds: Double {
        var usage = rusage()
        getrusage(__rusage_who_t(RUSAGE_SELF.rawValue), &usage)
        return Double(usage.ru_utime.tv_sec) + Double(usage.ru_utime.tv_usec) / 1e6 + Double(usage.ru_stime.tv_sec)
            + Double(usage.ru_stime.tv_usec) / 1e6
    }

    /// A `/proc/self/status` field in kB (`VmRSS`, `VmHWM`, `RssAnon`).
    static func memoryKB(_ field: String) -> Int {
        guard let status = try? String(contentsOfFile: "/proc/self/status", encoding: .utf8) else { return 0 }
        for line in status.split(separator: "\n") where line.hasPrefix(field + ":") {
            return Int(line.split(separator: " ", omittingEmptySubsequences: true).dropFirst().first ?? "0") ?? 0
        }
        return 0
    }

    /// Unix time in microseconds (CLOCK_REALTIME: one clock for all processes).
    static var nowMicros: Double { Date().timeIntervalSince1970 * 1e6 }
}

/// Writes one line to stdout now (roles report to the orchestrator line by line).
func emit(_ line: String) {
    FileHandle.standardOutput.write(Data((line + "\n").utf8))
}

/// Sleeps the calling (dedicated) thread until `deadline` in CLOCK_MONOTONIC seconds.
func sleepUntil(_ deadline: Double) {
    let remaining = deadline - monotonicSeconds()
    if remaining > 0 { usleep(UInt32(remaining * 1e6)) }
}

/// Seconds on the monotonic clock (CLOCK_MONOTONIC, through Dispatch: with
/// NIO imported beside Glibc, `timespec` is ambiguous to the compiler).
func monotonicSeconds() -> Double {
    Double(DispatchTime.now().uptimeNanoseconds) / 1e9
}
