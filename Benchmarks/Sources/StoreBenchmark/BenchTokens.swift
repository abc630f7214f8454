import Courier
import Foundation

/// The users and tokens of the benchmark: the keys a service with keyed users
/// (`ResourceAccess.userClient(for:)`, client id `bench`) writes, and tokens of realistic size.
enum BenchTokens {
    /// The OAuth 2 client of the users.
    static let clientID = "bench"

    /// The service's id of user `index`.
    static func user(_ index: Int) -> String { "user-\(index)" }

    /// The store key of user `index`'s token.
    static func key(_ index: Int) -> TokenStoreKey {
        TokenStoreKey(clientID: clientID, level: .user, user: user(index))
    }

    /// A token as an authorization server issues one: a 40-character access token, a
    /// 64-character refresh token, valid for a day (so no client ever renews it during a run),
    /// the `read` scope.
    static func token(using generator: inout some RandomNumberGenerator) -> OAuth2Token {
        let now = Date()
        return OAuth2Token(
            accessToken: randomString(bytes: 30, using: &generator),
            issuedAt: now,
            expiresAt: now.addingTimeInterval(86_400),
            refreshToken: randomString(bytes: 48, using: &generator),
            scope: [.read]
        )
    }

    /// `bytes` random bytes in base64url: 4 characters for every 3 bytes.
    private static func randomString(bytes: Int, using generator: inout some RandomNumberGenerator) -> String {
        let data = Data((0..<bytes).map { _ in UInt8.random(in: .min ... .max, using: &generator) })
        return data.base64EncodedString()
            .replacingOccurrences(of: "+", with: "-")
            .replacingOccurrences(of: "/", with: "_")
    }
}
