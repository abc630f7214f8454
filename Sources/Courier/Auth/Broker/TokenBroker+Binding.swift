import Foundation
import Logging

extension TokenBroker {
    /// The client's configured DPoP key, `nil` for bearer tokens.
    nonisolated var configuredKey: DPoPKey? { endpoint.client.dpopKey }

    /// How `token` may be sent by this broker's client (``OAuth2Token/binding(configured:requiresDPoP:)``).
    nonisolated func binding(of token: OAuth2Token) -> OAuth2Token.Binding {
        token.binding(configured: configuredKey, requiresDPoP: endpoint.client.requiresDPoP)
    }

    /// A stored entry as this broker may use it: a token that may not be sent — bound to a key
    /// the client does not hold, or a bearer token where the client requires DPoP — is taken
    /// as expired, so that it is renewed and never sent.
    ///
    /// - Parameter entry: The entry as the store gave it.
    /// - Returns: The entry to hand to the state machine.
    nonisolated func usable(_ entry: TokenStoreEntry) -> TokenStoreEntry {
        guard let token = entry.token, binding(of: token) == .unusable else { return entry }
        logger.notice("the stored \(level) token may not go with the client's DPoP key (or lack of one): renewing it")
        var expired = token
        expired.expiresAt = .distantPast
        return TokenStoreEntry(token: expired, version: entry.version)
    }

    /// The key a grant that replaces `current` is proven with: the key `current` is bound to, so
    /// that a refresh token bound to it is presented with its proof, else the client's.
    nonisolated func proofKey(replacing current: OAuth2Token?) -> DPoPKey? {
        guard let configuredKey else { return nil }
        if let current, case .key(let key) = binding(of: current) { return key }
        return configuredKey
    }
}
