#if Gateway
    import AsyncHTTPClient
    import Foundation
    import GroupStore
    import GroupStoreCloud
    import Logging
    import NIOCore
    import NIOHTTP1
    import NIOSSL
    import Synchronization

    /// One request to the gateway and its answer, or the ``CloudSyncError`` it
    /// stands for: the error the gateway named (its code and line), or a
    /// transient one when no gateway could be reached or it answered nothing
    /// readable (another gateway is tried next).
    final class GatewayTransport: Sendable {
        let endpoints: GatewayEndpoints
        let origin: String
        let timeout: TimeAmount
        let logger: Logger
        private let client: HTTPClient
        private let tls: TLSConfiguration?
        private let token: Mutex<String>
        private let tokenFile: String?
        /// The most bytes an answer may have.
        static let maxAnswerBytes = 256 * 1024 * 1024

        init(
            endpoints: GatewayEndpoints, token: String, tokenFile: String?, trustRoots: String?, timeout: TimeInterval, origin: String,
            client: HTTPClient, logger: Logger
        ) {
            self.endpoints = endpoints
            self.token = Mutex(token)
            self.tokenFile = tokenFile
            self.timeout = .milliseconds(Int64(timeout * 1000))
            self.origin = origin
            self.logger = logger
            self.client = client
            if let trustRoots {
                var tls = TLSConfiguration.makeClientConfiguration()
                tls.trustRoots = .file(trustRoots)
                self.tls = tls
            } else {
                tls = nil
            }
        }

        /// The TLS configuration of the push connection (`nil`: the default).
        var tlsConfiguration: TLSConfiguration? { tls }

        /// The bearer token in use.
        var bearer: String { token.withLock { $0 } }

        /// `answer` decoded from what `method path` with `body` answered.
        func call<Answer: Decodable>(
            _ method: HTTPMethod, _ path: String, json body: (some Encodable)?, as answer: Answer.Type, doing what: String
        ) async throws -> Answer {
            try await routed { try await callIfRouted(method, path, json: body, as: answer, doing: what) }
        }

        /// ``call(_:_:json:as:doing:)``; throws ``RouteMissing`` when the
        /// gateway has no such route (a 404 that is not one of its own errors:
        /// a gateway of an older build).
        func callIfRouted<Answer: Decodable>(
            _ method: HTTPMethod, _ path: String, json body: (some Encodable)?, as answer: Answer.Type, doing what: String
        ) async throws -> Answer {
            let bytes = try body.map { try GatewayWire.encode($0) }
            let data = try await sendIfRouted(method, path, body: bytes.map { [UInt8]($0) }, contentType: "application/json", doing: what)
            do {
                return try GatewayWire.decode(Answer.self, from: Data(data))
            } catch {
                throw CloudSyncError(
                    .transient, "\(endpoints.description) answered \(what) with something that is not its protocol", underlying: error)
            }
        }

        /// The bytes `method path` answered; after a 401 with a token file, the
        /// file is read again and, if it changed, the request is sent once more.
        func send(_ method: HTTPMethod, _ path: String, body: [UInt8]?, contentType: String, doing what: String) async throws -> [UInt8] {
            try await routed { try await sendIfRouted(method, path, body: body, contentType: contentType, doing: what) }
        }

        /// `request`'s answer; a route the gateway lacks is the error it stands for.
        private func routed<T>(_ request: () async throws -> T) async throws -> T {
            do {
                return try await request()
            } catch let missing as RouteMissing {
                throw missing.error
            }
        }

        /// ``send(_:_:body:contentType:doing:)``; throws ``RouteMissing`` as
        /// ``callIfRouted(_:_:json:as:doing:)`` does.
        private func sendIfRouted(_ method: HTTPMethod, _ path: String, body: [UInt8]?, contentType: String, doing what: String)
            async throws
            -> [UInt8]
        {
            do {
                return try await sendOnce(method, path, body: body, contentType: contentType, doing: what)
            } catch let error as CloudSyncError where error.code == .unauthorized {
                guard await renewedToken() else { throw error }
                return try await sendOnce(method, path, body: body, contentType: contentType, doing: what)
            }
        }

        /// After the gateway refused the token: whether the token file holds
        /// another one now (then in use from now on).
        func renewedToken() async -> Bool {
            guard let tokenFile, let fresh = try? await offThePool({ try Self.readToken(tokenFile) }), fresh != bearer else { return false }
            token.withLock { $0 = fresh }
            logger.info("token file changed: the gateway is sent the new token", metadata: ["file": "\(tokenFile)"])
            return true
        }

        private func sendOnce(_ method: HTTPMethod, _ path: String, body: [UInt8]?, contentType: String, doing what: String) async throws
            -> [UInt8]
        {
            let base = endpoints.base
            var request = HTTPClientRequest(url: base + GatewayWire.apiPrefix + path)
            request.method = method
            request.headers.add(name: "Authorization", value: "Bearer " + bearer)
            request.headers.add(name: GatewayWire.originHeader, value: origin)
            if let body {
                request.headers.add(name: "Content-Type", value: contentType)
                request.body = .bytes(ByteBuffer(bytes: body))
            }
            request.tlsConfiguration = tls
            let status: Int
            let headers: HTTPHeaders
            var answer: ByteBuffer
            do {
                let response = try await client.execute(request, timeout: timeout, logger: logger)
                status = Int(response.status.code)
                headers = response.headers
                answer = try await response.body.collect(upTo: Self.maxAnswerBytes)
            } catch {
                endpoints.failed(base)
                throw CloudSyncError(.transient, "cannot reach the gateway \(base) to \(what): \(Self.reason(error))", underlying: error)
            }
            let bytes = answer.readBytes(length: answer.readableBytes) ?? []
            guard (200..<300).contains(status) else {
                let error = failure(status: status, headers: headers, body: bytes, doing: what)
                if status == 404, (try? GatewayWire.decode(GatewayWire.ErrorBody.self, from: Data(bytes))) == nil {
                    throw RouteMissing(error: error)
                }
                throw error
            }
            return bytes
        }

        /// The gateway answered 404 without an error of its own: it has no
        /// such route (an older build). `error` is what a caller that cannot
        /// do without the route throws.
        struct RouteMissing: Error {
            let error: CloudSyncError
        }

        /// The error a failed answer stands for.
        private func failure(status: Int, headers: HTTPHeaders, body: [UInt8], doing what: String) -> CloudSyncError {
            let retryAfter = headers.first(name: "Retry-After").flatMap(Double.init)
            if let named = try? GatewayWire.decode(GatewayWire.ErrorBody.self, from: Data(body)) {
                let code = CloudSyncError.Code.all[named.code] ?? GatewayStatus.code(of: status)
                return CloudSyncError(code, named.message, retryAfter: named.retryAfter ?? retryAfter)
            }
            return CloudSyncError(
                GatewayStatus.code(of: status), "the gateway \(endpoints.base) answered \(what) with HTTP \(status)", retryAfter: retryAfter
            )
        }

        static func reason(_ error: any Error) -> String {
            if let error = error as? HTTPClientError { return "\(error)" }
            return String(describing: error)
        }

        /// A token file's token: its first line, trimmed.
        static func readToken(_ path: String) throws -> String {
            let text = try String(contentsOfFile: path, encoding: .utf8)
            return text.split(whereSeparator: \.isNewline).first.map { $0.trimmingCharacters(in: .whitespaces) } ?? ""
        }
    }
#endif  // Gateway
