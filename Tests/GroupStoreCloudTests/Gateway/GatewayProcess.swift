#if Gateway
    import Foundation
    import GroupStoreGateway
    import PostgresTestServer
    import Subprocesses
    import XCTest

    /// A `groupstore serve` process on loopback for a test, logged in to the
    /// test's PostgreSQL server as `authenticator`.
    final class GatewayProcess: Sendable {
        let process: Subprocess
        /// The port it listens on (it chose a free one).
        let port: Int

        private init(process: Subprocess, port: Int) {
            self.process = process
            self.port = port
        }

        /// Creates the authenticator role as a deployment does: it logs in,
        /// inherits nothing, and may become each of `grantedRoles` and
        /// `groupstore_gateway` (to read the push hints' key).
        static func createAuthenticator(on server: PostgresServer, grantedRoles: [String], name: String = "authenticator") throws {
            try server.psql("CREATE ROLE \(name) LOGIN NOINHERIT NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS")
            try server.psql("GRANT groupstore_gateway TO \(name)")
            if !grantedRoles.isEmpty { try server.psql("GRANT \(grantedRoles.joined(separator: ", ")) TO \(name)") }
        }

        /// Starts a gateway and waits until it listens.
        /// - Parameter fileLimit: the gateway's open-file limit (`prlimit --nofile`), if not the test's own.
        static func start(
            server: PostgresServer, secret: GatewaySecret, pool: Int = 4, extra: [String] = [], authenticator: String = "authenticator",
            fileLimit: Int? = nil, file: StaticString = #filePath, line: UInt = #line
        ) throws -> GatewayProcess {
            let executable = Subprocess.productsDirectory.appendingPathComponent("groupstore")
            let arguments =
                [
                    "serve", "--remote", server.url(user: authenticator), "--listen", "127.0.0.1:0", "--jwt-secret-file", secret.path,
                    "--pool", String(pool),
                ] + extra
            let process =
                try fileLimit.map { limit in
                    try Subprocess(
                        URL(fileURLWithPath: "/usr/bin/prlimit"), ["--nofile=\(limit):\(limit)", "--", executable.path] + arguments,
                        name: "groupstore serve")
                } ?? Subprocess(executable, arguments, name: "groupstore serve")
            let port = process.wait(timeout: 60) { _, errors, exit -> Int? in
                if exit != nil { return -1 }
                for line in errors where line.hasPrefix("groupstore: serving http") {
                    let address = line.split(separator: " ")[2]
                    return address.split(separator: ":").last.flatMap { Int($0) }
                }
                return nil
            }
            guard let port, port > 0 else {
                process.stop()
                XCTFail("the gateway did not start: \(process.errors.suffix(5).joined(separator: "\n"))", file: file, line: line)
                throw XCTSkip("no gateway")
            }
            return GatewayProcess(process: process, port: port)
        }

        /// After a failed test: whether the gateway still runs (or how it
        /// exited) and the last lines it wrote to stderr, printed, since a
        /// test that lost its gateway otherwise says only what its client saw.
        func printIfFailed(_ test: XCTestCase) {
            // Not `hasSucceeded`: it is false until the run stops, after tearDown.
            guard let run = test.testRun, run.totalFailureCount > 0 else { return }
            let state = process.status.map { "ended with status \($0) (a signal's number if killed)" } ?? "still running"
            let lines = process.errors.suffix(20)
            print("\(test.name): the gateway on port \(port) (pid \(process.pid)) \(state); its last \(lines.count) stderr lines:")
            for line in lines { print("  " + line) }
        }

        /// SIGKILL: the gateway dies at once, connections and all.
        func kill() { process.stop() }

        /// SIGTERM, then waits for it to exit (SIGKILL after 10 s).
        func stop() {
            process.send(SIGTERM)
            if process.waitForExit(timeout: 10) == nil { process.stop() }
        }
    }

    /// An HS256 secret in a file of its own, and the tokens it signs.
    final class GatewaySecret: Sendable {
        let directory: String
        var path: String { directory + "/jwt.secret" }

        init() throws {
            directory = FileManager.default.temporaryDirectory.appendingPathComponent("gateway-\(UUID().uuidString.prefix(8))").path
            try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
            var bytes = [UInt8](repeating: 0, count: 48)
            for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255) }
            try Data(Data(bytes).base64EncodedString().utf8).write(to: URL(fileURLWithPath: path))
        }

        func token(role: String, expiresIn: TimeInterval? = 3600, now: Date = Date()) throws -> String {
            try GatewayToken.mint(secretFile: path, role: role, expiresIn: expiresIn, now: now)
        }

        func remove() { try? FileManager.default.removeItem(atPath: directory) }
    }
#endif  // Gateway
