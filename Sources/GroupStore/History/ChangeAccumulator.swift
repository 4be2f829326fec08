/// Folds a transaction's row changes into per-entity key sets, the way Core
/// Data reports a save: a row inserted then updated is inserted; inserted then
/// deleted is not reported; deleted then inserted again is updated. Entities
/// are grouped by name as SQLite compares names (ignoring ASCII case).
struct ChangeAccumulator {
    private enum State { case inserted, updated, deleted, gone }

    private struct Entity {
        var name: String
        var order: [KeyValue] = []
        var states: [KeyValue: State] = [:]
        var reset = false
    }

    private var entities: [Entity] = []
    private var indexByName: [String: Int] = [:]

    private mutating func index(of name: String) -> Int {
        let key = EntityName.key(name)
        if let existing = indexByName[key] { return existing }
        indexByName[key] = entities.count
        entities.append(Entity(name: name))
        return entities.count - 1
    }

    mutating func reset(entity name: String) {
        entities[index(of: name)].reset = true
    }

    mutating func add(entity name: String, operation: HistorySchema.Operation, key: KeyValue) {
        let index = index(of: name)
        let previous = entities[index].states[key]
        if previous == nil { entities[index].order.append(key) }
        let next: State
        switch (previous, operation) {
        case (_, .reset): return
        case (nil, .insert), (.gone, .insert), (.gone, .update), (.inserted, .insert), (.inserted, .update): next = .inserted
        case (nil, .update), (.updated, .update), (.updated, .insert), (.deleted, .insert), (.deleted, .update): next = .updated
        case (nil, .delete), (.updated, .delete), (.deleted, .delete): next = .deleted
        case (.inserted, .delete), (.gone, .delete): next = .gone
        }
        entities[index].states[key] = next
    }

    var changes: [EntityChange] {
        entities.compactMap { entity in
            var change = EntityChange(entity: entity.name, reset: entity.reset)
            for key in entity.order {
                switch entity.states[key] {
                case .inserted: change.inserted.append(key)
                case .updated: change.updated.append(key)
                case .deleted: change.deleted.append(key)
                case .gone, nil: break
                }
            }
            return change.isEmpty ? nil : change
        }
    }
}
