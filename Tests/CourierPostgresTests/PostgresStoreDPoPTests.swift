#if Postgres
import CourierPostgres
import Crypto
import Foundation
import Testing

@testable import Courier

/// A token bound to a DPoP key keeps its binding in the PostgreSQL store: every process of the
/// fleet reads the thumbprint of the key the token is bound to (and a key Courier generated)
/// with the token, sealed with it.
@Suite(.timeLimit(.minutes(1)))
struct PostgresStoreDPoPTests {
    @Test func theThumbprintAndAGeneratedKeyTravelWithTheToken() async throws {
        let servers = try await PostgresServers.shared()
        let table = StoreFixtures.uniqueTable()
        let secret = SymmetricKey(size: .bits256)
        let entry = TokenStoreKey(clientID: "courier-device", level: .device)
        let key = DPoPKey.generate()
        var token = StoreFixtures.token("bound")
        token.tokenType = .dpop
        token.keyThumbprint = key.thumbprint
        token.generatedKey = StoredDPoPKey(key)
        try await StoreFixtures.withStore(servers, table: table, key: secret) { store in
            _ = try #require(try await store.setToken(token, for: entry, ifVersion: 0))
        }
        // Another process: another store on the same table.
        try await StoreFixtures.withStore(servers, table: table, key: secret) { store in
            let read = try #require(try await store.token(for: entry))
            #expect(read.keyThumbprint == key.thumbprint)
            #expect(read.generatedKey?.key.rawPrivateKey == key.rawPrivateKey)
            #expect(read.binding(configured: DPoPKey.generate(), requiresDPoP: true) == .key(key))
        }
    }
}
#endif
