#if Postgres
import Courier
import CourierPostgres
import Crypto
import Foundation
import PostgresNIO
import Testing

/// The store creates and migrates its table itself, once, however many processes start.
@Suite(.timeLimit(.minutes(1)))
struct PostgresStoreMigrationTests {
    @Test func concurrentStartersMigrateOnce() async throws {
        let servers = try await PostgresServers.shared()
        let table = StoreFixtures.uniqueTable()
        let secret = SymmetricKey(size: .bits256)
        let stores = try (0..<6).map { _ in
            try PostgresTokenStore(
                configuration: StoreFixtures.configuration(servers, table: table),
                keyProvider: .key(secret)
            )
        }
        try await StoreFixtures.running(stores) { () async throws in
            try await withThrowingTaskGroup(of: Void.self) { group in
                for store in stores { group.addTask { try await store.prepare() } }
                try await group.waitForAll()
            }
            let key = TokenStoreKey(clientID: "c", level: .device)
            _ = try #require(try await stores[0].setToken(StoreFixtures.token("t"), for: key, ifVersion: 0))
            #expect(try await stores[5].entry(for: key).version == 1)
        }

        // A later start finds the schema current and leaves the data alone.
        try await StoreFixtures.withStore(servers, table: table, key: secret) { store in
            try await store.prepare()
            #expect(try await store.entry(for: TokenStoreKey(clientID: "c", level: .device)).version == 1)
        }
        let versions = try await StoreFixtures.withSQL(servers) { sql in
            var versions: [Int] = []
            let rows = try await sql.query("SELECT version FROM courier_schema_migrations WHERE table_name = \(table)")
            for try await version in rows.decode(Int.self) { versions.append(version) }
            return versions
        }
        #expect(versions == [1])
    }

    @Test func aTableNameThatIsNotAPlainIdentifierIsRefused() throws {
        let error = #expect(throws: CourierError.self) {
            try PostgresTokenStore(
                configuration: .init(host: "127.0.0.1", username: "courier", tableName: "tokens; DROP TABLE x"),
                keyProvider: .key(SymmetricKey(size: .bits256))
            )
        }
        #expect(error?.kind == .invalidConfiguration)
    }
}
#endif
