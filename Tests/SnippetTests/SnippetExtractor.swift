import Foundation

/// The Swift snippets of the README and the DocC articles, as files the
/// `SnippetTests` target compiles with the package's own settings.
///
/// Each ` ```swift ` block becomes one function, its `import` lines at the
/// top of its file: a snippet that needs an import it does not show fails to
/// compile, as it would for a reader. A block may be preceded by
/// `<!-- snippet-context: NAME: Type, … -->`: what the prose before it
/// defined (a configuration, a logger), passed in as parameters.
enum SnippetExtractor {
    struct Snippet: Equatable {
        var document: String
        var index: Int
        var imports: [String]
        var context: String
        var body: [String]

        var functionName: String {
            let base = document.split(separator: "/").last.map(String.init) ?? document
            let stem = base.replacingOccurrences(of: ".md", with: "")
            return "snippet_" + String(stem.map { $0.isLetter || $0.isNumber ? $0 : "_" }) + "_\(index)"
        }

        var fileName: String { functionName + ".swift" }

        /// Code that needs an optional part of the package is compiled only
        /// with that part's trait.
        var trait: String? {
            if imports.contains("import GroupStoreGateway") || imports.contains("import GroupStoreCloudHTTP") { return "Gateway" }
            return imports.contains("import GroupStoreCloudPostgres") ? "Postgres" : nil
        }

        var fileText: String {
            var lines = [
                "// swift-format-ignore-file",
                "// Generated from \(document), snippet \(index), by SnippetTests: do not edit.",
                "// After changing the snippet there: GROUPSTORE_WRITE_SNIPPETS=1 swift test --filter SnippetTests",
            ]
            if let trait { lines.append("#if \(trait)") }
            lines += imports.isEmpty ? [] : [""] + imports
            lines += ["", "func \(functionName)(\(context)) async throws {"]
            lines += body.map { $0.isEmpty ? "" : "    " + $0 }
            lines.append("}")
            if let trait { lines.append("#endif  // \(trait)") }
            return lines.joined(separator: "\n") + "\n"
        }
    }

    /// The documents whose snippets are checked, relative to the package root.
    static func documents(root: URL) throws -> [String] {
        var documents = ["README.md"]
        let sources = root.appendingPathComponent("Sources")
        for module in try FileManager.default.contentsOfDirectory(atPath: sources.path).sorted() {
            let catalog = sources.appendingPathComponent(module).appendingPathComponent("Documentation.docc")
            guard let articles = try? FileManager.default.contentsOfDirectory(atPath: catalog.path) else { continue }
            for article in articles.sorted() where article.hasSuffix(".md") {
                documents.append("Sources/\(module)/Documentation.docc/\(article)")
            }
        }
        return documents
    }

    static func snippets(in text: String, document: String) -> [Snippet] {
        var snippets: [Snippet] = []
        var current: [String]?
        var context = ""
        var previous = ""
        for line in text.components(separatedBy: "\n") {
            if var body = current {
                if line.trimmingCharacters(in: .whitespaces) == "```" {
                    let imports = body.filter { $0.hasPrefix("import ") }
                    body.removeAll { $0.hasPrefix("import ") }
                    while body.first?.isEmpty == true { body.removeFirst() }
                    snippets.append(Snippet(document: document, index: snippets.count + 1, imports: imports, context: context, body: body))
                    current = nil
                } else {
                    body.append(line)
                    current = body
                }
                continue
            }
            if line.trimmingCharacters(in: .whitespaces) == "```swift" {
                current = []
                let marker = "<!-- snippet-context:"
                if let range = previous.range(of: marker), let end = previous.range(of: "-->") {
                    context = previous[range.upperBound..<end.lowerBound].trimmingCharacters(in: .whitespaces)
                } else {
                    context = ""
                }
            }
            if !line.trimmingCharacters(in: .whitespaces).isEmpty { previous = line }
        }
        return snippets
    }

    static func allSnippets(root: URL) throws -> [Snippet] {
        try documents(root: root).flatMap { document in
            snippets(in: try String(contentsOf: root.appendingPathComponent(document), encoding: .utf8), document: document)
        }
    }
}
