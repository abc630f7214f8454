package import Crypto
package import Foundation

/// Seals and opens token-store contents with AES-256-GCM: Courier's one implementation of
/// token encryption at rest, used by ``EncryptedFileTokenStore`` and by the stores of
/// Courier's other products.
///
/// A sealed value is `"CTKS"`, version byte `1`, an 8-byte key id (the first bytes of
/// HMAC-SHA-256 of a fixed label under the key, so a wrong key is told apart from tampering),
/// 4-byte big-endian ciphertext length, 12-byte nonce, ciphertext, 16-byte tag. The first
/// 17 bytes are authenticated together with the caller's `context`: a value sealed under
/// one context (a database row's key, say) fails to open under another.
///
/// The key is asked of the provider once and kept in memory.
package struct TokenSealer: Sendable {
    static let magic: [UInt8] = Array("CTKS".utf8)
    static let version: UInt8 = 1
    static let headerSize = 17
    static let nonceSize = 12
    static let tagSize = 16

    private let keyProvider: TokenStoreKeyProvider
    private let cachedKey = LockedBox<SymmetricKey?>(nil)
    /// Where the sealed data lives (a file path), for errors.
    private let location: String?

    /// Creates a sealer.
    ///
    /// - Parameters:
    ///   - keyProvider: Supplies the 256-bit key.
    ///   - location: The store's file, named in errors; `nil` for stores that are not files.
    package init(keyProvider: TokenStoreKeyProvider, location: String? = nil) {
        self.keyProvider = keyProvider
        self.location = location
    }

    /// The key, asked of the provider on first use.
    ///
    /// - Throws: ``CourierError/Kind/tokenStoreKeyUnavailable`` when the provider fails or
    ///   gives a key that is not 256 bits.
    package func key() async throws -> SymmetricKey {
        if let key = cachedKey.withLock({ $0 }) { return key }
        let key: SymmetricKey
        do {
            key = try await keyProvider.key()
        } catch let error as CourierError {
            throw error
        } catch {
            throw CourierError(
                kind: .tokenStoreKeyUnavailable,
                message: "the key provider failed: \(error)",
                path: location
            )
        }
        guard key.bitCount == 256 else {
            throw CourierError(
                kind: .tokenStoreKeyUnavailable,
                message: "the key has \(key.bitCount) bits; AES-256 needs 256",
                path: location
            )
        }
        cachedKey.withLock { $0 = key }
        return key
    }

    /// Seals `plaintext` with a fresh random nonce.
    ///
    /// - Parameters:
    ///   - plaintext: What to seal.
    ///   - key: The key from ``key()``.
    ///   - context: Authenticated with the header, not stored: the same bytes must be given
    ///     to open the result.
    /// - Returns: The sealed bytes.
    package func seal(_ plaintext: Data, key: SymmetricKey, context: Data = Data()) throws -> Data {
        guard plaintext.count <= Int(UInt32.max) else {
            throw CourierError(kind: .tokenStoreUnsupportedFormat, message: "the store is too large", path: location)
        }
        var header = Self.magic + [Self.version] + Self.keyID(key)
        let length = UInt32(plaintext.count)
        header += [
            UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF),
        ]
        do {
            let box = try AES.GCM.seal(
                plaintext,
                using: key,
                nonce: AES.GCM.Nonce(),
                authenticating: Data(header) + context
            )
            return Data(header) + Data(box.nonce) + box.ciphertext + box.tag
        } catch {
            throw CourierError(
                kind: .tokenStoreUnsupportedFormat,
                message: "AES-GCM sealing failed: \(error)",
                path: location
            )
        }
    }

    /// Opens what ``seal(_:key:context:)`` sealed.
    ///
    /// - Parameters:
    ///   - data: The sealed bytes.
    ///   - key: The key from ``key()``.
    ///   - context: The context it was sealed with.
    /// - Returns: The plaintext.
    /// - Throws: ``CourierError/Kind/tokenStoreTruncated``, ``CourierError/Kind/tokenStoreTampered``
    ///   (changed, or sealed under another context), ``CourierError/Kind/tokenStoreWrongKey`` or
    ///   ``CourierError/Kind/tokenStoreUnsupportedFormat``; never a garbage plaintext.
    package func open(_ data: Data, key: SymmetricKey, context: Data = Data()) throws -> Data {
        let bytes = [UInt8](data)
        let headerSize = Self.headerSize
        guard bytes.count >= headerSize else {
            // A prefix of a header (or nothing): a write that was cut, or a cut file.
            if bytes.isEmpty || Array(Self.magic.prefix(bytes.count)) == Array(bytes.prefix(Self.magic.count)) {
                throw CourierError(
                    kind: .tokenStoreTruncated,
                    message: "the store has \(bytes.count) bytes, less than a header",
                    path: location
                )
            }
            throw CourierError(
                kind: .tokenStoreUnsupportedFormat,
                message: "the data is not a Courier token store",
                path: location
            )
        }
        guard Array(bytes[0..<4]) == Self.magic else {
            throw CourierError(
                kind: .tokenStoreUnsupportedFormat,
                message: "the data is not a Courier token store",
                path: location
            )
        }
        guard bytes[4] == Self.version else {
            throw CourierError(
                kind: .tokenStoreUnsupportedFormat,
                message: "store format version \(bytes[4]) is not supported",
                path: location
            )
        }
        let length = Int(bytes[13]) << 24 | Int(bytes[14]) << 16 | Int(bytes[15]) << 8 | Int(bytes[16])
        let expected = headerSize + Self.nonceSize + length + Self.tagSize
        guard bytes.count >= expected else {
            throw CourierError(
                kind: .tokenStoreTruncated,
                message: "the store has \(bytes.count) of \(expected) bytes",
                path: location
            )
        }
        guard bytes.count == expected else {
            throw CourierError(
                kind: .tokenStoreTampered,
                message: "the store has \(bytes.count - expected) bytes more than its header says",
                path: location
            )
        }
        guard Array(bytes[5..<13]) == Self.keyID(key) else {
            throw CourierError(
                kind: .tokenStoreWrongKey,
                message: "the store was written with another key",
                path: location
            )
        }
        do {
            let nonceStart = headerSize
            let cipherStart = nonceStart + Self.nonceSize
            let tagStart = cipherStart + length
            let box = try AES.GCM.SealedBox(
                nonce: AES.GCM.Nonce(data: Data(bytes[nonceStart..<cipherStart])),
                ciphertext: Data(bytes[cipherStart..<tagStart]),
                tag: Data(bytes[tagStart..<expected])
            )
            return try AES.GCM.open(box, using: key, authenticating: Data(bytes[0..<headerSize]) + context)
        } catch {
            throw CourierError(
                kind: .tokenStoreTampered,
                message: "the store failed authentication: it was changed, or sealed for another entry",
                path: location
            )
        }
    }

    static func keyID(_ key: SymmetricKey) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Data("courier token store key id v1".utf8), using: key).prefix(8))
    }
}
