import Dispatch
import XCTest

@testable import GroupStore

/// When the delivery's safety tick says that saves reach nobody.
final class DeliveryHealthTests: XCTestCase {
    private func at(_ seconds: Double) -> DispatchTime {
        DispatchTime(uptimeNanoseconds: 1_000_000_000_000 + UInt64(seconds * 1e9))
    }

    func testAPostThatDoesNotReturn_isReportedOnceAfterThreeSeconds_andAnotherStallAgain() {
        var health = DeliveryHealth()
        var activity = SaveNotifier.Activity(posts: 1, postingSince: at(0))
        XCTAssertEqual(health.look(now: at(2.9), notifier: activity, processing: true), [])
        XCTAssertEqual(health.look(now: at(3.2), notifier: activity, processing: true), [.postStalled(seconds: 3)])
        XCTAssertEqual(health.look(now: at(9), notifier: activity, processing: true), [], "one stall, one line")
        activity = SaveNotifier.Activity(posts: 2, postingSince: at(10))
        XCTAssertEqual(health.look(now: at(14), notifier: activity, processing: true), [.postStalled(seconds: 4)])
    }

    func testPostsNothingProcesses_areReportedOnceAfterFiveSeconds_andNeverWhenSomethingProcesses() {
        var health = DeliveryHealth()
        let posted = SaveNotifier.Activity(posts: 3, postingSince: nil)
        XCTAssertEqual(health.look(now: at(0), notifier: SaveNotifier.Activity(), processing: false), [], "nothing posted yet")
        XCTAssertEqual(health.look(now: at(1), notifier: posted, processing: false), [])
        XCTAssertEqual(health.look(now: at(5.5), notifier: posted, processing: false), [])
        XCTAssertEqual(health.look(now: at(6.1), notifier: posted, processing: false), [.postsNotProcessed])
        XCTAssertEqual(health.look(now: at(20), notifier: posted, processing: false), [])

        var processed = DeliveryHealth()
        XCTAssertEqual(processed.look(now: at(1), notifier: posted, processing: true), [])
        XCTAssertEqual(processed.look(now: at(60), notifier: posted, processing: true), [])
    }
}
