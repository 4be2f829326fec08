import ArgumentParser

/// `--group DIR` for the commands that look at a group without joining it.
struct GroupOption: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("The group directory.", valueName: "dir"))
    var group: String
}

/// `--format text|json…` choices.
enum OutputFormat: String, ExpressibleByArgument, CaseIterable {
    case text, json, jsonl
}
