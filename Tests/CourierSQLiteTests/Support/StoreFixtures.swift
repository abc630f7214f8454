import Courier
import Crypto
import Foundation

@testable import CourierSQLite

/// A directory of its own per test, stores on a file in it, and tokens to write.
struct StoreFixtures {
    /// A fresh temporary directory.
    let directory: String
    /// The key the fixtures' stores seal with.
    let key = SymmetricKey(size: .bits256)

    /// Makes the directory.
    init() throws {
        directory = NSTemporaryDirectory() + "courier-sqlite-" + UUID().uuidString.prefix(8)
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    }

    /// The store's file.
    var path: String { directory + "/tokens.sqlite" }

    /// A store on ``path`` with the fixtures' key: each call another instance, as another
    /// process would have.
    func store(
        key: SymmetricKey? = nil,
        configuration: SQLiteTokenStore.Configuration = .init()
    ) -> SQLiteTokenStore {
        SQLiteTokenStore(path: path, keyProvider: .key(key ?? self.key), configuration: configuration)
    }

    /// A token whose access and refresh tokens carry `name`.
    static func token(_ name: String) -> OAuth2Token {
        OAuth2Token(
            accessToken: "access-\(name)",
            issuedAt: Date(timeIntervalSince1970: 1_800_000_000),
            expiresAt: Date(timeIntervalSince1970: 1_800_003_600),
            refreshToken: "refresh-\(name)",
            scope: [.read]
        )
    }

    /// Removes the directory.
    func remove() { try? FileManager.default.removeItem(atPath: directory) }
}

extension SQLiteTokenStore {
    /// Ends both threads and closes the file, as releasing the store does, and returns once
    /// it is closed: a test may then change the file under it.
    func close() async {
        await writer.stop()
        await reader.stop()
    }
}
