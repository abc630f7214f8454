import Courier
import CourierFleet
import CourierSQLite
import Foundation
import Testing

/// A broker over the SQLite store, against the real authorization server: a damaged store
/// fails the request with the store's kind and asks for no token; a store locked past its busy
/// timeout is out of reach, and the broker renews on its own and warns.
@Suite(.serialized, .timeLimit(.minutes(2)))
struct SQLiteStoreBrokerTests {
    /// A resource access on `store` against the servers, logging to `events`.
    static func access(
        _ servers: FleetServers,
        store: SQLiteTokenStore,
        events: FleetEventCounter
    ) throws
        -> ResourceAccess
    {
        let options = try FleetOptions(
            arguments: [
                "--oauth", servers.oauthTLS.absoluteString, "--gateway", servers.gatewayTLS.absoluteString,
                "--ca-bundle", servers.caBundle, "--pins", servers.pins.joined(separator: ","), "--store-path",
                store.path,
            ],
            environment: [:]
        )
        return try ResourceAccess(
            configuration: try FleetLoad.configuration(options, store: store, logger: events.logger())
        )
    }

    @Test func aDamagedStoreFailsTheRequestWithItsKindAndAsksForNoToken() async throws {
        let servers = try await FleetServers.shared()
        let admin = OAuthAdmin(base: servers.oauth)
        let fixtures = try StoreFixtures()
        defer { fixtures.remove() }
        try Data(repeating: 0x5A, count: 4096).write(to: URL(fileURLWithPath: fixtures.path))
        let access = try Self.access(servers, store: fixtures.store(), events: FleetEventCounter(member: "damaged"))
        let since = try await admin.tokenRequestTimes().now
        do {
            _ = try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/device/info"))
            Issue.record("a request went out over a damaged store")
        } catch let error as CourierError {
            #expect(error.kind == .tokenStoreUnsupportedFormat, "\(error)")
        }
        await access.shutdown()
        #expect(try await admin.tokenRequestTimes(since: since).times.isEmpty)
    }

    @Test func aStoreLockedPastItsBusyTimeoutDegradesToLocalRenewal() async throws {
        let servers = try await FleetServers.shared()
        let fixtures = try StoreFixtures()
        defer { fixtures.remove() }
        let store = fixtures.store(configuration: .init(busyTimeout: .milliseconds(200)))
        // The store exists; then another process takes the write lock and keeps it.
        _ = try await store.entry(for: TokenStoreKey(clientID: "courier-device", level: .device))
        let database = try RawDatabase(fixtures.path)
        try database.execute("BEGIN IMMEDIATE")
        let events = FleetEventCounter(member: "locked")
        let access = try Self.access(servers, store: store, events: events)
        let response = try await access.deviceClient.sendAnonymousRequest(ResourceRequest(path: "/api/device/info"))
        await access.shutdown()
        try database.execute("ROLLBACK")
        #expect(response.statusCode == 200)
        #expect(events.snapshot["degraded", default: 0] > 0, "\(events.snapshot)")
        #expect(events.snapshot["warnings", default: 0] > 0, "\(events.snapshot)")
    }
}
