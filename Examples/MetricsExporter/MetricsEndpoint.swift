#if Prometheus
    import Foundation
    import Prometheus
    import Synchronization

    #if canImport(Glibc)
        import Glibc
    #endif

    /// A minimal HTTP/1.0 server for `GET /metrics` on 127.0.0.1, on a thread of
    /// its own (its blocking `accept` never runs on the Swift concurrency pool).
    final class MetricsEndpoint: Sendable {
        let port: UInt16
        private let socket: Int32
        private let registry: PrometheusCollectorRegistry
        private let stopped = Atomic<Bool>(false)

        init(port: UInt16, registry: PrometheusCollectorRegistry) throws {
            self.registry = registry
            let fd = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw EndpointError("cannot create a socket: errno \(errno)") }
            var yes: Int32 = 1
            setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, socklen_t(MemoryLayout<Int32>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let bound = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
            }
            guard bound == 0, listen(fd, 16) == 0 else {
                let code = errno
                close(fd)
                throw EndpointError("cannot listen on 127.0.0.1:\(port): \(String(cString: strerror(code)))")
            }
            var actual = sockaddr_in()
            var length = socklen_t(MemoryLayout<sockaddr_in>.size)
            _ = withUnsafeMutablePointer(to: &actual) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
            }
            self.port = UInt16(bigEndian: actual.sin_port)
            socket = fd
        }

        func start() {
            let thread = Thread { [self] in serve() }
            thread.name = "metrics-endpoint"
            thread.start()
        }

        func stop() {
            stopped.store(true, ordering: .relaxed)
            shutdown(socket, Int32(SHUT_RDWR))
        }

        private func serve() {
            defer { close(socket) }
            while !stopped.load(ordering: .relaxed) {
                let client = accept(socket, nil, nil)
                guard client >= 0 else {
                    if errno == EINTR { continue }
                    return
                }
                // A client that sends nothing, or stops reading, holds the
                // endpoint for 5 s at most.
                var timeout = timeval(tv_sec: 5, tv_usec: 0)
                setsockopt(client, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                setsockopt(client, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
                respond(client)
                close(client)
            }
        }

        private func respond(_ client: Int32) {
            var request = [UInt8](repeating: 0, count: 4096)
            let count = read(client, &request, request.count)
            guard count > 0 else { return }
            let line = String(decoding: request.prefix(count), as: UTF8.self).prefix { $0 != "\r" && $0 != "\n" }
            let (status, type, body): (String, String, [UInt8])
            if line.hasPrefix("GET /metrics ") || line == "GET /metrics" {
                (status, type, body) = ("200 OK", "text/plain; version=0.0.4", registry.emitToBuffer())
            } else {
                (status, type, body) = ("404 Not Found", "text/plain", Array("only GET /metrics is served\n".utf8))
            }
            let head = "HTTP/1.0 \(status)\r\nContent-Type: \(type)\r\nContent-Length: \(body.count)\r\nConnection: close\r\n\r\n"
            write(client, Array(head.utf8) + body)
        }

        private func write(_ client: Int32, _ bytes: [UInt8]) {
            var offset = 0
            while offset < bytes.count {
                // MSG_NOSIGNAL: a scraper that hung up must not kill the process with SIGPIPE.
                let written = bytes[offset...].withUnsafeBytes { send(client, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                if written <= 0 { return }
                offset += written
            }
        }
    }

    struct EndpointError: Error, CustomStringConvertible {
        var description: String
        init(_ description: String) { self.description = description }
    }
#endif  // Prometheus
