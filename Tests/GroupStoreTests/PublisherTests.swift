import Dispatch
import Foundation
import Logging
import XCTest

@testable import GroupStore

/// The publisher's pacing: a payload per commit while it keeps up, at most one
/// per interval once commits come faster, and a flush that publishes at once.
/// The interval is a minute here, so "delayed" and "at once" cannot be
/// confused by a slow machine; the publisher's queue is held to line up a
/// congestion and waited on (never slept on) before looking at the folder.
final class PublisherTests: XCTestCase {
    private var path = ""
    private var directory: GroupDirectory!
    private var publisher: Publisher!

    override func setUpWithError() throws {
        path = FileManager.default.temporaryDirectory.appendingPathComponent("publisher-\(UUID().uuidString.prefix(8))").path
        directory = try GroupDirectory(path: path, create: true)
        _ = try directory.members.makeDirectory("writer")
        let folder = try DirectoryHandle(name: "writer", in: directory.members)
        let member = try MemberName("writer")
        let lock = try MemberLock(member: member, folder: folder, group: path)
        publisher = Publisher(
            member: member, folder: MemberFolder(member: member, directory: directory, folder: folder, lock: lock),
            logger: Logger(label: "test"),
            metrics: GroupMetrics(group: path, member: "writer"), minimumInterval: 60_000_000_000)
    }

    override func tearDownWithError() throws {
        publisher = nil
        directory = nil
        try? FileManager.default.removeItem(atPath: path)
    }

    private func payload(_ seq: Int64) -> Payload {
        Payload(save: Save(seq: seq, author: "writer", committedAt: Date(), changes: []), truncated: false, previous: seq - 1)
    }

    /// The sequence numbers of the payload files in the member's folder.
    private func published() throws -> [Int64] {
        try FileManager.default.contentsOfDirectory(atPath: path + "/members/writer")
            .compactMap { name in
                guard case .payload(let seq, _) = PayloadFileName.parse(name) else { return nil }
                return seq
            }
            .sorted()
    }

    /// Holds the publisher's queue until the returned function is called.
    private func holdQueue() -> () -> Void {
        let held = DispatchSemaphore(value: 0)
        let release = DispatchSemaphore(value: 0)
        publisher.enqueue {
            held.signal()
            release.wait()
        }
        held.wait()
        return { release.signal() }
    }

    func testCommitsItKeepsUpWith_eachGetAPayloadAtOnce_evenWithinTheInterval() throws {
        for seq in Int64(1)...5 {
            publisher.publish(payload(seq))
            publisher.waitForQueue()
            XCTAssertEqual(try published().last, seq, "payload \(seq) was not written at once")
        }
        XCTAssertEqual(try published(), [1, 2, 3, 4, 5])
    }

    func testCongestion_publishesTheNewest_thenWaitsTheInterval_andFlushWritesAtOnce() throws {
        publisher.publish(payload(1))
        publisher.waitForQueue()
        XCTAssertEqual(try published(), [1])

        // Commits 2…4 come while the queue is busy: 4 replaces 2 and 3.
        let release = holdQueue()
        for seq in Int64(2)...4 { publisher.publish(payload(seq)) }
        release()
        publisher.waitForQueue()
        // A congestion within the interval of payload 1: payload 4 waits.
        XCTAssertEqual(try published(), [1], "a payload was written within the interval of a congested publisher")

        publisher.flush()
        XCTAssertEqual(try published(), [1, 4], "flush must write the newest waiting payload, and only it")

        // The payload written last had replaced others: the next one, within
        // the interval, waits too, even with no congestion of its own.
        publisher.publish(payload(5))
        publisher.waitForQueue()
        XCTAssertEqual(try published(), [1, 4])
        publisher.flush()
        XCTAssertEqual(try published(), [1, 4, 5])

        // That one was not congested: the publisher is back to a payload per commit.
        publisher.publish(payload(6))
        publisher.waitForQueue()
        XCTAssertEqual(try published(), [1, 4, 5, 6])
    }
}
