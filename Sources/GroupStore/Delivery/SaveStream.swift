import ServiceLifecycle
import Synchronization

/// The saves delivered to one subscriber, in sequence order; see
/// ``GroupStore/GroupStore/saves()``.
///
/// A save counts as processed when the loop asks for the next one, and the
/// member's durable cursor never moves past a save that is not processed: a
/// graceful stop is exactly once; if the process dies while handling a save,
/// that save is delivered again on the next start.
///
/// The loop ends when the store closes, when the task iterating is cancelled,
/// or when it is told to shut down gracefully (it runs in a swift-service-
/// lifecycle `ServiceGroup` that received SIGTERM), so a service whose `run()`
/// is a `for await save in store.saves()` loop stops in any service order.
/// Iterate one stream from one task at a time.
public struct SaveStream: AsyncSequence, Sendable {
    public typealias Element = Save

    let subscription: Subscription
    var feed: SaveFeed { subscription.feed }
    var id: Int { subscription.id }

    init(feed: SaveFeed, id: Int, beforeFirst: @escaping @Sendable () async -> Void = {}) {
        subscription = Subscription(feed: feed, id: id, beforeFirst: beforeFirst)
    }

    /// Tells the feed once no copy of its stream is left: a stream dropped
    /// after its loop ended unfinished (cancelled, shut down) keeps its place
    /// for the next subscriber; any other no longer holds the cursor back.
    final class Subscription: Sendable {
        let feed: SaveFeed
        let id: Int
        /// Run once, when the stream is first asked for a save (it starts a
        /// store that was never run).
        private let beforeFirst: Mutex<(@Sendable () async -> Void)?>
        init(feed: SaveFeed, id: Int, beforeFirst: @escaping @Sendable () async -> Void) {
            self.feed = feed
            self.id = id
            self.beforeFirst = Mutex(beforeFirst)
        }
        deinit { feed.dropped(id) }

        func runBeforeFirst() async {
            guard
                let body = beforeFirst.withLock({ value in
                    defer { value = nil }
                    return value
                })
            else { return }
            await body()
        }
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let stream: SaveStream

        public mutating func next() async -> Save? {
            await stream.subscription.runBeforeFirst()
            let feed = stream.feed
            let id = stream.id
            return await withTaskCancellationHandler {
                await withGracefulShutdownHandler {
                    await feed.next(id)
                } onGracefulShutdown: {
                    feed.end(id)
                }
            } onCancel: {
                feed.end(id)
            }
        }
    }

    /// For the cloud bridge (same package): the next save and every one
    /// that follows it at once, up to `limit`, processed together when it
    /// asks again; `nil` once the stream ends (as for ``AsyncIterator``).
    package func nextBatch(limit: Int) async -> [Save]? {
        await subscription.runBeforeFirst()
        let (feed, id) = (self.feed, self.id)
        return await withTaskCancellationHandler {
            await withGracefulShutdownHandler {
                await feed.nextBatch(id, limit: limit)
            } onGracefulShutdown: {
                feed.end(id)
            }
        } onCancel: {
            feed.end(id)
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(stream: self)
    }

    /// Stops this subscription: its loop ends and it no longer holds back
    /// the member's cursor, not even the save in its hand. (A stream kept but
    /// no longer iterated keeps its place; a loop that ended because its task
    /// was cancelled or its service shut down keeps it for the next
    /// subscriber.)
    public func cancel() {
        feed.remove(id)
    }
}
