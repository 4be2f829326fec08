import Foundation
import XCTest

@testable import GroupStoreCloud

/// The hand-written JSON of record fields reads back exactly what it wrote,
/// and reads what Foundation's coder writes for the same values.
final class FieldsJSONTests: XCTestCase {
    func testRoundTrip_ofEveryKindOfValue() throws {
        let fields: CloudFields = [
            "null": .null, "int": .integer(Int64.min), "big": .integer(9_007_199_254_740_993), "real": .real(0.1),
            "tiny": .real(5e-324), "neg": .real(-0.0), "inf": .real(.infinity), "minf": .real(-.infinity),
            "text": .text("quote \" backslash \\ newline \n tab \t nul \u{0} ☃ \u{1F600}"), "empty": .text(""),
            "bytes": .bytes([0, 255, 10, 13]), "asset": .asset(CloudAsset(hash: String(repeating: "ab", count: 32), size: 5_000_000)),
            "key \"quoted\"": .integer(1), "notUTF8": .invalidText([0x61, 0xFF, 0x00, 0xC3]),
        ]
        let text = CloudFieldsJSON.encode(fields)
        XCTAssertEqual(try CloudFieldsJSON.decode(text), fields)
        // Foundation's encoding of the same fields reads the same.
        let foundation = String(
            decoding: try JSONEncoder().encode(fields.filter { !($0.value == .real(.infinity) || $0.value == .real(-.infinity)) }),
            as: UTF8.self)
        XCTAssertEqual(
            try CloudFieldsJSON.decode(foundation), fields.filter { !($0.value == .real(.infinity) || $0.value == .real(-.infinity)) })
    }

    func testRandomFields_roundTrip() throws {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2000 {
            var fields: CloudFields = [:]
            for index in 0..<Int.random(in: 0...6, using: &generator) {
                let value: CloudValue
                switch Int.random(in: 0..<5, using: &generator) {
                case 0: value = .integer(Int64.random(in: .min ... .max, using: &generator))
                case 1:
                    value = .real(
                        Double(bitPattern: UInt64.random(in: 0 ... .max, using: &generator)).isFinite
                            ? Double(bitPattern: UInt64.random(in: 0...0x7FEF_FFFF_FFFF_FFFF, using: &generator)) : 1)
                case 2:
                    value = .text(
                        String(
                            String.UnicodeScalarView(
                                (0..<Int.random(in: 0...12, using: &generator)).compactMap { _ in
                                    Unicode.Scalar(UInt32.random(in: 0...0x2FFFF, using: &generator))
                                })))
                case 3:
                    value = .bytes(
                        (0..<Int.random(in: 0...20, using: &generator)).map { _ in UInt8.random(in: 0...255, using: &generator) })
                default: value = .null
                }
                fields["c\(index)"] = value
            }
            let text = CloudFieldsJSON.encode(fields)
            XCTAssertEqual(try CloudFieldsJSON.decode(text), fields, text)
        }
    }

    func testSyncSummaryJSON_readsBackAsWritten_andAsFoundationWritesIt() throws {
        var failed = CloudSyncSummary(
            startedAt: Date(timeIntervalSince1970: 1_764_086_400.123456), finishedAt: Date(timeIntervalSince1970: 1_764_086_401.5))
        failed.uploaded = 3
        failed.fetched = 400
        failed.conflicts = 2
        failed.parked = 1
        failed.pending = 7
        failed.error = "the remote /tmp/c \"x\" is gone\nnext line \u{1} ☃"
        failed.errorCode = "badRemote"
        XCTAssertEqual(SyncState.decode(CloudSyncSummary.self, json: failed.stateJSON), failed, failed.stateJSON)
        // Read back as what Foundation's encoder (with the state's settings) writes, now too.
        for summary in [failed, CloudSyncSummary(startedAt: Date(timeIntervalSince1970: 0), finishedAt: Date())] {
            let foundation = try XCTUnwrap(SyncState.decode(CloudSyncSummary.self, json: SyncState.json(summary)))
            XCTAssertEqual(SyncState.decode(CloudSyncSummary.self, json: summary.stateJSON), foundation, summary.stateJSON)
        }
    }

    func testGarbage_isAnError_notACrash() {
        for garbage in [
            "", "{", "{\"a\":", "{\"a\":{\"i\":1}", "[1]", "{\"a\":{\"x\":1}}", "{\"a\":{\"i\":\"1\"}}", "{\"a\":nul}",
            "{\"a\":{\"t\":\"\\u12\"}}",
        ] {
            XCTAssertThrowsError(try CloudFieldsJSON.decode(garbage), garbage)
        }
    }
}
