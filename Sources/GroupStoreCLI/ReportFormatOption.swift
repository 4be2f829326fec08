import ArgumentParser

/// `--format text|json`, for the operator commands that print one report.
struct ReportFormatOption: ParsableArguments {
    enum Format: String, ExpressibleByArgument, CaseIterable {
        case text, json
    }

    @Option(name: .long, help: "Output format.")
    var format: Format = .text
}
