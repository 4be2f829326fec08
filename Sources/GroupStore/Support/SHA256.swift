import CSHA256

/// SHA-256, for the cloud bridge's content-addressed assets and the
/// checksums of shipped schema migrations. Foundation on Linux has no digest,
/// and one function does not justify a crypto dependency; it is in C
/// (`CSHA256`) so debug builds hash megabytes in milliseconds.
package enum SHA256 {
    /// The digest of `bytes` as 64 lower-case hexadecimal digits.
    package static func hex(_ bytes: [UInt8]) -> String {
        var digest = [UInt8](repeating: 0, count: 32)
        bytes.withUnsafeBufferPointer { input in
            digest.withUnsafeMutableBufferPointer { output in
                gs_sha256(input.baseAddress, input.count, output.baseAddress)
            }
        }
        let digits = Array("0123456789abcdef".utf8)
        var out = [UInt8]()
        out.reserveCapacity(64)
        for byte in digest {
            out.append(digits[Int(byte >> 4)])
            out.append(digits[Int(byte & 0x0F)])
        }
        return String(decoding: out, as: UTF8.self)
    }
}
