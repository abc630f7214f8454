/// FNV-1a, 64 bits: a hash that is the same in every process, on every platform and in
/// every version of Courier, unlike Swift's `Hasher`, which is seeded per process.
///
/// Offset basis 0xcbf29ce484222325, prime 0x100000001b3; for each byte, XOR then multiply
/// (wrapping). Rendered as 16 lower-case hex digits.
enum StableHash {
    static let offsetBasis: UInt64 = 0xcbf2_9ce4_8422_2325
    static let prime: UInt64 = 0x0000_0100_0000_01b3

    /// The FNV-1a 64 hash of the UTF-8 bytes of `text`.
    static func fnv1a64(_ text: String) -> UInt64 {
        var hash = offsetBasis
        for byte in text.utf8 {
            hash ^= UInt64(byte)
            hash &*= prime
        }
        return hash
    }

    /// `fnv1a64(text)` as 16 lower-case hex digits.
    static func hex(_ text: String) -> String {
        let digits = String(fnv1a64(text), radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
