import Foundation
import XCTest

/// The bounded form of the fault suite (`groupstore-faults --ci`), run as CI
/// runs it: crashes, overload, garbage files, hostile file-system changes and
/// access between Unix users. The long form is documented in docs/RELIABILITY.md.
/// Its `cloud` section runs in ``CloudProcessTests`` (so it is not run twice).
final class ReliabilityProcessTests: ProcessTestCase {
    func testFaultSuite_boundedForm_holdsForEveryFault() throws {
        let suite = try spawn("groupstore-faults", ["--ci", "--skip", "cloud"], name: "groupstore-faults")
        let status = try suite.waitForExit(timeout: 1500)
        print(suite.output.joined(separator: "\n"))
        XCTAssertEqual(status, 0, "faults that did not hold:\n" + suite.output.filter { $0.contains("FAILED") }.joined(separator: "\n"))
        XCTAssertTrue(suite.output.contains { $0.hasSuffix("passed, 0 failed") }, "\(suite.output.suffix(3))")
    }
}
