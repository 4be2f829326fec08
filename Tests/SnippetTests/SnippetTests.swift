import Foundation
import XCTest

/// Every Swift snippet of the README and the DocC articles compiles with the
/// package's own settings: `Generated/` holds them as functions of this
/// target (see ``SnippetExtractor``), and this test checks that they are the
/// documents' snippets as they stand.
final class SnippetTests: XCTestCase {
    private var root: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    }

    private var generated: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Generated")
    }

    func testTheCompiledSnippets_areTheDocumentsSnippets() throws {
        let snippets = try SnippetExtractor.allSnippets(root: root)
        XCTAssertFalse(snippets.isEmpty, "no snippet found under \(root.path)")
        let expected = Dictionary(uniqueKeysWithValues: snippets.map { ($0.fileName, $0.fileText) })
        if ProcessInfo.processInfo.environment["GROUPSTORE_WRITE_SNIPPETS"] == "1" {
            for name in try FileManager.default.contentsOfDirectory(atPath: generated.path) where name.hasSuffix(".swift") {
                try FileManager.default.removeItem(at: generated.appendingPathComponent(name))
            }
            for (name, text) in expected {
                try text.write(to: generated.appendingPathComponent(name), atomically: true, encoding: .utf8)
            }
        }
        let present = Set(try FileManager.default.contentsOfDirectory(atPath: generated.path).filter { $0.hasSuffix(".swift") })
        let hint = "run GROUPSTORE_WRITE_SNIPPETS=1 swift test --filter SnippetTests, then build again"
        XCTAssertEqual(present, Set(expected.keys), "Generated/ does not match the documents' snippets: \(hint)")
        for (name, text) in expected where present.contains(name) {
            let onDisk = try String(contentsOf: generated.appendingPathComponent(name), encoding: .utf8)
            XCTAssertEqual(onDisk, text, "\(name) is not its snippet as the document has it: \(hint)")
        }
    }
}
