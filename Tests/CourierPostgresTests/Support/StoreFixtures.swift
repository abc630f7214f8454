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
        operationTimeout: Duration = .seconds(5),
        username: String? = nil
    ) -> PostgresTokenStore.Configuration {
        PostgresTokenStore.Configuration(
            host: servers.host,
            port: servers.port,
            username: username ?? servers.username,
            database: servers.database,
            tls: tls,
            tableName: table,
            connectTimeout: .seconds(2),
            operationTimeout: operationTimeout,
            maximumConnections: 4
        )
    }

    /// A store with a pool of its own, like one process of a fleet, running for the time of
    /// `body`.
    static func withStore<Result>(
        _ servers: PostgresServers,
        table: String,
        key: SymmetricKey,
        _ body: (PostgresTokenStore) async throws -> Result
    ) async throws -> Result {
        try await withStore(servers, table: table, keyProvider: .key(key), body)
    }

    /// A store whose key comes from `keyProvider`, running for the time of `body`.
    static func withStore<Result>(
        _ servers: PostgresServers,
        table: String,
        keyProvider: TokenStoreKeyProvider,
        _ body: (PostgresTokenStore) async throws -> Result
    ) async throws -> Result {
        let store = try PostgresTokenStore(
            configuration: configuration(servers, table: table),
            keyProvider: keyProvider,
            logger: Logger(label: "courier.postgres.tests")
        )
        return try await running([store]) { try await body(store) }
    }

    /// Runs `stores` (each `run()` in a task of the group) for the time of `body`, then shuts
    /// them down and waits for every `run()` to return, whether `body` returned or threw.
    static func running<Result>(
        _ stores: [PostgresTokenStore],
        _ body: () async throws -> Result
    ) async throws -> Result {
        try await withThrowingTaskGroup(of: Void.self) { group in
            for store in stores { group.addTask { try await store.run() } }
            let outcome: Swift.Result<Result, any Error>
            do {
                outcome = .success(try await body())
            } catch {
                outcome = .failure(error)
            }
            for store in stores { await store.shutdown() }
            try await group.waitForAll()
            return try outcome.get()
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

    /// A login role no other test uses: the connections of a store that connects as it are
    /// told apart from every other test's in `pg_stat_activity`.
    static func uniqueRole(_ servers: PostgresServers) async throws -> String {
        let role = "r_" + UUID().uuidString.lowercased().replacingOccurrences(of: "-", with: "").prefix(20)
        try await withSQL(servers) { sql in
            try await sql.query(PostgresQuery(unsafeSQL: "CREATE ROLE \(role) LOGIN SUPERUSER"))
        }
        return role
    }

    /// How many connections `role` has open now; with `waiting`, only those that wait for a
    /// lock.
    static func connections(
        _ servers: PostgresServers,
        role: String,
        waitingForALock waiting: Bool = false
    ) async throws
        -> Int
    {
        try await withSQL(servers) { sql in
            let rows = try await sql.query(
                """
                SELECT count(*)::bigint FROM pg_stat_activity
                WHERE usename = \(role) AND (NOT \(waiting) OR wait_event_type = 'Lock')
                """
            )
            var count = 0
            for try await value in rows.decode(Int64.self) { count = Int(value) }
            return count
        }
    }

    /// Queries the server until `role` has `count` connections (waiting for a lock, with
    /// `waiting`). A server has no event for a backend that began to wait or went away, so
    /// this asks again, each question a round trip; the suite's time limit bounds it.
    static func untilConnections(
        _ servers: PostgresServers,
        role: String,
        are count: Int,
        waitingForALock waiting: Bool = false
    ) async throws {
        while try await connections(servers, role: role, waitingForALock: waiting) != count {
            try Task.checkCancellation()
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
