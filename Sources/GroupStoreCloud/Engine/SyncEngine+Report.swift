import Foundation
import GRDB
import Logging

extension SyncEngine {
    /// Tells the remote what this host is at the end of a sync
    /// (``CloudHostReport``), when it says something new or
    /// ``CloudSyncConfiguration/reportInterval`` passed since the last report: a bridge idling on push hints adds no
    /// transaction per sync. News of how far it has read, and nothing else,
    /// waits ``CloudSyncConfiguration/progressInterval``: a bridge fetching
    /// every change adds no transaction per change either. A report that
    /// fails is logged and tried again after the next sync; it never fails the sync.
    func reportHost(_ summary: CloudSyncSummary) async {
        let parked = (try? readDatabase { try Int.fetchOne($0, sql: "SELECT count(*) FROM groupstore_cloud_parked") ?? 0 }) ?? 0
        var tokens: [String: String] = [:]
        for (zone, token) in state.tokens { if let token = token.value ?? nil { tokens[zone.description] = token.rawValue } }
        let limits = CloudHostReport.limits
        var report = CloudHostReport(
            host: Self.cut(configuration.hostName, to: limits.host),
            appVersion: configuration.appVersion.map { Self.cut($0, to: limits.appVersion) },
            tokens: tokens, pending: summary.pending, parked: parked, lastError: summary.error.map { Self.cut($0, to: limits.error) })
        report.syncedAt = summary.error == nil ? summary.finishedAt : state.reported.report?.syncedAt
        let now = Date()
        // When the last sync ended is new each time: what is new is the rest.
        var unchanged = report
        unchanged.syncedAt = state.reported.report?.syncedAt
        let elapsed = now.timeIntervalSince(state.reported.at)
        if state.reported.report == unchanged, elapsed < configuration.reportInterval { return }
        var movedOnly = unchanged
        movedOnly.tokens = state.reported.report?.tokens ?? [:]
        if state.reported.report == movedOnly, elapsed < min(configuration.progressInterval, configuration.reportInterval) { return }
        do {
            try await remote.report(report)
            state.reported = (report, now)
        } catch {
            logger.info("cannot report this host to the fleet view", metadata: ["error": "\(error)"])
        }
    }

    /// `text`'s first characters that fit in `bytes` bytes of UTF-8.
    static func cut(_ text: String, to bytes: Int) -> String {
        var kept = ""
        var count = 0
        for character in text {
            count += character.utf8.count
            guard count <= bytes else { break }
            kept.append(character)
        }
        return kept
    }
}
