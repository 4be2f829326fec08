/// The saves delivered to one subscriber, in sequence order; see
/// ``GroupStore/GroupStore/saves()``.
///
/// A save counts as processed when the loop asks for the next one, and the
/// member's durable cursor never moves past a save that is not processed: if
/// the process dies while handling a save, that save is delivered again on the
/// next start (at least once across restarts; exactly once within a process).
public struct SaveStream: AsyncSequence, Sendable {
    public typealias Element = Save

    let base: AsyncStream<Save>
    let id: Int
    let broadcaster: SaveBroadcaster

    public struct AsyncIterator: AsyncIteratorProtocol {
        var base: AsyncStream<Save>.AsyncIterator
        let id: Int
        let broadcaster: SaveBroadcaster
        var inHand: Int64?

        public mutating func next() async -> Save? {
            if let seq = inHand {
                broadcaster.processed(seq, by: id)
                inHand = nil
            }
            guard let save = await base.next() else { return nil }
            inHand = save.seq
            return save
        }
    }

    public func makeAsyncIterator() -> AsyncIterator {
        AsyncIterator(base: base.makeAsyncIterator(), id: id, broadcaster: broadcaster)
    }
}
