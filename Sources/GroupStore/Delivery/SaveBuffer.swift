/// The saves a ``SaveFeed`` keeps in memory, in sequence order: each
/// subscriber's next save is found by binary search, and saves are dropped
/// from the front without moving the rest.
///
/// A subscriber asks for its next save once per save, and the feed drops
/// what every subscriber has processed each time: with an array searched
/// from the start and shifted on each drop, that cost grew with the buffer,
/// so a subscriber that fell a little behind (a full buffer, 1,024 saves)
/// slowed down and fell further behind.
struct SaveBuffer {
    /// `saves[start...]` are kept; the dropped prefix is removed in bulk
    /// once it is at least half of the array.
    private var saves: [Save] = []
    private var start = 0

    var count: Int { saves.count - start }
    var isEmpty: Bool { count == 0 }

    /// The oldest save kept.
    var first: Save? { isEmpty ? nil : saves[start] }

    /// Adds `newer`, whose sequence numbers are above every kept one.
    mutating func append(contentsOf newer: [Save]) {
        saves += newer
    }

    /// Keeps `saves` only.
    mutating func replace(with saves: [Save]) {
        self.saves = saves
        start = 0
    }

    /// The first save after `seq`, if one is kept.
    func first(after seq: Int64) -> Save? {
        let index = firstIndex(after: seq)
        return index < saves.count ? saves[index] : nil
    }

    /// Drops every save up to `seq`; returns the newest dropped, if any.
    mutating func drop(through seq: Int64) -> Int64? {
        let end = firstIndex(after: seq)
        guard end > start else { return nil }
        let last = saves[end - 1].seq
        advance(to: end)
        return last
    }

    /// Drops the `count` oldest saves; returns the newest dropped.
    mutating func dropOldest(_ count: Int) -> Int64? {
        guard count > 0, !isEmpty else { return nil }
        let end = start + min(count, self.count)
        let last = saves[end - 1].seq
        advance(to: end)
        return last
    }

    /// The index of the first kept save after `seq` (`saves.count` if none).
    private func firstIndex(after seq: Int64) -> Int {
        var low = start
        var high = saves.count
        while low < high {
            let middle = (low + high) / 2
            if saves[middle].seq <= seq { low = middle + 1 } else { high = middle }
        }
        return low
    }

    private mutating func advance(to end: Int) {
        start = end
        if start == saves.count {
            saves.removeAll(keepingCapacity: true)
            start = 0
        } else if start >= 64 && start * 2 >= saves.count {
            saves.removeFirst(start)
            start = 0
        }
    }
}
