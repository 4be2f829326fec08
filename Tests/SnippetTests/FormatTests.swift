import Foundation
import XCTest

/// The code is formatted as `.swift-format` says (140 columns among it):
/// `swift format lint --strict` over the package finds nothing, so the rule
/// is kept by CI rather than restated. The snippets generated from the
/// documents are left as the documents have them (`swift-format-ignore-file`).
final class FormatTests: XCTestCase {
    func testTheCode_isAsSwiftFormatFormatsIt() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["swift", "format", "lint", "--strict", "--recursive", "Sources", "Tests", "Examples", "Package.swift"]
        process.currentDirectoryURL = root
        let output = Pipe()
        process.standardOutput = output
        process.standardError = output
        try process.run()
        let text = String(decoding: output.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        let lines = text.split(separator: "\n")
        XCTAssertEqual(
            process.terminationStatus, 0,
            "swift format lint found \(lines.count) lines to change (run: swift format format --in-place --recursive Sources Tests Examples Package.swift):\n"
                + lines.prefix(20).joined(separator: "\n"))
    }
}
