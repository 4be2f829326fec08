/// Folds a transaction's row changes into per-entity key sets, the way Core
/// Data reports a save: a row inserted then updated is inserted; inserted then
/// deleted is not reported; deleted then inserted again is updated. Entities
/// are grouped by name as SQLite compares names (ignoring ASCII case).
///
/// Every write folds the rows it recorded (for its payload) and every member
/// folds what it reads, so a row costs one hash of its key: keys are kept in
/// order of first change with their state beside them, and a dictionary maps
/// each key to its place.
struct ChangeAccumulator {
    private enum State { case inserted, updated, deleted, gone }

    private struct Entity {
        var name: String
        /// Keys in order of first change, with their folded state.
        var slots: [(key: KeyValue, state: State)] = []
        /// Where each key's slot is.
        var positions: [KeyValue: Int] = [:]
        var reset = false

        /// Folds one change of `key` (one hash: the key's place is found, or
        /// made, in one dictionary access).
        mutating func add(_ operation: HistorySchema.Operation, key: KeyValue) {
            let count = slots.count
            let position = Self.place(&positions[key, default: count])
            let previous: State? = position < count ? slots[position].state : nil
            let next: State
            switch (previous, operation) {
            case (_, .reset): return
            case (nil, .insert), (.gone, .insert), (.gone, .update), (.inserted, .insert), (.inserted, .update): next = .inserted
            case (nil, .update), (.updated, .update), (.updated, .insert), (.deleted, .insert), (.deleted, .update): next = .updated
            case (nil, .delete), (.updated, .delete), (.deleted, .delete): next = .deleted
            case (.inserted, .delete), (.gone, .delete): next = .gone
            }
            if position < count {
                slots[position].state = next
            } else {
                slots.append((key, next))
            }
        }

        /// The place stored for a key; a new key's `default` (the next slot) is
        /// stored as its place by the same access.
        private static func place(_ stored: inout Int) -> Int {
            stored
        }
    }

    private var entities: [Entity] = []
    private var indexByName: [String: Int] = [:]
    /// The entity of the last change, as named then (rows of one table
    /// usually come together).
    private var last: (name: String, index: Int)?
    /// Rows expected, to size the first entity's tables once.
    private let expectedRows: Int

    /// - Parameter expectedRows: how many changes will probably be added
    ///   (an estimate; it only saves growing the tables).
    init(expectedRows: Int = 0) {
        self.expectedRows = max(0, min(expectedRows, 1 << 20))
    }

    private mutating func index(of name: String) -> Int {
        if let last, last.name == name { return last.index }
        let index: Int
        if entities.isEmpty {
            // The first table needs no key: names are matched ignoring case
            // only once a second name comes (most transactions change one
            // table, and a member folds each one).
            index = 0
            var entity = Entity(name: name)
            if expectedRows > 0 {
                entity.slots.reserveCapacity(expectedRows)
                entity.positions.reserveCapacity(expectedRows)
            }
            entities.append(entity)
        } else {
            if indexByName.isEmpty { indexByName[EntityName.key(entities[0].name)] = 0 }
            let key = EntityName.key(name)
            if let existing = indexByName[key] {
                index = existing
            } else {
                index = entities.count
                indexByName[key] = index
                entities.append(Entity(name: name))
            }
        }
        last = (name, index)
        return index
    }

    /// Folds one recorded row: a change of `key`, or with `.reset` the
    /// table's reset.
    mutating func add(entity name: String, operation: HistorySchema.Operation, key: KeyValue) {
        let index = index(of: name)
        if operation == .reset {
            entities[index].reset = true
        } else {
            entities[index].add(operation, key: key)
        }
    }

    var changes: [EntityChange] {
        entities.compactMap { entity in
            var change = EntityChange(entity: entity.name, reset: entity.reset)
            for slot in entity.slots {
                switch slot.state {
                case .inserted: change.inserted.append(slot.key)
                case .updated: change.updated.append(slot.key)
                case .deleted: change.deleted.append(slot.key)
                case .gone: break
                }
            }
            return change.isEmpty ? nil : change
        }
    }
}
