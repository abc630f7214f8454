/// Where a token is kept: by client id and authorization level.
public struct TokenStoreKey: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The OAuth 2.0 client id.
    public var clientID: String
    /// The authorization level.
    public var level: AuthorizationLevel

    /// Creates a key.
    ///
    /// - Parameters:
    ///   - clientID: The client id.
    ///   - level: The level.
    public init(clientID: String, level: AuthorizationLevel) {
        self.clientID = clientID
        self.level = level
    }

    /// `clientID/level`.
    public var description: String { "\(clientID)/\(level)" }
}

/// Keeps tokens, by client id and authorization level.
///
/// A ``TokenBroker`` reads its level's token once, on first use, and writes every token it
/// obtains — with refresh-token rotation the new refresh token replaces the old one in one
/// write. Courier ships ``InMemoryTokenStore`` and ``EncryptedFileTokenStore``.
///
/// ### Implement a store
///
/// Keep each write atomic (a reader sees the old token or the new one, never a mix), and
/// throw rather than return a damaged token:
///
/// ```swift
/// actor KeychainLikeStore: TokenStore {
///     func token(for key: TokenStoreKey) async throws -> OAuth2Token? {
///         try vault.read(key.description).map { try JSONDecoder().decode(OAuth2Token.self, from: $0) }
///     }
///     func setToken(_ token: OAuth2Token?, for key: TokenStoreKey) async throws {
///         try vault.write(key.description, token.map { try JSONEncoder().encode($0) })
///     }
/// }
/// ```
public protocol TokenStore: Sendable {
    /// The token stored under `key`.
    ///
    /// - Parameter key: Client id and level.
    /// - Returns: The token, or `nil` when there is none.
    /// - Throws: ``TokenStoreError`` when the store cannot be read or is damaged.
    func token(for key: TokenStoreKey) async throws -> OAuth2Token?

    /// Stores a token under `key`, replacing what was there; `nil` removes it.
    ///
    /// - Parameters:
    ///   - token: The token, or `nil`.
    ///   - key: Client id and level.
    /// - Throws: ``TokenStoreError`` when the store cannot be written.
    func setToken(_ token: OAuth2Token?, for key: TokenStoreKey) async throws

    /// Removes every token of a client, at every level (logout).
    ///
    /// - Parameter clientID: The client id.
    /// - Throws: ``TokenStoreError`` when the store cannot be written.
    func removeTokens(clientID: String) async throws
}

/// Tokens in memory, lost when the process ends. The default store.
public final class InMemoryTokenStore: TokenStore {
    private let tokens = LockedBox<[TokenStoreKey: OAuth2Token]>([:])

    /// Creates an empty store.
    public init() {}

    /// The token under `key`.
    public func token(for key: TokenStoreKey) async throws -> OAuth2Token? {
        tokens.withLock { $0[key] }
    }

    /// Stores or removes the token under `key`.
    public func setToken(_ token: OAuth2Token?, for key: TokenStoreKey) async throws {
        tokens.withLock { $0[key] = token }
    }

    /// Removes every token of the client.
    public func removeTokens(clientID: String) async throws {
        tokens.withLock { tokens in tokens = tokens.filter { $0.key.clientID != clientID } }
    }
}

/// A token store could not be read or written, or its contents are damaged.
///
/// A damaged store is always an error, never a garbage token (security invariant 5).
public struct TokenStoreError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kinds of store failure.
    public enum Kind: String, Sendable, Hashable, CaseIterable {
        /// The file was changed: authentication of the encrypted contents failed.
        case tampered
        /// The file is shorter than its header says: a write was cut off or the file was cut.
        case truncated
        /// The file was written with another key.
        case wrongKey
        /// The file is not a Courier token store, or a version this Courier cannot read.
        case unsupportedFormat
        /// The key provider failed or returned a key of the wrong size.
        case keyUnavailable
        /// A file operation failed (see ``TokenStoreError/message`` for the errno text).
        case io
        /// The contents decrypted but did not decode, or the tokens could not be encoded.
        case encodingFailed
    }

    /// The kind of failure.
    public let kind: Kind
    /// What happened, for people; never holds a token or the key.
    public let message: String
    /// The store's file, when it has one.
    public let path: String?

    /// Creates an error.
    ///
    /// - Parameters:
    ///   - kind: The kind of failure.
    ///   - message: What happened.
    ///   - path: The store's file.
    public init(kind: Kind, message: String, path: String? = nil) {
        self.kind = kind
        self.message = message
        self.path = path
    }

    /// A value that matches every error of `kind`, for `==` comparisons.
    ///
    /// - Parameter kind: The kind to match.
    /// - Returns: An error with that kind.
    public static func kind(_ kind: Kind) -> TokenStoreError { TokenStoreError(kind: kind, message: "") }

    /// Matches any ``Kind/tampered``.
    public static let tampered = kind(.tampered)
    /// Matches any ``Kind/truncated``.
    public static let truncated = kind(.truncated)
    /// Matches any ``Kind/wrongKey``.
    public static let wrongKey = kind(.wrongKey)
    /// Matches any ``Kind/unsupportedFormat``.
    public static let unsupportedFormat = kind(.unsupportedFormat)

    /// Errors are equal when their kinds are.
    public static func == (lhs: TokenStoreError, rhs: TokenStoreError) -> Bool { lhs.kind == rhs.kind }

    /// Hashes the kind.
    public func hash(into hasher: inout Hasher) { hasher.combine(kind) }

    /// The kind, the path and the message.
    public var description: String {
        "TokenStoreError.\(kind.rawValue)" + (path.map { " (\($0))" } ?? "") + (message.isEmpty ? "" : ": \(message)")
    }
}
