#if Gateway
    import Foundation
    import GroupStoreCloud
    import GroupStoreCloudHTTP
    import HTTPTypes
    import Hummingbird
    import NIOCore

    /// The responses of the gateway: JSON answers, and failures as their
    /// status and ``GatewayWire/ErrorBody`` (a code the client turns back into
    /// the same ``CloudSyncError``, and one line).
    enum GatewayAnswer {
        static func json(_ value: some Encodable) -> Response {
            do {
                return Response(
                    status: .ok, headers: [.contentType: "application/json"],
                    body: ResponseBody(byteBuffer: ByteBuffer(bytes: try GatewayWire.encode(value))))
            } catch {
                return failure(CloudSyncError(.badRemote, "the gateway cannot encode its answer: \(error)"), metrics: nil)
            }
        }

        /// `error` as a response: a refused token 401, a role the gateway may not
        /// act as 403, any other ``CloudSyncError`` by its code, anything else 500.
        static func failure(_ error: any Error, metrics: GatewayMetrics?) -> Response {
            var status: Int
            var body: GatewayWire.ErrorBody
            var headers: HTTPFields = [.contentType: "application/json"]
            switch error {
            case let error as GatewayError where error.code == .unauthenticated:
                metrics?.refused("token")
                status = 401
                body = GatewayWire.ErrorBody(code: CloudSyncError.Code.unauthorized.rawValue, message: "token refused: \(error.message)")
                headers[.wwwAuthenticate] = "Bearer error=\"invalid_token\""
            case let error as CloudSyncError:
                status = error.code == .unauthorized ? 403 : GatewayStatus.status(of: error.code)
                body = GatewayWire.ErrorBody(code: error.code.rawValue, message: error.message, retryAfter: error.retryAfter)
                if let wait = error.retryAfter { headers[.retryAfter] = String(Int(wait.rounded(.up))) }
            default:
                status = 500
                body = GatewayWire.ErrorBody(code: CloudSyncError.Code.transient.rawValue, message: "the gateway failed: \(error)")
            }
            let bytes = (try? GatewayWire.encode(body)) ?? Data()
            return Response(
                status: HTTPResponse.Status(code: status), headers: headers, body: ResponseBody(byteBuffer: ByteBuffer(bytes: bytes)))
        }
    }

    /// The outermost middleware of the API: whatever a later middleware or the
    /// route throws becomes its status and ``GatewayWire/ErrorBody``
    /// (``GatewayAnswer/failure(_:metrics:)``), and every request is counted
    /// by operation and status, with its duration.
    struct GatewayAnswerMiddleware: RouterMiddleware {
        typealias Context = GatewayRequestContext
        let metrics: GatewayMetrics

        func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
            let started = ContinuousClock.now
            let response: Response
            do {
                response = try await next(request, context)
            } catch {
                response = GatewayAnswer.failure(error, metrics: metrics)
            }
            metrics.request(context.operation(of: request), status: response.status.code, elapsed: started.duration(to: .now))
            return response
        }
    }
#endif  // Gateway
