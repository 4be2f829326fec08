#if Gateway
    import Foundation
    import GroupStoreCloud
    import Synchronization
    import HummingbirdWSClient

    /// Saves sent on the push connection instead of as requests (see
    /// ``GatewayWire/PushMessage``): with a gateway whose `subscribed` said
    /// it takes them, a `/v1/modify-checked` goes as a `save` frame and its
    /// `saved` frame answers it. That spares the HTTP request around it,
    /// which was half of what a gateway added to a save (docs/PERFORMANCE.md).
    ///
    /// ``save(_:timeout:)`` answers `nil` (send the request instead) while no
    /// connection is open that takes saves, and for a save larger than a
    /// frame. A save whose connection ends before its answer fails as
    /// ``GroupStoreCloud/CloudSyncError/Code/transient``: its outcome is
    /// unknown, as for a request whose connection dropped, and the bridge
    /// saves again (its tags and the history's mark make that safe).
    final class PushSaves: Sendable {
        private struct Connection {
            let number: Int
            let outbound: WebSocketOutboundWriter
            var takesSaves = false
        }

        /// A save sent on connection `connection`: its answer, once it came
        /// before its caller waits for it, or the caller waiting.
        private struct Sent {
            let connection: Int
            var answer: Result<GatewayWire.ModifyAnswer, any Error>?
            var waiting: CheckedContinuation<GatewayWire.ModifyAnswer, any Error>?
        }

        private struct State {
            var connection: Connection?
            var connections = 0
            var next = 0
            var sent: [Int: Sent] = [:]
        }

        private let state = Mutex(State())
        /// What the gateway is called in messages.
        let gateway: String
        /// Each save written on a connection, by its id (for tests: a save under way).
        let written = Broadcast<Int>()

        init(gateway: String) { self.gateway = gateway }

        /// A push connection opened, writing on `outbound`; its number (for ``ended(_:)`` and ``takesSaves(_:)``).
        func opened(_ outbound: WebSocketOutboundWriter) -> Int {
            state.withLock { state in
                state.connections += 1
                state.connection = Connection(number: state.connections, outbound: outbound)
                return state.connections
            }
        }

        /// Connection `number`'s gateway said whether it takes saves.
        func takesSaves(_ number: Int, _ takes: Bool) {
            state.withLock { state in
                if state.connection?.number == number { state.connection?.takesSaves = takes }
            }
        }

        /// Connection `number` ended: the saves it carries fail, their outcome unknown.
        func ended(_ number: Int) {
            let ids = state.withLock { state in
                if state.connection?.number == number { state.connection = nil }
                return state.sent.filter { $0.value.connection == number }.map(\.key)
            }
            for id in ids {
                settle(
                    id,
                    .failure(
                        CloudSyncError(
                            .transient, "the push connection to \(gateway) ended before it answered save records; its outcome is unknown")))
            }
        }

        /// A `saved` frame: the answer of the save it names (one no longer waited for is dropped).
        func answered(_ message: GatewayWire.PushMessage) {
            guard let id = message.id else { return }
            if let answer = message.saved { return settle(id, .success(answer)) }
            let body = message.error ?? GatewayWire.ErrorBody(code: "", message: "\(gateway) answered save records with nothing")
            settle(
                id, .failure(CloudSyncError(CloudSyncError.Code.all[body.code] ?? .transient, body.message, retryAfter: body.retryAfter)))
        }

        /// The answer to `request` sent on the push connection, or `nil` when
        /// it cannot go there (no connection that takes saves, or too large).
        /// - Throws: what the gateway answered; ``GroupStoreCloud/CloudSyncError/Code/transient``
        ///   when the connection ends first or no answer came within `timeout`.
        func save(_ request: GatewayWire.ModifyRequest, timeout: Duration) async throws -> GatewayWire.ModifyAnswer? {
            let id = state.withLock { state in
                state.next += 1
                return state.next
            }
            let frame = try GatewayWire.encode(GatewayWire.PushMessage.save(request, id: id))
            guard frame.count <= GatewayWire.maxPushBytes,
                let outbound = state.withLock({ state -> WebSocketOutboundWriter? in
                    guard let connection = state.connection, connection.takesSaves else { return nil }
                    state.sent[id] = Sent(connection: connection.number)
                    return connection.outbound
                })
            else { return nil }
            let timer = Task {
                try await Task.sleep(for: timeout)
                self.settle(
                    id,
                    .failure(
                        CloudSyncError(.transient, "\(self.gateway) did not answer save records within \(timeout); its outcome is unknown"))
                )
            }
            defer { timer.cancel() }
            do {
                try await outbound.write(.text(String(decoding: frame, as: UTF8.self)))
                written.yield(id)
            } catch {
                settle(id, .failure(CloudSyncError(.transient, "cannot send save records to \(gateway): \(error)", underlying: error)))
            }
            return try await withTaskCancellationHandler {
                try await withCheckedThrowingContinuation { continuation in
                    let answer = state.withLock { state -> Result<GatewayWire.ModifyAnswer, any Error>? in
                        guard let sent = state.sent[id] else { preconditionFailure("save \(id) was forgotten before it was answered") }
                        guard let answer = sent.answer else {
                            state.sent[id]?.waiting = continuation
                            return nil
                        }
                        state.sent[id] = nil
                        return answer
                    }
                    if let answer { continuation.resume(with: answer) }
                }
            } onCancel: {
                settle(id, .failure(CancellationError()))
            }
        }

        /// Save `id` ends with `answer`: its caller is resumed, or finds the
        /// answer when it waits. The first answer stays.
        private func settle(_ id: Int, _ answer: Result<GatewayWire.ModifyAnswer, any Error>) {
            let waiting = state.withLock { state -> CheckedContinuation<GatewayWire.ModifyAnswer, any Error>? in
                guard let sent = state.sent[id], sent.answer == nil else { return nil }
                guard let waiting = sent.waiting else {
                    state.sent[id]?.answer = answer
                    return nil
                }
                state.sent[id] = nil
                return waiting
            }
            waiting?.resume(with: answer)
        }
    }
#endif  // Gateway
