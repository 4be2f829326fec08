import Foundation

/// Checks that a payload file is well formed (see `docs/PAYLOAD-FORMAT.md`).
enum PayloadValidator {
    /// Files larger than this are not read.
    static let maximumSize = 16 << 20

    /// What is wrong with `bytes` as the payload of `seq` by `author`, or `nil`.
    static func problem(with bytes: [UInt8]?, seq: Int64, author: String) -> String? {
        guard let bytes else { return "not a regular file, or larger than \(maximumSize) bytes" }
        guard let object = try? JSONSerialization.jsonObject(with: Data(bytes)), let payload = object as? [String: Any] else {
            return "not a JSON object (garbage or truncated)"
        }
        guard let format = payload["format"] as? Int else { return "no format version" }
        guard format == HistorySchema.formatVersion else { return "unknown format version \(format)" }
        guard let found = (payload["seq"] as? NSNumber)?.int64Value, found == seq else { return "seq does not match the file name" }
        guard payload["author"] as? String == author else { return "author does not match the member folder" }
        guard payload["committedAt"] is NSNumber, payload["changes"] is [Any] else { return "missing committedAt or changes" }
        return nil
    }
}
