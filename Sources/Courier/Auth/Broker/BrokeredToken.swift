import Foundation

/// A token with the version the broker gave it.
///
/// Report a rejection with the same value (``TokenBroker/tokenRejected(_:)``): the version
/// lets the broker tell a rejection of the current token from a late one for a token it has
/// already replaced.
struct BrokeredToken: Sendable, Hashable, CustomStringConvertible {
    /// The token.
    let token: OAuth2Token
    /// The broker's version of it; each new token gets a higher one.
    let version: UInt64
    /// The `Authorization` value, made once per token rather than once per request.
    let authorizationValue: String

    /// Creates a brokered token.
    ///
    /// - Parameters:
    ///   - token: The token.
    ///   - version: Its version.
    init(token: OAuth2Token, version: UInt64) {
        self.token = token
        self.version = version
        self.authorizationValue = token.authorizationValue
    }

    /// The version and the token's description (never the token itself).
    var description: String { "v\(version) \(token)" }
}
