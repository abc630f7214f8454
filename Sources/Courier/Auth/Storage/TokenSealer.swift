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
/// The key is asked of the provider once and kept in memory, and so are the keys the provider
/// accepts (``TokenStoreKeyProvider/accepting(_:)``): ``open(_:key:context:)`` opens a value
/// whose key id is that of an accepted key with that key, and ``seal(_:key:context:)`` always
/// seals with the current one, so a store re-seals what it writes under the current key. A
/// store that writes one entry at a time can find the entries still sealed under another key
/// with ``isSealed(_:under:)`` and write them again to finish a change of key.
package struct TokenSealer: Sendable {
    static let magic: [UInt8] = Array("CTKS".utf8)
    static let version: UInt8 = 1
    static let headerSize = 17
    static let nonceSize = 12
    static let tagSize = 16

    private let keyProvider: TokenStoreKeyProvider
    private let cachedKey = LockedBox<SymmetricKey?>(nil)
    private let acceptedKeys: AcceptedTokenStoreKeys
    /// Where the sealed data lives (a file path), for errors.
    private let location: String?

    /// Creates a sealer.
    ///
    /// - Parameters:
    ///   - keyProvider: Supplies the 256-bit key.
    ///   - location: The store's file, named in errors; `nil` for stores that are not files.
    package init(keyProvider: TokenStoreKeyProvider, location: String? = nil) {
        self.keyProvider = keyProvider
        self.acceptedKeys = AcceptedTokenStoreKeys(keyProvider.acceptedProviders)
        self.location = location
    }

    /// The key, asked of the provider on first use; the provider's accepted keys are asked
    /// for with it (their failures are kept for ``open(_:key:context:)`` to report, not thrown).
    ///
    /// - Throws: ``CourierError/Kind/tokenStoreKeyUnavailable`` when the provider fails or
    ///   gives a key that is not 256 bits.
    package func key() async throws -> SymmetricKey {
        let key = try await currentKey()
        await acceptedKeys.load()
        return key
    }

    /// Whether `data` was sealed under `key`, judged by the key id in its header; `false`
    /// for data that is not a sealed value. A store uses it to find the entries that a change
    /// of key has yet to reach, and writes those again.
    ///
    /// - Parameters:
    ///   - data: A sealed value.
    ///   - key: The key from ``key()``.
    /// - Returns: Whether its header names `key`.
    package func isSealed(_ data: Data, under key: SymmetricKey) -> Bool {
        let bytes = [UInt8](data.prefix(Self.headerSize))
        return bytes.count == Self.headerSize && Array(bytes[0..<4]) == Self.magic && bytes[4] == Self.version
            && Array(bytes[5..<13]) == Self.keyID(key)
    }

    /// The provider's own key, asked for once.
    private func currentKey() async throws -> SymmetricKey {
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
    ///   - key: The key from ``key()``. A value sealed under one of the provider's accepted
    ///     keys opens with that key.
    ///   - context: The context it was sealed with.
    /// - Returns: The plaintext.
    /// - Throws: ``CourierError/Kind/tokenStoreTruncated``, ``CourierError/Kind/tokenStoreTampered``
    ///   (changed, or sealed under another context), ``CourierError/Kind/tokenStoreWrongKey``
    ///   (sealed under neither `key` nor an accepted key) or
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
        let keyID = Array(bytes[5..<13])
        let openingKey: SymmetricKey
        if keyID == Self.keyID(key) {
            openingKey = key
        } else if let accepted = acceptedKeys.key(withID: keyID) {
            openingKey = accepted
        } else {
            throw wrongKey()
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
            return try AES.GCM.open(box, using: openingKey, authenticating: Data(bytes[0..<headerSize]) + context)
        } catch {
            throw CourierError(
                kind: .tokenStoreTampered,
                message: "the store failed authentication: it was changed, or sealed for another entry",
                path: location
            )
        }
    }

    /// The error for a value sealed under a key the sealer does not hold, naming the accepted
    /// keys that could not be loaded (which are then asked for again on the next ``key()``).
    private func wrongKey() -> CourierError {
        let failures = acceptedKeys.failuresToRetry()
        var message = "the store was written with another key"
        if !failures.isEmpty {
            message += "; \(failures.count) accepted key(s) could not be loaded: " + failures.joined(separator: "; ")
        }
        return CourierError(kind: .tokenStoreWrongKey, message: message, path: location)
    }

    /// The 8 bytes that name `key` in a sealed value's header.
    /// `token` as JSON, sealed under the current key for `context`: one entry of a store that
    /// seals each token on its own (the entry's key as context).
    ///
    /// - Throws: ``CourierError/Kind/tokenStoreKeyUnavailable``, or
    ///   ``CourierError/Kind/tokenStoreUnsupportedFormat`` when the token does not encode.
    package func sealToken(_ token: OAuth2Token, context: Data) async throws -> Data {
        let encoder = JSONEncoder()
        encoder.dateEncodingStrategy = .secondsSince1970
        encoder.outputFormatting = .sortedKeys
        let plaintext: Data
        do {
            plaintext = try encoder.encode(token)
        } catch {
            throw CourierError(
                kind: .tokenStoreUnsupportedFormat,
                message: "the token does not encode: \(error)",
                path: location
            )
        }
        return try seal(plaintext, key: try await key(), context: context)
    }

    /// The token that ``sealToken(_:context:)`` sealed for `context`.
    ///
    /// - Throws: What ``open(_:key:context:)`` throws, or
    ///   ``CourierError/Kind/tokenStoreUnsupportedFormat`` when the plaintext is not a token.
    package func openToken(_ sealed: Data, context: Data) async throws -> OAuth2Token {
        let plaintext = try open(sealed, key: try await key(), context: context)
        do {
            let decoder = JSONDecoder()
            decoder.dateDecodingStrategy = .secondsSince1970
            return try decoder.decode(OAuth2Token.self, from: plaintext)
        } catch {
            throw CourierError(
                kind: .tokenStoreUnsupportedFormat,
                message: "a decrypted token does not decode",
                path: location
            )
        }
    }

    static func keyID(_ key: SymmetricKey) -> [UInt8] {
        Array(HMAC<SHA256>.authenticationCode(for: Data("courier token store key id v1".utf8), using: key).prefix(8))
    }
}
