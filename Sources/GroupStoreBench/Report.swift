import Foundation

/// One row of the benchmark table.
struct TableRow: Sendable {
    var section: String
    var what: String
    var unit: String
    var distribution: Distribution?
    var value: Double?
    var reference: String = ""
    var ratio: Double?
    var target: String = ""

    var cells: [String] {
        let number = { (value: Double) -> String in
            if value.isNaN { return "-" }
            if abs(value) >= 100 { return String(format: "%.0f", value) }
            return String(format: "%.2f", value)
        }
        var median = "", p99 = "", max = ""
        if let distribution {
            (median, p99, max) = (number(distribution.median), number(distribution.p99), number(distribution.max))
        } else if let value {
            median = number(value)
        }
        return [
            what, unit, median, p99, max, reference, ratio.map { String(format: "%.2f×", $0) } ?? "", target,
        ]
    }

    var json: [String: Any] {
        var object: [String: Any] = ["section": section, "what": what, "unit": unit, "reference": reference, "target": target]
        if let distribution {
            object["median"] = distribution.median
            object["p99"] = distribution.p99
            object["max"] = distribution.max
            object["samples"] = distribution.count
        }
        if let value { object["value"] = value }
        if let ratio { object["ratio"] = ratio }
        return object.mapValues { ($0 as? Double)?.isNaN == true ? NSNull() : $0 }
    }
}

/// Prints rows as a Markdown table, section by section.
enum Report {
    static let header = ["what", "unit", "median (or value)", "p99", "max", "reference in the same run", "ratio", "target"]

    static func table(_ rows: [TableRow]) -> String {
        var lines = ["| " + header.joined(separator: " | ") + " |", "|" + String(repeating: "---|", count: header.count)]
        var section = ""
        for row in rows {
            if row.section != section {
                section = row.section
                lines.append("| **\(section)** |" + String(repeating: " |", count: header.count - 1))
            }
            lines.append("| " + row.cells.joined(separator: " | ") + " |")
        }
        return lines.joined(separator: "\n")
    }

    static func writeJSON(_ rows: [TableRow], machine: String, to path: String) throws {
        let object: [String: Any] = ["machine": machine, "date": ISO8601DateFormatter().string(from: Date()), "rows": rows.map(\.json)]
        let data = try JSONSerialization.data(withJSONObject: object, options: [.prettyPrinted, .sortedKeys])
        try data.write(to: URL(fileURLWithPath: path))
    }

    static var machine: String {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let memory = ProcessInfo.processInfo.physicalMemory >> 30
        let model =
            (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?.split(separator: "\n")
            .first { $0.hasPrefix("model name") }?.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
        return "\(cores) cores, \(memory) GiB, \(model)"
    }
}
