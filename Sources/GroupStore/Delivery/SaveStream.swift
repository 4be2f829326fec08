import ServiceLifecycle

/// The saves delivered to one subscriber, in sequence order; see
/// ``GroupStore/GroupStore/saves()``.
///
/// A save counts as processed when the loop asks for the next one, and the
/// member's durable cursor never moves past a save that is not processed: if
/// the process dies while handling a save, that save is delivered again on the
/// next start (at least once across restarts; exactly once within a process).
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

    init(feed: SaveFeed, id: Int) {
        subscription = Subscription(feed: feed, id: id)
    }

    /// Removes the subscriber once no copy of its stream is left, so a
    /// dropped stream never holds the cursor back.
    final class Subscription: Sendable {
        let feed: SaveFeed
        let id: Int
        init(feed: SaveFeed, id: Int) {
            self.feed = feed
            self.id = id
        }
        deinit { feed.remove(id) }
    }

    public struct AsyncIterator: AsyncIteratorProtocol {
        let stream: SaveStream

        public mutating func next() async -> Save? {
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

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(stream: self)
    }

    /// Stops this subscription: its loop ends and it no longer holds back
    /// the member's cursor. (A stream no longer iterated keeps its place, so
    /// end the ones you drop.)
    public func cancel() {
        feed.remove(id)
    }
}
