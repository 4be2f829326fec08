#if Postgres
    import Foundation
    import GroupStoreCloud

    /// A position in a zone's change feed on a PostgreSQL remote.
    ///
    /// - `p/<epoch>/<tx>/<seq>`: every change logged at or before `(tx, seq)`
    ///   (in the log's `(tx, seq)` order) has been delivered.
    /// - `l/<epoch>/<fence>/<type>/<name>`: a full listing under way: the live
    ///   rows of the zone's record types up to `type`'s row `name` (name hex
    ///   encoded) have been delivered; once it ends, the feed goes on from
    ///   `(fence, 0)`, the fence when the listing began (every change before it
    ///   is in the listing).
    enum PostgresChangeToken: Equatable {
        case position(epoch: String, tx: String, seq: Int64)
        case listing(epoch: String, fence: String, type: String, after: String)

        var token: CloudChangeToken {
            switch self {
            case .position(let epoch, let tx, let seq): return CloudChangeToken("p/\(epoch)/\(tx)/\(seq)")
            case .listing(let epoch, let fence, let type, let after):
                return CloudChangeToken("l/\(epoch)/\(fence)/\(Self.hex(type))/\(Self.hex(after))")
            }
        }

        var epoch: String {
            switch self {
            case .position(let epoch, _, _), .listing(let epoch, _, _, _): return epoch
            }
        }

        init?(_ token: CloudChangeToken) {
            let parts = token.rawValue.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
            if parts.count == 4, parts[0] == "p", UInt64(parts[2]) != nil, let seq = Int64(parts[3]) {
                self = .position(epoch: parts[1], tx: parts[2], seq: seq)
            } else if parts.count == 5, parts[0] == "l", UInt64(parts[2]) != nil, let type = Self.unhex(parts[3]),
                let after = Self.unhex(parts[4])
            {
                self = .listing(epoch: parts[1], fence: parts[2], type: type, after: after)
            } else {
                return nil
            }
        }

        private static func hex(_ text: String) -> String { text.utf8.map { String(format: "%02x", $0) }.joined() }

        private static func unhex(_ text: String) -> String? {
            guard text.count % 2 == 0 else { return nil }
            var bytes: [UInt8] = []
            var index = text.startIndex
            while index < text.endIndex {
                let next = text.index(index, offsetBy: 2)
                guard let byte = UInt8(text[index..<next], radix: 16) else { return nil }
                bytes.append(byte)
                index = next
            }
            return String(validating: bytes, as: UTF8.self)
        }
    }
#endif  // Postgres
