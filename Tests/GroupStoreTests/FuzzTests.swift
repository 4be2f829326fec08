import Foundation
import Subprocesses
import XCTest

@testable import GroupStore

/// Seeded random and mutated inputs through every parser that reads bytes a
/// peer or a stranger wrote: payload names and JSON keys (members never
/// open payload files). No
/// input may crash or hang them. `GROUPSTORE_FUZZ_INPUTS` sets the count
/// (1,000,000 by default, about 10 s).
final class FuzzTests: XCTestCase {
    private var inputs: Int {
        Int(ProcessInfo.processInfo.environment["GROUPSTORE_FUZZ_INPUTS"] ?? "") ?? 1_000_000
    }

    private let seeds: [String] = [
        #"[["red",7],"swift \"6\"",-12,1.5e3,null,"\ud83d\udc22",[]]"#,
        "00000000000000000042.v2.json",
    ]

    func testParsersSurviveRandomAndMutatedInputs() {
        var generator = SeededGenerator(seed: 0x0067_726F_7570)
        var accepted = (names: 0, keys: 0)
        let started = Date()
        for index in 0..<inputs {
            let bytes = input(index, &generator)
            let text = String(decoding: bytes, as: UTF8.self)
            if case .payload = PayloadFileName.parse(text) { accepted.names += 1 }
            if let key = KeyValue(json: text) {
                accepted.keys += 1
                // What parses must print back to something that parses to the same value.
                XCTAssertEqual(KeyValue(json: key.json), key, "round trip of \(text.debugDescription)")
            }
        }
        let seconds = Date().timeIntervalSince(started)
        print(
            "fuzz: \(inputs) inputs in \(String(format: "%.1f", seconds)) s; accepted as payload names \(accepted.names), "
                + "keys \(accepted.keys)")
        XCTAssertGreaterThan(accepted.names, 0, "the mutator never produced a valid payload name: it explores too little")
        XCTAssertGreaterThan(accepted.keys, 0)
    }

    /// Random bytes, or a seed with a few bytes flipped, inserted, deleted or cut.
    private func input(_ index: Int, _ generator: inout SeededGenerator) -> [UInt8] {
        if index % 4 == 0 {
            return (0..<Int.random(in: 0...64, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        }
        var bytes = Array(seeds[index % seeds.count].utf8)
        for _ in 0..<Int.random(in: 0...4, using: &generator) {
            guard !bytes.isEmpty else { break }
            let position = Int.random(in: 0..<bytes.count, using: &generator)
            switch Int.random(in: 0..<4, using: &generator) {
            case 0: bytes[position] = UInt8.random(in: 0...255, using: &generator)
            case 1: bytes.insert(Array(#"[]{}",\0-9e"#.utf8).randomElement(using: &generator)!, at: position)
            case 2: bytes.remove(at: position)
            default: bytes = Array(bytes.prefix(position))
            }
        }
        return bytes
    }
}
