#if Gateway
    import Foundation
    import XCTest

    /// A WebSocket client over a ``RawConnection`` (RFC 6455, text frames
    /// only, masked as a client's must be): the push connection as an
    /// attacker (or a test) speaks it, seeing the handshake's answer and each
    /// frame, close frames with their code and reason included.
    final class RawWebSocket {
        let connection: RawConnection
        /// The upgrade's answer (101 when it was accepted).
        let handshake: RawResponse
        private var pending: [UInt8] = []

        /// A frame from the gateway.
        enum Frame: Equatable {
            case text(String)
            case close(code: UInt16?, reason: String)
            case other(opcode: UInt8)
        }

        /// Sends the upgrade request for `/v1/push` with `headers`, and reads its answer.
        init(port: Int, headers: [String: String], timeout: TimeInterval = 15) throws {
            connection = try RawConnection(port: port)
            let lines = headers.map { "\($0.key): \($0.value)\r\n" }.joined()
            try connection.send(
                "GET /v1/push HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    + "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n\(lines)\r\n")
            // The answer's head only: frames may follow it in the same read.
            let end = Date().addingTimeInterval(timeout)
            var received: [UInt8] = []
            let separator = Array("\r\n\r\n".utf8)
            while true {
                if let index = received.indices.first(where: { received[$0...].starts(with: separator) }) {
                    let head = Array(received[..<(index + separator.count)])
                    pending = Array(received[(index + separator.count)...])
                    // A refusal's body (a 400's) follows its head; frames follow a 101's.
                    handshake = try RawResponse(head) ?? Self.withBody(head, &pending, connection, end)
                    return
                }
                let left = end.timeIntervalSinceNow
                guard left > 0, let bytes = connection.receive(timeout: left), !bytes.isEmpty else {
                    throw RawConnectionError("no answer to the upgrade within \(timeout) s")
                }
                received += bytes
            }
        }

        private static func withBody(_ head: [UInt8], _ body: inout [UInt8], _ connection: RawConnection, _ end: Date) throws -> RawResponse
        {
            while true {
                if let response = RawResponse(head + body) {
                    body = []
                    return response
                }
                guard let bytes = connection.receive(timeout: max(0, end.timeIntervalSinceNow)), !bytes.isEmpty else {
                    throw RawConnectionError("the upgrade's answer ended early: \(String(decoding: head + body, as: UTF8.self))")
                }
                body += bytes
            }
        }

        /// Sends a text frame, masked.
        func send(text: String) throws {
            let payload = Array(text.utf8)
            var frame: [UInt8] = [0x81]
            if payload.count < 126 {
                frame.append(0x80 | UInt8(payload.count))
            } else {
                frame.append(0x80 | 126)
                frame += [UInt8(payload.count >> 8), UInt8(payload.count & 0xFF)]
            }
            let mask: [UInt8] = (0..<4).map { _ in UInt8.random(in: 0...255) }
            frame += mask
            frame += payload.enumerated().map { $0.element ^ mask[$0.offset % 4] }
            try connection.send(frame)
        }

        /// The next frame within `timeout` seconds (pings skipped); `nil` when
        /// none came, or the connection closed without a close frame.
        func receive(timeout: TimeInterval) -> Frame? {
            let end = Date().addingTimeInterval(timeout)
            while true {
                if let (frame, used) = Self.parse(pending) {
                    pending.removeFirst(used)
                    if case .other(0x9) = frame { continue }
                    return frame
                }
                let left = end.timeIntervalSinceNow
                guard left > 0, let bytes = connection.receive(timeout: left), !bytes.isEmpty else { return nil }
                pending += bytes
            }
        }

        /// Frames until a close frame (returned) within `timeout` seconds.
        func closeFrame(timeout: TimeInterval) -> (code: UInt16?, reason: String)? {
            let end = Date().addingTimeInterval(timeout)
            while let frame = receive(timeout: max(0, end.timeIntervalSinceNow)) {
                if case .close(let code, let reason) = frame { return (code, reason) }
            }
            return nil
        }

        /// A whole unmasked frame at the start of `bytes`, and its length.
        private static func parse(_ bytes: [UInt8]) -> (Frame, Int)? {
            guard bytes.count >= 2 else { return nil }
            let opcode = bytes[0] & 0x0F
            var length = Int(bytes[1] & 0x7F)
            var offset = 2
            if length == 126 {
                guard bytes.count >= 4 else { return nil }
                length = Int(bytes[2]) << 8 | Int(bytes[3])
                offset = 4
            } else if length == 127 {
                guard bytes.count >= 10 else { return nil }
                length = bytes[2..<10].reduce(0) { $0 << 8 | Int($1) }
                offset = 10
            }
            guard bytes.count >= offset + length else { return nil }
            let payload = Array(bytes[offset..<(offset + length)])
            switch opcode {
            case 0x1: return (.text(String(decoding: payload, as: UTF8.self)), offset + length)
            case 0x8:
                let code = payload.count >= 2 ? UInt16(payload[0]) << 8 | UInt16(payload[1]) : nil
                return (.close(code: code, reason: String(decoding: payload.dropFirst(2), as: UTF8.self)), offset + length)
            default: return (.other(opcode: opcode), offset + length)
            }
        }
    }
#endif  // Gateway
