#if Postgres
import Courier
import CourierPostgres
import Crypto
import Foundation
import PostgresNIO
import Testing

/// Tokens at rest: sealed with AES-256-GCM, the row's key authenticated with them.
@Suite(.timeLimit(.minutes(1)))
struct PostgresStoreEncryptionTests {
    @Test func theRowDoesNotContainTheToken() async throws {
        let servers = try await PostgresServers.shared()
        let table = StoreFixtures.uniqueTable()
        let key = TokenStoreKey(clientID: "courier-user", level: .user, user: "alice")
        let token = StoreFixtures.token("secret", refresh: "secret")
        try await StoreFixtures.withStore(servers, table: table, key: .init(size: .bits256)) { store in
            _ = try #require(try await store.setToken(token, for: key, ifVersion: 0))
            let read = try #require(try await store.token(for: key))
            #expect(read.accessToken == token.accessToken)
            #expect(read.refreshToken == token.refreshToken)
            // Dates travel as seconds since 1970 in a Double, as in the file store.
            #expect(abs((read.expiresAt ?? .distantPast).timeIntervalSince(token.expiresAt ?? .distantFuture)) < 0.001)
        }
        let sealed = try await StoreFixtures.withSQL(servers) { sql in
            var values: [Data] = []
            let rows = try await sql.query("SELECT sealed_token FROM \(unescaped: table)")
            for try await value in rows.decode(Data.self) { values.append(value) }
            return values
        }
        let bytes = try #require(sealed.first)
        #expect(sealed.count == 1)
        for secret in [token.accessToken, try #require(token.refreshToken), "access-secret", "refresh-secret"] {
            #expect(bytes.range(of: Data(secret.utf8)) == nil)
        }
    }

    @Test func anotherKeyIsATypedError() async throws {
        let servers = try await PostgresServers.shared()
        let table = StoreFixtures.uniqueTable()
        let key = TokenStoreKey(clientID: "courier-device", level: .device)
        try await StoreFixtures.withStore(servers, table: table, key: .init(size: .bits256)) { store in
            _ = try #require(try await store.setToken(StoreFixtures.token("x"), for: key, ifVersion: 0))
        }
        try await StoreFixtures.withStore(servers, table: table, key: .init(size: .bits256)) { store in
            let error = await #expect(throws: CourierError.self) { try await store.entry(for: key) }
            #expect(error?.kind == .tokenStoreWrongKey)
        }
    }

    @Test func aRowCopiedUnderAnotherKeyDoesNotOpen() async throws {
        let servers = try await PostgresServers.shared()
        let table = StoreFixtures.uniqueTable()
        let secret = SymmetricKey(size: .bits256)
        let alice = TokenStoreKey(clientID: "courier-user", level: .user, user: "alice")
        let mallory = TokenStoreKey(clientID: "courier-user", level: .user, user: "mallory")
        try await StoreFixtures.withStore(servers, table: table, key: secret) { store in
            _ = try #require(try await store.setToken(StoreFixtures.token("alice"), for: alice, ifVersion: 0))
            _ = try #require(try await store.setToken(StoreFixtures.token("mallory"), for: mallory, ifVersion: 0))
            // Someone with write access to the table moves Alice's sealed token to Mallory's row.
            try await StoreFixtures.withSQL(servers) { sql in
                try await sql.query(
                    """
                    UPDATE \(unescaped: table) SET sealed_token =
                        (SELECT sealed_token FROM \(unescaped: table) WHERE user_key = 'alice')
                    WHERE user_key = 'mallory'
                    """
                )
            }
            let error = await #expect(throws: CourierError.self) { try await store.entry(for: mallory) }
            #expect(error?.kind == .tokenStoreTampered)
            #expect(try await store.token(for: alice) != nil)
        }
    }
}
#endif
