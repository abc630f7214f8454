#if Postgres
import Courier
import Foundation

/// A ``TokenStoreKey`` as the columns of its row, and as the context its token is sealed
/// with.
struct RowKey: Sendable {
    let clientID: String
    let level: String
    /// Whether the key has a user: a key with the user `""` is not the key without one.
    let hasUser: Bool
    /// The user, `""` when there is none.
    let user: String

    init(_ key: TokenStoreKey) {
        clientID = key.clientID
        level = key.level.rawValue
        hasUser = key.user != nil
        user = key.user ?? ""
    }

    /// The key of a row, from its columns.
    init(clientID: String, level: String, hasUser: Bool, user: String) {
        self.clientID = clientID
        self.level = level
        self.hasUser = hasUser
        self.user = user
    }

    /// Authenticated with the sealed token: the token opens only in the row it was written
    /// to. Each field is length-prefixed, so no two keys give the same bytes.
    var sealingContext: Data {
        var data = Data("courier postgres token row v1".utf8)
        for field in [clientID, level, hasUser ? "1" : "0", user] {
            let bytes = Data(field.utf8)
            let length = UInt32(clamping: bytes.count)
            data.append(contentsOf: [
                UInt8(length >> 24), UInt8((length >> 16) & 0xFF), UInt8((length >> 8) & 0xFF), UInt8(length & 0xFF),
            ])
            data.append(bytes)
        }
        return data
    }
}
#endif
