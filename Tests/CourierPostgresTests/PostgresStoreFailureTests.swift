#if Postgres
import Courier
import CourierPostgres
import Crypto
import Foundation
import Testing

#if canImport(Glibc)
import Glibc
#endif

/// A database that cannot be reached, or not safely, is a typed error soon — never a hang.
@Suite(.timeLimit(.minutes(1)))
struct PostgresStoreFailureTests {
    let key = TokenStoreKey(clientID: "courier-device", level: .device)

    @Test func anUnreachableDatabaseIsATypedErrorWithinTheOperationTimeout() async throws {
        let port = try Self.closedPort()
        var configuration = PostgresTokenStore.Configuration(
            host: "127.0.0.1",
            port: port,
            username: "courier",
            tls: .disable,
            connectTimeout: .seconds(1),
            operationTimeout: .seconds(2)
        )
        configuration.tableName = StoreFixtures.uniqueTable()
        let store = try PostgresTokenStore(
            configuration: configuration,
            keyProvider: .key(SymmetricKey(size: .bits256))
        )
        let clock = ContinuousClock()
        try await StoreFixtures.running([store]) { () async throws in
            for attempt in 0..<3 {
                let start = clock.now
                let error = await #expect(throws: CourierError.self) {
                    switch attempt {
                    case 0: _ = try await store.entry(for: key)
                    case 1: _ = try await store.setToken(StoreFixtures.token("x"), for: key, ifVersion: 0)
                    default: _ = try await store.acquireLease(for: key, duration: .seconds(5))
                    }
                }
                // Not a speed assertion: a bound on "never hangs" (operation timeout + slack).
                #expect(clock.now - start < .seconds(10))
                #expect([.couldNotConnect, .timedOut, .connectTimedOut].contains(error?.kind))
            }
        }
    }

    @Test func requiredTLSAgainstAServerWithoutTLSFails() async throws {
        let servers = try await PostgresServers.shared()
        let store = try PostgresTokenStore(
            configuration: StoreFixtures.configuration(
                servers,
                table: StoreFixtures.uniqueTable(),
                tls: .require(caBundlePath: nil),
                operationTimeout: .seconds(3)
            ),
            keyProvider: .key(SymmetricKey(size: .bits256))
        )
        try await StoreFixtures.running([store]) { () async throws in
            let error = await #expect(throws: CourierError.self) { try await store.entry(for: key) }
            #expect(error?.kind == .tlsFailure)
        }
    }

    @Test func preferredTLSFallsBackToAPlainConnection() async throws {
        let servers = try await PostgresServers.shared()
        let store = try PostgresTokenStore(
            configuration: StoreFixtures.configuration(servers, table: StoreFixtures.uniqueTable(), tls: .prefer),
            keyProvider: .key(SymmetricKey(size: .bits256))
        )
        try await StoreFixtures.running([store]) { () async throws in
            #expect(try await store.entry(for: key).version == 0)
        }
    }

    /// A port on 127.0.0.1 that nothing listens on: bound, then closed.
    static func closedPort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw ServersError("socket failed") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = 0
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { raw in
                bind(fd, raw, length) == 0 && getsockname(fd, raw, &length) == 0
            }
        }
        guard bound else { throw ServersError("bind failed") }
        return Int(UInt16(bigEndian: address.sin_port))
    }
}
#endif
