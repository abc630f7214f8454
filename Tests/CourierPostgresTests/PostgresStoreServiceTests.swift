#if Postgres
import Courier
import CourierPostgres
import Crypto
import Foundation
import Logging
import PostgresNIO
import ServiceLifecycle
import Testing

/// The store's pool runs inside its `run()`: a `ServiceGroup` runs and stops it, cancelling
/// `run()` closes the pool, and a store that stopped, or never ran, fails calls with a typed
/// error instead of waiting.
///
/// Each test's store connects as a role of its own, so its connections are counted in
/// `pg_stat_activity` apart from those of the tests running beside it.
@Suite(.timeLimit(.minutes(1)))
struct PostgresStoreServiceTests {
    let key = TokenStoreKey(clientID: "courier-service", level: .device)
    let logger = Logger(label: "courier.postgres.tests")

    @Test func aServiceGroupRunsTheStoreAndItsGracefulShutdownClosesThePool() async throws {
        let servers = try await PostgresServers.shared()
        let role = try await StoreFixtures.uniqueRole(servers)
        let store = try PostgresTokenStore(
            configuration: StoreFixtures.configuration(servers, table: StoreFixtures.uniqueTable(), username: role),
            keyProvider: .key(SymmetricKey(size: .bits256)),
            logger: logger
        )
        let group = ServiceGroup(services: [store], logger: logger)
        let token = StoreFixtures.token("service", refresh: "service")
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            try await store.setToken(token, for: key)
            #expect(try await store.token(for: key)?.accessToken == token.accessToken)
            #expect(try await StoreFixtures.connections(servers, role: role) > 0)
            await group.triggerGracefulShutdown()
            // The group returns once the store's run() has, and run() once its pool has.
            try await tasks.next()
        }
        try await StoreFixtures.untilConnections(servers, role: role, are: 0)
        let error = await #expect(throws: CourierError.self) { try await store.entry(for: key) }
        #expect(error?.kind == .shutDown)
        // Stopped for good: shutdown() returns at once, and the store does not run again.
        await store.shutdown()
        let again = await #expect(throws: CourierError.self) { try await store.run() }
        #expect(again?.kind == .shutDown)
    }

    @Test func cancellingRunClosesThePoolAndFailsLaterCalls() async throws {
        let servers = try await PostgresServers.shared()
        let role = try await StoreFixtures.uniqueRole(servers)
        let store = try PostgresTokenStore(
            configuration: StoreFixtures.configuration(servers, table: StoreFixtures.uniqueTable(), username: role),
            keyProvider: .key(SymmetricKey(size: .bits256)),
            logger: logger
        )
        let token = StoreFixtures.token("cancelled")
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await store.run() }
            try await store.setToken(token, for: key)
            #expect(try await store.token(for: key)?.accessToken == token.accessToken)
            #expect(try await StoreFixtures.connections(servers, role: role) > 0)
            tasks.cancelAll()
            try await tasks.next()
        }
        try await StoreFixtures.untilConnections(servers, role: role, are: 0)
        let error = await #expect(throws: CourierError.self) { try await store.token(for: key) }
        #expect(error?.kind == .shutDown)
        await store.shutdown()
    }

    /// A write that waits for a row lock when the group shuts down gracefully is finished,
    /// not cut off: the store closes its pool only after the calls in flight.
    @Test func gracefulShutdownLetsTheCallsInFlightFinish() async throws {
        let servers = try await PostgresServers.shared()
        let role = try await StoreFixtures.uniqueRole(servers)
        let table = StoreFixtures.uniqueTable()
        let store = try PostgresTokenStore(
            configuration: StoreFixtures.configuration(
                servers,
                table: table,
                operationTimeout: .seconds(30),
                username: role
            ),
            keyProvider: .key(SymmetricKey(size: .bits256)),
            logger: logger
        )
        let group = ServiceGroup(services: [store], logger: logger)
        let first = StoreFixtures.token("first")
        let second = StoreFixtures.token("second")
        let (locked, lockedTaken) = AsyncStream.makeStream(of: Void.self)
        let (release, releaseTaken) = AsyncStream.makeStream(of: Void.self)
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            try await store.setToken(first, for: key)
            // Another session locks the entry's row until told to commit.
            tasks.addTask {
                try await StoreFixtures.withSQL(servers) { sql in
                    try await sql.withTransaction(logger: Logger(label: "courier.postgres.tests")) { connection in
                        try await connection.query(
                            "SELECT 1 FROM \(unescaped: table) WHERE client_id = 'courier-service' FOR UPDATE",
                            logger: Logger(label: "courier.postgres.tests")
                        )
                        lockedTaken.yield()
                        for await _ in release { break }
                    }
                }
            }
            for await _ in locked { break }
            async let written: Void = store.setToken(second, for: key)
            try await StoreFixtures.untilConnections(servers, role: role, are: 1, waitingForALock: true)
            await group.triggerGracefulShutdown()
            // The store refuses new calls once it drains; the write still waits for the lock.
            while (try? await store.entry(for: TokenStoreKey(clientID: "other", level: .device))) != nil {}
            let refused = await #expect(throws: CourierError.self) {
                try await store.entry(for: TokenStoreKey(clientID: "other", level: .device))
            }
            #expect(refused?.kind == .shutDown)
            releaseTaken.yield()
            try await written
            try await tasks.waitForAll()
        }
        let stored = try await StoreFixtures.withSQL(servers) { sql in
            var version: Int64 = 0
            let rows = try await sql.query(
                "SELECT version FROM \(unescaped: table) WHERE client_id = 'courier-service'"
            )
            for try await value in rows.decode(Int64.self) { version = value }
            return version
        }
        #expect(stored == 2)
        try await StoreFixtures.untilConnections(servers, role: role, are: 0)
    }

    @Test func aStoreThatDoesNotRunFailsCallsWithATypedError() async throws {
        let servers = try await PostgresServers.shared()
        let store = try PostgresTokenStore(
            configuration: StoreFixtures.configuration(
                servers,
                table: StoreFixtures.uniqueTable(),
                operationTimeout: .milliseconds(500)
            ),
            keyProvider: .key(SymmetricKey(size: .bits256)),
            logger: logger
        )
        let notRunning = await #expect(throws: CourierError.self) { try await store.entry(for: key) }
        #expect(notRunning?.kind == .shutDown)
        #expect(notRunning?.message.contains("not running") == true)

        await store.shutdown()
        let stopped = await #expect(throws: CourierError.self) { try await store.entry(for: key) }
        #expect(stopped?.kind == .shutDown)
        // Told to stop before it started, run() has nothing to do: it returns, as a service of a
        // group whose shutdown came first does.
        try await store.run()
    }

    @Test func runningAStoreTwiceAtOnceIsRefused() async throws {
        let servers = try await PostgresServers.shared()
        let store = try PostgresTokenStore(
            configuration: StoreFixtures.configuration(servers, table: StoreFixtures.uniqueTable()),
            keyProvider: .key(SymmetricKey(size: .bits256)),
            logger: logger
        )
        try await StoreFixtures.running([store]) { () async throws in
            // The store serves once its run() has started: the second run() is then refused.
            #expect(try await store.entry(for: key).version == 0)
            let error = await #expect(throws: CourierError.self) { try await store.run() }
            #expect(error?.kind == .invalidConfiguration)
        }
    }

    /// A store on a client the caller runs serves without its own run(), and its shutdown
    /// leaves the client running.
    @Test func aStoreOnTheCallersClientLeavesTheClientAlone() async throws {
        let servers = try await PostgresServers.shared()
        try await StoreFixtures.withSQL(servers) { client in
            let store = try PostgresTokenStore(
                client: client,
                tableName: StoreFixtures.uniqueTable(),
                keyProvider: .key(SymmetricKey(size: .bits256))
            )
            #expect(try await store.entry(for: key).version == 0)
            await store.shutdown()
            let error = await #expect(throws: CourierError.self) { try await store.entry(for: key) }
            #expect(error?.kind == .shutDown)
            try await client.query("SELECT 1")
        }
    }
}
#endif
