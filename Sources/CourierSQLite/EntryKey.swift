import Courier
import Foundation

/// A ``/Courier/TokenStoreKey`` as the columns of its row, and as the context its token is
/// sealed with.
struct EntryKey: Sendable, Hashable {
    /// The client id.
    let clientID: String
    /// Whether the key has a user: the key with the user `""` is not the key without one.
    let hasUser: Bool
    /// The user, `""` when there is none.
    let user: String
    /// The authorization level's name.
    let level: String

    /// The columns of `key`.
    init(_ key: TokenStoreKey) {
        clientID = key.clientID
        hasUser = key.user != nil
        user = key.user ?? ""
        level = key.level.rawValue
    }

    /// The key of a row as read from its columns.
    init(clientID: String, hasUser: Bool, user: String, level: String) {
        self.clientID = clientID
        self.hasUser = hasUser
        self.user = user
        self.level = level
    }

    /// The columns, in the order of the primary key: client, user, level.
    var values: [SQLiteStatement.Value] {
        [.text(clientID), .integer(hasUser ? 1 : 0), .text(user), .text(level)]
    }

    /// Authenticated with the sealed token, never stored: the token opens only in the row it
    /// was written to. Each field is length-prefixed, so no two keys give the same bytes.
    var sealingContext: Data {
        var data = Data("courier sqlite token row v1".utf8)
        for field in [clientID, hasUser ? "1" : "0", user, level] {
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
