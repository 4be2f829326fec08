#if Gateway
    import Foundation
    import XCTest

    #if canImport(Glibc)
        import Glibc
    #endif

    /// A TCP connection to a gateway on loopback with blocking reads bounded
    /// by a timeout: what an attacker (or a careless client) holds. For
    /// synchronous tests (never on the Swift concurrency pool).
    final class RawConnection {
        let fd: Int32

        /// Connects to `127.0.0.1:port`.
        init(port: Int) throws {
            fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw RawConnectionError("socket: errno \(errno)") }
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard connected == 0 else {
                let code = errno
                close(fd)
                throw RawConnectionError("connect to 127.0.0.1:\(port): errno \(code)")
            }
        }

        deinit { close(fd) }

        func send(_ text: String) throws { try send(Array(text.utf8)) }

        func send(_ bytes: [UInt8]) throws {
            var sent = 0
            while sent < bytes.count {
                let count = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard count > 0 else { throw RawConnectionError("send: errno \(errno)") }
                sent += count
            }
        }

        /// Up to `limit` bytes, waiting at most `timeout` seconds: `nil` when
        /// nothing came in time, `[]` when the gateway closed the connection
        /// (or reset it).
        func receive(limit: Int = 65536, timeout: TimeInterval) -> [UInt8]? {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, Int32(timeout * 1000)) > 0 else { return nil }
            var buffer = [UInt8](repeating: 0, count: limit)
            let count = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, limit, 0) }
            return count > 0 ? Array(buffer.prefix(count)) : []
        }

        /// Everything the gateway sends until it closes the connection, or
        /// `nil` if it has not closed it within `timeout` seconds.
        func readUntilClosed(timeout: TimeInterval) -> [UInt8]? {
            let end = Date().addingTimeInterval(timeout)
            var received: [UInt8] = []
            while true {
                let left = end.timeIntervalSinceNow
                guard left > 0, let bytes = receive(timeout: left) else { return nil }
                if bytes.isEmpty { return received }
                received += bytes
            }
        }

        /// One HTTP response's head and body (by `Content-Length`), read within `timeout` seconds.
        func readResponse(timeout: TimeInterval) throws -> RawResponse {
            let end = Date().addingTimeInterval(timeout)
            var received: [UInt8] = []
            while true {
                if let response = RawResponse(received) { return response }
                let left = end.timeIntervalSinceNow
                guard left > 0, let bytes = receive(timeout: left) else {
                    throw RawConnectionError("no whole response within \(timeout) s (got \(received.count) bytes)")
                }
                guard !bytes.isEmpty else {
                    throw RawConnectionError(
                        "the connection closed after \(received.count) bytes: \(String(decoding: received, as: UTF8.self))")
                }
                received += bytes
            }
        }
    }

    /// An HTTP/1.1 response read off a ``RawConnection``.
    struct RawResponse {
        var status: Int
        /// Header names lowercased.
        var headers: [String: String]
        var body: String

        /// The `message` of its body (a ``GatewayWire/ErrorBody``), or the body.
        var message: String {
            let object = try? JSONSerialization.jsonObject(with: Data(body.utf8)) as? [String: Any]
            return object?["message"] as? String ?? body
        }

        /// The response at the start of `bytes`, if they hold all of it.
        init?(_ bytes: [UInt8]) {
            let separator: [UInt8] = Array("\r\n\r\n".utf8)
            guard let end = bytes.indices.first(where: { bytes[$0...].starts(with: separator) }) else { return nil }
            let head = String(decoding: bytes[..<end], as: UTF8.self).components(separatedBy: "\r\n")
            guard let statusLine = head.first, statusLine.split(separator: " ").count >= 2,
                let status = Int(statusLine.split(separator: " ")[1])
            else { return nil }
            var headers: [String: String] = [:]
            for line in head.dropFirst() {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            }
            let length = Int(headers["content-length"] ?? "0") ?? 0
            let bodyStart = end + separator.count
            guard bytes.count >= bodyStart + length else { return nil }
            self.status = status
            self.headers = headers
            body = String(decoding: bytes[bodyStart..<(bodyStart + length)], as: UTF8.self)
        }
    }

    struct RawConnectionError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }

    extension RawConnection {
        /// `GET path` on a connection of its own; its response within `timeout` seconds.
        static func get(_ path: String, port: Int, headers: [String: String] = [:], timeout: TimeInterval) throws -> RawResponse {
            let connection = try RawConnection(port: port)
            let lines = headers.map { "\($0.key): \($0.value)\r\n" }.joined()
            try connection.send("GET \(path) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(lines)Connection: close\r\n\r\n")
            return try connection.readResponse(timeout: timeout)
        }
    }
#endif  // Gateway
