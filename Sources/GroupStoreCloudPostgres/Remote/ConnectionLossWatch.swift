#if Postgres
    import PostgresNIO
    import Synchronization

    /// Tells the statements waiting on a connection that it closed, with one
    /// observer per connection on its `closeFuture`.
    ///
    /// An observer per statement would stay on the `closeFuture`, with what its
    /// closure holds, until the connection closes; a pooled connection of a busy
    /// bridge lives for days, so that was memory growing with every statement.
    /// Here each statement adds a waiter and removes it when answered.
    package final class ConnectionLossWatch: Sendable {
        static let shared = ConnectionLossWatch()

        package init() {}

        private struct Watched {
            /// Held so that the connection, and so its identifier, outlives its entry.
            let connection: PostgresConnection
            var waiters: [UInt64: @Sendable () -> Void] = [:]
        }

        private let watched = Mutex<[ObjectIdentifier: Watched]>([:])
        private let nextToken = Atomic<UInt64>(0)

        /// Calls `lost` once `connection` has closed (at once if it has
        /// already), unless ``cancel(_:of:)`` comes first.
        package func onClose(of connection: PostgresConnection, _ lost: @escaping @Sendable () -> Void) -> UInt64 {
            let token = nextToken.add(1, ordering: .relaxed).newValue
            let key = ObjectIdentifier(connection)
            let isNew = watched.withLock { watched in
                let isNew = watched[key] == nil
                if isNew { watched[key] = Watched(connection: connection) }
                watched[key]!.waiters[token] = lost
                return isNew
            }
            // Once a connection (its entry goes when it closes: a later statement on a
            // closed connection registers again, and is told at once).
            if isNew { connection.closeFuture.whenComplete { _ in self.closed(key) } }
            return token
        }

        /// The statement of `token` was answered.
        package func cancel(_ token: UInt64, of connection: PostgresConnection) {
            _ = watched.withLock { $0[ObjectIdentifier(connection)]?.waiters.removeValue(forKey: token) }
        }

        /// How many connections are watched, and how many statements wait on them.
        package var count: (connections: Int, waiting: Int) {
            watched.withLock { watched in (watched.count, watched.values.reduce(0) { $0 + $1.waiters.count }) }
        }

        private func closed(_ key: ObjectIdentifier) {
            let waiters = watched.withLock { $0.removeValue(forKey: key)?.waiters.values.map { $0 } ?? [] }
            for lost in waiters { lost() }
        }
    }
#endif  // Postgres
