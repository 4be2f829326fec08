#if Gateway
    import NIOCore
    import Synchronization

    /// The open connections of a gateway, at most ``limit`` of them, so that
    /// connections cannot use up the process's file descriptors (and
    /// `/health` keeps answering while someone tries).
    ///
    /// A connection is *waiting* while it has no request under way (before its
    /// first request's head is complete, and between requests on a kept-alive
    /// connection) and *busy* otherwise (a request being answered, a push
    /// connection). At the cap, a new connection closes the connection that has
    /// waited the longest; when none waits, the new one is closed.
    ///
    /// ```
    /// accept ─▶ admit ─▶ waiting ─▶ busy (head read; a request; a push connection)
    ///             │        ▲          │
    ///             │        └── idle ◀─┘ (its response written)
    ///             └─ at the cap: close the longest waiting, or the new one
    /// ```
    final class ConnectionCap: Sendable {
        /// What ``admit(_:)`` decided.
        enum Admission {
            /// The connection may stay.
            case admitted
            /// The connection may stay; this one, which waited the longest, is to be closed.
            case admittedClosing(any Channel)
            /// The connection is to be closed: every connection is busy.
            case refused
        }

        let limit: Int
        private let state = Mutex(State())

        private struct Entry {
            let channel: any Channel
            /// When it began to wait (a number of ``State/clock``), or `nil` while busy.
            var waitingSince: UInt64?
        }

        private struct State {
            var entries: [ObjectIdentifier: Entry] = [:]
            /// Waiting connections in the order they began to wait; stale items
            /// (the connection is busy again, or gone) are skipped and dropped.
            var waiting: [(id: ObjectIdentifier, since: UInt64)] = []
            var head = 0
            var clock: UInt64 = 0

            /// Removes and returns the connection that waited the longest.
            mutating func popLongestWaiting() -> (any Channel)? {
                while head < waiting.count {
                    let (id, since) = waiting[head]
                    head += 1
                    if let entry = entries[id], entry.waitingSince == since {
                        entries[id] = nil
                        return entry.channel
                    }
                }
                return nil
            }

            mutating func markWaiting(_ id: ObjectIdentifier) {
                guard entries[id] != nil else { return }
                clock += 1
                entries[id]?.waitingSince = clock
                waiting.append((id, clock))
                // Drop what was read and the stale items once they outnumber the connections.
                if waiting.count - head > 2 * entries.count + 1024 || head > 4096 {
                    waiting = waiting[head...].filter { entries[$0.id]?.waitingSince == $0.since }
                    head = 0
                }
            }
        }

        init(limit: Int) {
            self.limit = max(1, limit)
        }

        /// A new connection: admitted (waiting), possibly closing another; or refused.
        func admit(_ channel: any Channel) -> Admission {
            let id = ObjectIdentifier(channel)
            return state.withLock { state in
                var closing: (any Channel)?
                if state.entries.count >= limit {
                    guard let longest = state.popLongestWaiting() else { return .refused }
                    closing = longest
                }
                state.entries[id] = Entry(channel: channel, waitingSince: nil)
                state.markWaiting(id)
                return closing.map { .admittedClosing($0) } ?? .admitted
            }
        }

        /// The connection has a request under way (or is a push connection).
        func busy(_ channel: any Channel) {
            let id = ObjectIdentifier(channel)
            state.withLock { state in
                if state.entries[id] != nil { state.entries[id]?.waitingSince = nil }
            }
        }

        /// The connection answered its requests and waits for another.
        func waiting(_ channel: any Channel) {
            let id = ObjectIdentifier(channel)
            state.withLock { $0.markWaiting(id) }
        }

        /// The connection closed.
        func closed(_ channel: any Channel) {
            let id = ObjectIdentifier(channel)
            state.withLock { state in
                // Only the entry of this channel: an identifier may be reused once a channel is freed.
                if let entry = state.entries[id], entry.channel === channel { state.entries[id] = nil }
            }
        }

        /// The connections open now.
        var count: Int { state.withLock { $0.entries.count } }
    }
#endif  // Gateway
