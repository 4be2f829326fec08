#if Gateway
    import Foundation
    import GroupStoreGateway
    import PostgresTestServer
    import Subprocesses

    /// A `groupstore serve` process for the benchmark, logged in as
    /// `authenticator`, and the secret its tokens are signed with.
    struct GatewayChild {
        let process: Subprocess
        let port: Int

        static func start(server: PostgresServer, secret: String, pool: Int, extra: [String] = []) throws -> GatewayChild {
            let executable = Subprocess.productsDirectory.appendingPathComponent("groupstore")
            guard FileManager.default.isExecutableFile(atPath: executable.path) else {
                throw BenchFailure("\(executable.path) is missing: build it first (swift build -c release --traits Gateway)")
            }
            let process = try Subprocess(
                executable,
                [
                    "serve", "--remote", server.url(user: "authenticator"), "--listen", "127.0.0.1:0", "--jwt-secret-file", secret,
                    "--pool", String(pool), "--rate", "100000",
                ] + extra, name: "gateway")
            let port = process.wait(timeout: 60) { _, errors, exit -> Int? in
                if exit != nil { return -1 }
                for line in errors where line.hasPrefix("groupstore: serving http") {
                    return line.split(separator: " ")[2].split(separator: ":").last.flatMap { Int($0) }
                }
                return nil
            }
            guard let port, port > 0 else { throw BenchFailure("the gateway did not start: \(process.errors.suffix(3))") }
            return GatewayChild(process: process, port: port)
        }

        var url: String { "http://127.0.0.1:\(port)" }

        /// User and system CPU seconds the process used so far.
        var cpuSeconds: Double {
            guard let stat = try? String(contentsOfFile: "/proc/\(process.pid)/stat", encoding: .utf8), let close = stat.lastIndex(of: ")")
            else { return 0 }
            let fields = stat[stat.index(after: close)...].split(separator: " ")
            guard fields.count > 13, let user = Double(fields[11]), let system = Double(fields[12]) else { return 0 }
            return (user + system) / Double(sysconf(Int32(_SC_CLK_TCK)))
        }

        /// The process's resident memory now, in MiB.
        var residentMebibytes: Double {
            guard let status = try? String(contentsOfFile: "/proc/\(process.pid)/status", encoding: .utf8),
                let line = status.split(separator: "\n").first(where: { $0.hasPrefix("VmRSS:") }),
                let kibibytes = line.split(separator: " ").dropFirst().first.flatMap({ Double($0) })
            else { return 0 }
            return kibibytes / 1024
        }

        func stop() {
            process.send(SIGTERM)
            if process.waitForExit(timeout: 10) == nil { process.stop() }
        }

        /// Creates the authenticator (NOINHERIT, may become `groupstore_gateway`) and a secret file.
        static func prepare(_ server: PostgresServer, directory: String) throws -> String {
            try server.psql(
                "CREATE ROLE authenticator LOGIN NOINHERIT NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS; GRANT groupstore_gateway TO authenticator"
            )
            let path = directory + "/jwt.secret"
            var bytes = [UInt8](repeating: 0, count: 48)
            for index in bytes.indices { bytes[index] = UInt8.random(in: 0...255) }
            try Data(Data(bytes).base64EncodedString().utf8).write(to: URL(fileURLWithPath: path))
            return path
        }

        /// Roles that sync (granted `groupstore_user`) and that the authenticator may become.
        static func createRoles(_ roles: [String], on server: PostgresServer) throws {
            var script = ""
            for role in roles {
                script += "CREATE ROLE \(role) LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOBYPASSRLS;\n"
                script += "GRANT groupstore_user TO \(role);\nGRANT \(role) TO authenticator;\n"
            }
            try server.psql(script)
        }
    }

    extension PostgresServer {
        /// Client connections the server holds now (this count's own excluded).
        func clientConnections() throws -> Int {
            Int(
                try psql("SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()"))
                ?? 0
        }
    }
#endif  // Gateway
