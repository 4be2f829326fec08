/// Names of payload files: `<seq, 20 digits>.v<format>.json`, e.g.
/// `00000000000000000042.v2.json`. Zero-padded so a plain `ls` lists them in
/// sequence order; the format version is in the name so a reader can skip an
/// unknown version without opening the file.
enum PayloadFileName {
    /// What a name in a member folder is.
    enum Parsed: Equatable {
        case payload(seq: Int64, format: Int)
        /// The member's own bookkeeping (`lock`, `cursor`).
        case bookkeeping
        /// Anything else: not ours.
        case foreign
    }

    static func name(seq: Int64, format: Int = Payload.formatVersion) -> String {
        let digits = String(seq)
        return String(repeating: "0", count: max(0, 20 - digits.count)) + digits + ".v\(format).json"
    }

    static func parse(_ name: String) -> Parsed {
        if name == MemberLock.fileName || name == CursorFile.fileName { return .bookkeeping }
        let utf8 = Array(name.utf8)
        guard utf8.count >= 28, name.hasSuffix(".json"), utf8[20] == UInt8(ascii: "."), utf8[21] == UInt8(ascii: "v") else {
            return .foreign
        }
        guard utf8[0..<20].allSatisfy({ $0 >= UInt8(ascii: "0") && $0 <= UInt8(ascii: "9") }),
            let seq = Int64(String(decoding: utf8[0..<20], as: UTF8.self)),
            let format = Int(String(decoding: utf8[22..<(utf8.count - 5)], as: UTF8.self)), format > 0
        else { return .foreign }
        return .payload(seq: seq, format: format)
    }
}
