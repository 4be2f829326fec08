import Metrics

/// The gateway's instruments, through swift-metrics (whatever backend the
/// application bootstrapped; none: they cost a no-op call).
///
/// | metric | kind | what |
/// |---|---|---|
/// | `groupstore_gateway_requests_total` | counter | requests, by `operation` and `status` (the HTTP status) |
/// | `groupstore_gateway_request_seconds` | timer | how long a request took, by `operation` |
/// | `groupstore_gateway_bridges` | gauge | push connections open (clients connected) |
/// | `groupstore_gateway_hints_total` | counter | push hints sent |
/// | `groupstore_gateway_pool_leases` | gauge | operations holding or waiting for a database connection |
/// | `groupstore_gateway_pool_size` | gauge | the most pooled connections |
/// | `groupstore_gateway_connections` | gauge | connections open (HTTP and push) |
/// | `groupstore_gateway_refused_total` | counter | requests and connections refused before reaching the database, by `reason` |
/// | `groupstore_gateway_fetches_total` | counter | fetches answered, by `answered`: `memory` (``FetchMemory``: kept, or shared with a read under way) or `database` |
/// | `groupstore_gateway_commit_to_device_seconds` | timer | for a fetch answered with changes: from the notice of its zone's last commit to the answer |
///
/// The reasons of a refusal: `token` (401), `rate` (429, requests and push
/// subscriptions), `size` (413), `memory` (503: the memory for request
/// bodies is taken), `connections` (a connection closed at the cap),
/// `header-timeout` (no request head in time), `parse` (a request the decoder
/// cannot read, 400), `push-connections` (too many push connections for one identity).
struct GatewayMetrics: Sendable {
    private let bridges = Gauge(label: "groupstore_gateway_bridges")
    private let open = Gauge(label: "groupstore_gateway_connections")
    private let hints = Counter(label: "groupstore_gateway_hints_total")
    private let leases = Gauge(label: "groupstore_gateway_pool_leases")
    private let size = Gauge(label: "groupstore_gateway_pool_size")
    private let fromMemoryCount = Counter(label: "groupstore_gateway_fetches_total", dimensions: [("answered", "memory")])
    private let fromDatabaseCount = Counter(label: "groupstore_gateway_fetches_total", dimensions: [("answered", "database")])
    private let commitToDevice = Timer(label: "groupstore_gateway_commit_to_device_seconds")

    /// A request ended with `status` after `elapsed`.
    func request(_ operation: String, status: Int, elapsed: Duration) {
        Counter(label: "groupstore_gateway_requests_total", dimensions: [("operation", operation), ("status", String(status))])
            .increment()
        Timer(label: "groupstore_gateway_request_seconds", dimensions: [("operation", operation)]).record(elapsed)
    }

    func refused(_ reason: String) {
        Counter(label: "groupstore_gateway_refused_total", dimensions: [("reason", reason)]).increment()
    }

    /// A fetch answered from the gateway's memory, or by the database; `lag`:
    /// for an answer with changes, since the notice of its zone's last commit.
    func fetched(fromMemory: Bool, lag: Duration? = nil) {
        (fromMemory ? fromMemoryCount : fromDatabaseCount).increment()
        if let lag { commitToDevice.record(lag) }
    }

    func connected(_ count: Int) { bridges.record(count) }
    func connections(_ count: Int) { open.record(count) }
    func hinted(_ count: Int) { if count > 0 { hints.increment(by: Int64(count)) } }
    func pool(leases: Int, size: Int) {
        self.leases.record(leases)
        self.size.record(size)
    }
}

extension Timer {
    /// Records `duration` (in nanoseconds, as a timer takes it).
    fileprivate func record(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        recordNanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
