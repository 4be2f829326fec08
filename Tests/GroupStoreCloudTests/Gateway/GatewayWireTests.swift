import Foundation
import GroupStoreCloud
import GroupStoreCloudHTTP
import XCTest

/// The gateway's JSON for a conflict with a deleted record (the delete's
/// edit time) and for a save bringing a version back: each goes as an
/// optional field, so a peer of another build reads it either way (no trait
/// needed: the wire types build without one).
final class GatewayWireTests: XCTestCase {
    private let id = CloudRecordID(zone: .private("alice"), type: "note", name: "n1")

    private func roundTrip(_ result: CloudModifyResult) throws -> (json: [String: Any], back: CloudModifyResult?) {
        let data = try GatewayWire.encode(GatewayWire.Result(result))
        let json = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
        return (json, try GatewayWire.decode(GatewayWire.Result.self, from: data).result)
    }

    func testAConflictWithADeletedRecord_carriesTheDeletesEditTime() throws {
        let deletedAt = Date(timeIntervalSince1970: 1_795_840_457.057817)
        let (json, back) = try roundTrip(.conflict(id, server: nil, deletedAt: deletedAt))
        XCTAssertNotNil(json["deletedAt"])
        guard case .conflict(id, .none, let time?) = back else {
            return XCTFail("expected a conflict with a delete time, got \(String(describing: back))")
        }
        XCTAssertEqual(time.timeIntervalSince1970, deletedAt.timeIntervalSince1970, accuracy: 0.000_001)
    }

    func testAConflictWithoutADeleteTime_sendsNoField_andAnAnswerWithoutOne_isUnknown() throws {
        let (json, back) = try roundTrip(.conflict(id, server: nil))
        XCTAssertNil(json["deletedAt"], "an older peer sees the answer it always saw")
        XCTAssertEqual(back, .conflict(id, server: nil, deletedAt: nil))
        // As a gateway of an older build answers: no such field.
        let older = try GatewayWire.encode(GatewayWire.Result(.conflict(id, server: nil)))
        XCTAssertEqual(try GatewayWire.decode(GatewayWire.Result.self, from: older).result, .conflict(id, server: nil, deletedAt: nil))
    }

    func testASaveBringingAVersionBack_saysSo_andAnOrdinarySaveSendsNoField() throws {
        let editedAt = Date(timeIntervalSince1970: 1_795_840_456.542)
        for bringsBack in [true, false] {
            let change = CloudRecordChange.save(
                id: id, baseTag: nil, fields: ["title": .text("v3")], editedAt: editedAt, bringsBack: bringsBack)
            let data = try GatewayWire.encode(GatewayWire.Change(change))
            let json = try XCTUnwrap(JSONSerialization.jsonObject(with: data) as? [String: Any])
            XCTAssertEqual(json["bringsBack"] as? Bool, bringsBack ? true : nil, "an ordinary save looks as it did to an older gateway")
            XCTAssertEqual(try GatewayWire.decode(GatewayWire.Change.self, from: data).change, change)
        }
    }
}
