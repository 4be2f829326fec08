import ArgumentParser

#if canImport(Glibc)
    import Glibc
#endif

/// `--group DIR` for the commands that look at a group without joining it.
struct GroupOption: ParsableArguments {
    @Option(name: .long, help: GroupPath.help, transform: GroupPath.absolute)
    var group: String
}

/// The `--group` argument, resolved once while the arguments are parsed.
enum GroupPath {
    static let help = ArgumentHelp(
        "The group directory (a relative path is taken from the current directory).", valueName: "dir")

    /// `path` as an absolute path: relative to the current directory, with
    /// `.` segments, repeated slashes and trailing slashes removed. `..` is
    /// kept: the kernel resolves it, through symbolic links if any.
    static func absolute(_ path: String) throws -> String {
        guard !path.isEmpty else { throw ValidationError("--group must not be empty") }
        var full = path
        if !path.hasPrefix("/") {
            guard let directory = currentDirectory() else {
                throw ValidationError("cannot resolve the relative --group \(path): the current directory is unavailable")
            }
            full = directory + "/" + path
        }
        let segments = full.split(separator: "/").filter { $0 != "." }
        return "/" + segments.joined(separator: "/")
    }

    private static func currentDirectory() -> String? {
        var buffer = [CChar](repeating: 0, count: Int(PATH_MAX) + 1)
        guard getcwd(&buffer, buffer.count) != nil else { return nil }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
