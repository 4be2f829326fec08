#if Prometheus
    import Foundation
    import XCTest

    #if canImport(Glibc)
        import Glibc
    #endif

    /// The Prometheus example: a member whose store metrics are scraped over HTTP
    /// while other processes (the CLI, and a writer outside the library) commit.
    final class MetricsExporterProcessTests: ProcessTestCase {
        func testExporter_servesTheStoreMetrics_afterSavesOfOtherProcesses() throws {
            let exporter = try spawn("metrics-exporter", ["--group", group, "--member", "exporter", "--port", "0"], name: "exporter")
            try exporter.waitForStderr("serving metrics on")
            try exporter.waitForStderr("joined group")
            let announced = exporter.errors.first { $0.contains("serving metrics on") } ?? ""
            let port = try XCTUnwrap(UInt16(announced.split(separator: ":").last?.split(separator: "/").first ?? ""), announced)

            let exec = try spawn(
                "groupstore",
                [
                    "exec", "--group", group, "--member", "cli", "--sql",
                    "CREATE TABLE t(id INTEGER PRIMARY KEY); INSERT INTO t(id) VALUES (1)",
                ])
            XCTAssertEqual(try exec.waitForExit(timeout: 60), 0, "\(exec.errors)")
            let shell = try spawn(
                "/usr/bin/sqlite3", ["-bail", "-cmd", ".timeout 10000", group + "/store.sqlite", "INSERT INTO t(id) VALUES (2)"])
            XCTAssertEqual(try shell.waitForExit(timeout: 60), 0, "\(shell.errors)")
            try exporter.waitForStderr("by (external)")

            let body = try get(port: port, path: "/metrics")
            XCTAssertTrue(body.hasPrefix("HTTP/1.0 200"), body)
            let labels = #"{group="\#(group)",member="exporter"}"#
            XCTAssertTrue(body.contains("groupstore_saves_delivered_total\(labels) 2\n"), body)
            XCTAssertTrue(body.contains("groupstore_member_lag\(labels) 0"), body)
            XCTAssertTrue(body.contains("groupstore_merge_seconds_count\(labels) "), body)
            XCTAssertTrue(try get(port: port, path: "/other").hasPrefix("HTTP/1.0 404"))

            exporter.send(SIGTERM)
            XCTAssertEqual(try exporter.waitForExit(timeout: 30), 0, "\(exporter.errors.suffix(5))")
        }

        /// The whole HTTP response to `GET path` on 127.0.0.1.
        private func get(port: UInt16, path: String) throws -> String {
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            defer { close(fd) }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else { throw POSIXError(.ECONNREFUSED) }
            let request = Array("GET \(path) HTTP/1.0\r\n\r\n".utf8)
            _ = request.withUnsafeBytes { Glibc.write(fd, $0.baseAddress, $0.count) }
            var response: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65536)
            while true {
                let count = Glibc.read(fd, &buffer, buffer.count)
                if count <= 0 { break }
                response += buffer.prefix(count)
            }
            return String(decoding: response, as: UTF8.self)
        }
    }
#endif  // Prometheus
