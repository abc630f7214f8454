/// Where a token is kept: by client id, authorization level and, for a service acting for
/// many users, the user.
public struct TokenStoreKey: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The OAuth 2.0 client id.
    public var clientID: String
    /// The authorization level.
    public var level: AuthorizationLevel
    /// The service's own key for the user the token stands for; `nil` for the one user of
    /// ``ResourceAccess/userClient`` and for tokens of no user (the device level).
    public var user: String?

    /// Creates a key of no particular user: the single user's or the device's.
    ///
    /// - Parameters:
    ///   - clientID: The client id.
    ///   - level: The level.
    public init(clientID: String, level: AuthorizationLevel) {
        self.init(clientID: clientID, level: level, user: nil)
    }

    /// Creates a key.
    ///
    /// - Parameters:
    ///   - clientID: The client id.
    ///   - level: The level.
    ///   - user: The user's key, `nil` for the single user or no user.
    public init(clientID: String, level: AuthorizationLevel, user: String?) {
        self.clientID = clientID
        self.level = level
        self.user = user
    }

    /// `clientID/level`, or `clientID/level/user` for a keyed user.
    public var description: String {
        guard let user else { return "\(clientID)/\(level)" }
        return "\(clientID)/\(level)/\(user)"
    }

    private enum CodingKeys: String, CodingKey {
        case clientID, level, user
    }

    /// Decodes a key; keys written before users existed have none.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        clientID = try container.decode(String.self, forKey: .clientID)
        level = try container.decode(AuthorizationLevel.self, forKey: .level)
        user = try container.decodeIfPresent(String.self, forKey: .user)
    }

    /// Encodes the key, leaving out an absent user.
    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encode(clientID, forKey: .clientID)
        try container.encode(level, forKey: .level)
        try container.encodeIfPresent(user, forKey: .user)
    }
}
