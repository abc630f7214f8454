/// Which identity a token stands for: the user, the user implicitly, or the device.
///
/// Each level of each client has one token, renewed on its own, and a ``TokenStore``
/// keeps tokens by client id and level. The set is open: an app with its own kind of token
/// (an exchanged token for a partner API, say) defines a level of its own.
public struct AuthorizationLevel: RawRepresentable, Hashable, Sendable, Codable, CustomStringConvertible {
    /// The level's name, used in store keys and error messages.
    public let rawValue: String

    /// Creates a level.
    ///
    /// - Parameter rawValue: The level's name; use letters, digits, `-`, `_`, `.` and `:`.
    public init(rawValue: String) { self.rawValue = rawValue }

    /// A token tied to an authenticated user (password or authorization-code grant, renewed
    /// with its refresh token).
    public static let user = AuthorizationLevel(rawValue: "user")
    /// A token tied to the user but obtained without the user's interaction and with a
    /// narrower scope: by default an RFC 8693 exchange of the user's token.
    public static let implicit = AuthorizationLevel(rawValue: "implicit")
    /// A token tied to the application installation, not to a user (client credentials).
    public static let device = AuthorizationLevel(rawValue: "device")

    /// The name.
    public var description: String { rawValue }
}

extension ResourceAccess {
    /// The four kinds of resource request, and so the four ways a request is
    /// authorized.
    public enum RequestKind: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
        /// With the user's token: ``UserClient/sendAuthenticatedRequest(_:logger:)``.
        case authenticated
        /// With the user's implicit token: ``UserClient/sendImplicitRequest(_:logger:)``.
        case implicit
        /// With the device's token: ``DeviceClient/sendAnonymousRequest(_:logger:)``.
        case anonymous
        /// Without a token, still pinned: ``DeviceClient/sendUnauthenticatedRequest(_:logger:)``.
        case unauthenticated

        /// The authorization level whose token the kind sends, `nil` for unauthenticated.
        public var level: AuthorizationLevel? {
            switch self {
            case .authenticated: .user
            case .implicit: .implicit
            case .anonymous: .device
            case .unauthenticated: nil
            }
        }

        /// The name.
        public var description: String { rawValue }
    }
}
