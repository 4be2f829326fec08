import GroupStore
import XCTest

final class MemberNameTests: XCTestCase {
    func testAcceptsBundleIdentifierLikeNames() throws {
        for name in ["app", "com.example.app.widget", "worker-2", "job_runner", "user@host", "a+b", String(repeating: "x", count: 128)] {
            XCTAssertEqual(try MemberName(name).rawValue, name)
        }
    }

    func testRejectsNamesThatAreNotOneSafePathComponent() {
        let cases: [(String, String)] = [
            ("", "empty"), ("../x", "'/'"), ("a/b", "'/'"), ("..", "starts with '.'"), (".hidden", "starts with"),
            ("-rf", "starts with"), ("nul\u{0}byte", "control character"), ("line\nbreak", "control character"),
            ("del\u{7F}", "control character"), ("spa ce", "only A-Z"), ("ünïcode", "only A-Z"),
            (String(repeating: "x", count: 129), "129 bytes"), (String(repeating: "x", count: 10_000), "10000 bytes"),
        ]
        for (name, reason) in cases {
            XCTAssertThrowsError(try MemberName(name), "accepted \(name.debugDescription)") { error in
                guard let error = error as? GroupStoreError else { return XCTFail("wrong error type: \(error)") }
                XCTAssertEqual(error.code, .invalidMemberName)
                XCTAssertTrue(error.message.contains(reason), "\(error.message) should mention \(reason)")
                XCTAssertFalse(error.message.contains("\n"), "the message must be one line: \(error.message)")
            }
        }
    }

    func testErrorCodeMatchesInACatchPattern() {
        do {
            _ = try MemberName("a/b")
            XCTFail("accepted a/b")
        } catch GroupStoreError.invalidMemberName {
            // Matched by code.
        } catch {
            XCTFail("not matched by code: \(error)")
        }
    }
}
