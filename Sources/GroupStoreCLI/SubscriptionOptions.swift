import ArgumentParser
import Foundation
import GroupStoreCloud

/// `--where 'TABLE: FILTER'` and `--param NAME=VALUE` of `cloud sync` and
/// `cloud run`: the subscriptions (``CloudSyncConfiguration/subscriptions``).
struct SubscriptionOptions: ParsableArguments {
    @Option(
        name: .customLong("where"),
        help: ArgumentHelp(
            "A subscription (repeatable, one per table): only the rows of TABLE the filter holds are synced here, e.g. 'job: site = 7 AND done = 0'. The remote evaluates it inside what the user may read.",
            valueName: "TABLE: FILTER"))
    var filters: [String] = []

    @Option(
        name: .customLong("param"),
        help: ArgumentHelp(
            "The value of a subscription's param('NAME') (repeatable): an integer, a real, or text.", valueName: "NAME=VALUE"))
    var parameters: [String] = []

    /// Sets the configuration's subscriptions, refusing a malformed one with its sentence.
    func apply(to configuration: inout CloudSyncConfiguration) throws {
        configuration.subscriptions.merge(try Self.filters(filters, option: "--where")) { $1 }
        for item in parameters {
            guard let equals = item.firstIndex(of: "="), equals != item.startIndex else {
                throw CommandFailure(message: "--param takes NAME=VALUE; '\(item)' is not one")
            }
            let name = String(item[..<equals])
            let value = String(item[item.index(after: equals)...])
            configuration.subscriptionParameters[name] = Self.value(value)
        }
    }

    /// `'TABLE: FILTER'` items parsed, by table (as given), refusing a
    /// malformed one, or a second filter for one table, with a sentence
    /// naming `option`.
    static func filters(_ items: [String], option: String) throws -> [String: CloudFilter] {
        var filters: [String: CloudFilter] = [:]
        for item in items {
            guard let colon = item.firstIndex(of: ":") else {
                throw CommandFailure(message: "\(option) takes 'TABLE: FILTER' (for example 'job: site = 7'); '\(item)' has no colon")
            }
            let table = item[..<colon].trimmingCharacters(in: .whitespaces)
            let text = item[item.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            guard !table.isEmpty else { throw CommandFailure(message: "\(option) '\(item)' names no table before its colon") }
            guard !filters.keys.contains(where: { $0.lowercased() == table.lowercased() }) else {
                throw CommandFailure(message: "\(option) names table \(table) twice: give one filter per table (join them with OR)")
            }
            do {
                filters[table] = try CloudFilter(text)
            } catch let error as CloudSyncError {
                throw CommandFailure(message: "\(option) for table \(table): \(error.message)")
            }
        }
        return filters
    }

    /// `7` an integer, `2.5` a real, `'x'` or anything else text.
    static func value(_ text: String) -> CloudValue {
        if let integer = Int64(text) { return .integer(integer) }
        if let real = Double(text), real.isFinite, text.contains(where: { $0 == "." || $0 == "e" || $0 == "E" }) { return .real(real) }
        if text.count >= 2, text.hasPrefix("'"), text.hasSuffix("'") { return .text(String(text.dropFirst().dropLast())) }
        return .text(text)
    }
}
