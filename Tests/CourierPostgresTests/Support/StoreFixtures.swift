#if Postgres
import Courier
import CourierPostgres
import Crypto
import Foundation
import Logging
import PostgresNIO

/// Stores and raw SQL against the test PostgreSQL, each test on a table of its own.
enum StoreFixtures {
    /// A table no other test uses.
    static func uniqueTable() -> String {
        "t_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(20)
    }

    static func configuration(
        _ servers: PostgresServers,
        table: String,
        tls: PostgresTokenStore.Configuration.TLS = .disable,
        operationTimeout: Duration = .seconds(5)
    ) -> PostgresTokenStore.Configuration {
        PostgresTokenStore.Configuration(
            host: servers.host,
            port: servers.port,
            username: servers.username,
            database: servers.database,
            tls: tls,
            tableName: table,
            connectTimeout: .seconds(2),
            operationTimeout: operationTimeout,
            maximumConnections: 4
        )
    }

    /// A store with a pool of its own, like one process of a fleet; shut down after `body`.
    static func withStore<Result>(
        _ servers: PostgresServers,
        table: String,
        key: SymmetricKey,
        _ body: (PostgresTokenStore) async throws -> Result
    ) async throws -> Result {
        let store = try PostgresTokenStore(
            configuration: configuration(servers, table: table),
            keyProvider: .key(key),
            logger: Logger(label: "courier.postgres.tests")
        )
        do {
            let result = try await body(store)
            await store.shutdown()
            return result
        } catch {
            await store.shutdown()
            throw error
        }
    }

    /// A plain client for looking at (and tampering with) the table.
    @discardableResult
    static func withSQL<Result: Sendable>(
        _ servers: PostgresServers,
        _ body: @Sendable (PostgresClient) async throws -> Result
    ) async throws -> Result {
        let client = PostgresClient(
            configuration: PostgresClient.Configuration(
                host: servers.host,
                port: servers.port,
                username: servers.username,
                password: nil,
                database: servers.database,
                tls: .disable
            )
        )
        return try await withThrowingTaskGroup(of: Void.self) { group in
            group.addTask { await client.run() }
            defer { group.cancelAll() }
            return try await body(client)
        }
    }

    static func token(_ name: String, refresh: String? = nil) -> OAuth2Token {
        OAuth2Token(
            accessToken: "access-\(name)-\(UUID().uuidString)",
            expiresAt: Date().addingTimeInterval(3600),
            refreshToken: refresh.map { "refresh-\($0)-\(UUID().uuidString)" }
        )
    }
}
#endif
