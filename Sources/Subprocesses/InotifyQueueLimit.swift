import Foundation

/// The kernel's inotify queue limit (`fs.inotify.max_queued_events`), which
/// applies to inotify instances created while it is set. Lowering it while a
/// process starts lets a test overflow that process's queue with far fewer
/// events than the default 16,384.
public enum InotifyQueueLimit {
    static let path = "/proc/sys/fs/inotify/max_queued_events"

    /// Runs `body` (which should start the process whose queue is to be small)
    /// with the limit set to `limit`, then restores it.
    /// - Returns: whether the limit could be lowered (it needs root).
    public static func lowered(to limit: Int, while body: () throws -> Void) rethrows -> Bool {
        guard let original = try? String(contentsOfFile: path, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines),
            (try? "\(limit)\n".write(toFile: path, atomically: false, encoding: .utf8)) != nil
        else {
            try body()
            return false
        }
        defer { try? (original + "\n").write(toFile: path, atomically: false, encoding: .utf8) }
        try body()
        return true
    }
}
