import Foundation
import Subprocesses

#if canImport(Glibc)
    import Glibc
#endif

/// The executables the demo spawns must be built next to it: `swift run -c
/// release groupstore-demo` (the README's first command) builds the demo
/// alone, and the demo builds the ones missing, one `swift build --product`
/// each, when the current directory is the package (not the benchmark, the
/// fault suite and the rest: a newcomer's first command waits for less);
/// elsewhere it says what to run and runs nothing.
enum Prerequisites {
    /// The directory the demo was built in: `.build/release` (a link to
    /// `.build/<triple>/release`) or `.build/release` itself, or anywhere it was copied to.
    static var products: URL { Subprocess.productsDirectory.resolvingSymlinksInPath() }

    /// How the demo was built: "debug", or "release" (as a copy elsewhere is taken to be).
    static var configuration: String { products.lastPathComponent == "debug" ? "debug" : "release" }

    /// The command that builds and runs the demo as it was built, with `arguments`.
    static func command(_ arguments: [String]) -> String {
        (configuration == "debug" ? "swift run groupstore-demo" : "swift run -c release groupstore-demo")
            + arguments.map { " " + $0 }.joined()
    }

    /// Builds those of `names` that are missing, or exits saying what to run.
    /// - Parameter advice: the demo's arguments that ask for `names`, in the command it advises.
    static func ensureBuilt(_ names: [String], advice demoArguments: [String] = []) {
        let directory = Subprocess.productsDirectory
        func missing() -> [String] {
            names.filter { !FileManager.default.isExecutableFile(atPath: directory.appendingPathComponent($0).path) }
        }
        var absent = missing()
        guard !absent.isEmpty else { return }
        let advice = command(demoArguments)
        func fail(_ problem: String) -> Never {
            let sentence = "groupstore-demo: \(problem)\n"
            FileHandle.standardError.write(Data(sentence.utf8))
            exit(1)
        }
        func list(_ names: [String]) -> String {
            names.count == 1 ? names[0] : names.dropLast().joined(separator: ", ") + " and " + names.last!
        }
        let current = FileManager.default.currentDirectoryPath
        guard ["debug", "release"].contains(products.lastPathComponent),
            FileManager.default.fileExists(atPath: current + "/Package.swift")
        else {
            fail(
                "it runs \(list(absent)), not built next to it in \(directory.path); "
                    + "run it from the package's directory, where it builds them: \(advice)")
        }
        var scratch = products.deletingLastPathComponent()
        if scratch.lastPathComponent.contains("-") { scratch = scratch.deletingLastPathComponent() }  // a target triple
        var arguments = ["swift", "build", "-c", configuration]
        if scratch.standardizedFileURL.path != URL(fileURLWithPath: current + "/.build").standardizedFileURL.path {
            arguments += ["--scratch-path", scratch.path]
        }
        for name in absent {
            let command = arguments + ["--product", name]
            say("The demo runs \(name), which is not built yet: building it (\(command.joined(separator: " "))).")
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
            process.arguments = command
            do {
                try process.run()
                process.waitUntilExit()
            } catch {
                fail("cannot run swift build to build \(name) (\(error))")
            }
            guard process.terminationStatus == 0 else {
                fail("building \(name) failed (swift build said why, above)")
            }
        }
        absent = missing()
        if !absent.isEmpty {
            fail("\(list(absent)) still not built next to it in \(directory.path)")
        }
    }
}
