import Metrics

/// The store's instruments, through swift-metrics (whatever backend the
/// application bootstrapped; none: they cost a no-op call). Every metric
/// carries the dimensions `group` (the group directory) and `member`.
///
/// | metric | kind | what |
/// |---|---|---|
/// | `groupstore_saves_published_total` | counter | payload files this member wrote |
/// | `groupstore_publish_failures_total` | counter | payloads not written (peers read the history) |
/// | `groupstore_payloads_skipped_total` | counter | payloads replaced by a newer one before they were written (commits faster than the publisher) |
/// | `groupstore_saves_merged_total` | counter | transactions of the group this member read from the history |
/// | `groupstore_saves_delivered_total` | counter | saves handed to this member's subscribers |
/// | `groupstore_history_fallbacks_total` | counter | times a subscriber behind the in-memory buffer read the history instead |
/// | `groupstore_wakeups_total` | counter | wake-ups that found nothing new (`found="false"`) and that delivered (`found="true"`) |
/// | `groupstore_inotify_overflows_total` | counter | inotify queue overflows (each followed by a rescan) |
/// | `groupstore_coalescing_intervals_total` | counter | intervals in which this member, behind commits coming faster than it merged them, read events at most once (its `-wal` watch taken off meanwhile) |
/// | `groupstore_member_lag` | gauge | how far this member is behind the group's head, in sequence numbers (head − cursor; numbers grow by the rows each transaction wrote, plus one), after each merge; 0 when caught up |
/// | `groupstore_merge_seconds` | timer | one merge: history read, observers notified, saves handed over |
struct GroupMetrics: Sendable {
    private let published: Counter
    private let publishFailures: Counter
    private let skipped: Counter
    private let merged: Counter
    private let delivered: Counter
    private let historyFallbacks: Counter
    private let emptyWakeups: Counter
    private let fruitfulWakeups: Counter
    private let overflows: Counter
    private let coalescings: Counter
    private let lag: Gauge
    private let merge: Timer

    init(group: String, member: String) {
        let dimensions = [("group", group), ("member", member)]
        published = Counter(label: "groupstore_saves_published_total", dimensions: dimensions)
        publishFailures = Counter(label: "groupstore_publish_failures_total", dimensions: dimensions)
        skipped = Counter(label: "groupstore_payloads_skipped_total", dimensions: dimensions)
        merged = Counter(label: "groupstore_saves_merged_total", dimensions: dimensions)
        delivered = Counter(label: "groupstore_saves_delivered_total", dimensions: dimensions)
        historyFallbacks = Counter(label: "groupstore_history_fallbacks_total", dimensions: dimensions)
        emptyWakeups = Counter(label: "groupstore_wakeups_total", dimensions: dimensions + [("found", "false")])
        fruitfulWakeups = Counter(label: "groupstore_wakeups_total", dimensions: dimensions + [("found", "true")])
        overflows = Counter(label: "groupstore_inotify_overflows_total", dimensions: dimensions)
        coalescings = Counter(label: "groupstore_coalescing_intervals_total", dimensions: dimensions)
        lag = Gauge(label: "groupstore_member_lag", dimensions: dimensions)
        merge = Timer(label: "groupstore_merge_seconds", dimensions: dimensions)
    }

    func payloadPublished() { published.increment() }
    func payloadFailed() { publishFailures.increment() }
    func payloadSkipped() { skipped.increment() }
    func fellBackToHistory() { historyFallbacks.increment() }
    func overflowed() { overflows.increment() }
    /// Commits came faster than the member merged them: it reads events at
    /// most once in the next interval, its `-wal` watch taken off meanwhile.
    func coalesced() { coalescings.increment() }

    /// A wake-up found something new (counted before it is handed over) or nothing.
    func woke(found: Bool) {
        (found ? fruitfulWakeups : emptyWakeups).increment()
    }

    /// One merge ended: how long it took.
    func merged(nanoseconds: Int64) {
        merge.recordNanoseconds(nanoseconds)
    }

    /// A batch of `count` transactions was read, `deliverable` of them for
    /// subscribers, leaving `lag` behind the group's head.
    func read(_ count: Int, deliverable: Int, lag: Int64) {
        merged.increment(by: Int64(count))
        delivered.increment(by: Int64(deliverable))
        self.lag.record(lag)
    }
}
