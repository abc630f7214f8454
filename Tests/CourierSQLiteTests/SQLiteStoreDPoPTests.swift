import Crypto
import Foundation
import Testing

@testable import Courier
@testable import CourierSQLite

/// A token bound to a DPoP key keeps its binding in the SQLite store: the key's thumbprint,
/// and a key Courier generated, travel sealed with the token, so another process of the fleet
/// reads the key its token is bound to.
@Suite(.timeLimit(.minutes(1)))
struct SQLiteStoreDPoPTests {
    @Test func theThumbprintAndAGeneratedKeyTravelWithTheToken() async throws {
        let fixtures = try StoreFixtures()
        defer { fixtures.remove() }
        let entry = TokenStoreKey(clientID: "courier-device", level: .device)
        let key = DPoPKey.generate()
        var token = StoreFixtures.token("bound")
        token.tokenType = .dpop
        token.keyThumbprint = key.thumbprint
        token.generatedKey = StoredDPoPKey(key)
        try await fixtures.store().setToken(token, for: entry)
        let read = try #require(try await fixtures.store().token(for: entry))
        #expect(read == token)
        #expect(read.keyThumbprint == key.thumbprint)
        #expect(read.generatedKey?.key.rawPrivateKey == key.rawPrivateKey)
        #expect(read.binding(configured: DPoPKey.generate(), requiresDPoP: true) == .key(key))
        // Sealed: the file holds neither the token nor the key in the clear.
        let bytes = try Data(contentsOf: URL(fileURLWithPath: fixtures.path))
        #expect(bytes.range(of: Data("access-bound".utf8)) == nil)
        #expect(bytes.range(of: Data(key.rawPrivateKey.base64EncodedString().utf8)) == nil)
    }
}
