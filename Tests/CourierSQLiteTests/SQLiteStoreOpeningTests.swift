import Courier
import Foundation
import Testing

@testable import CourierSQLite

/// Many instances (as many processes would) opening a store that does not exist yet, each
/// reading at once: one creates the schema, and none may take the half-made file for another
/// application's database.
@Suite(.timeLimit(.minutes(2)))
struct SQLiteStoreOpeningTests {
    @Test func instancesThatOpenANewStoreAtOnceAllReadIt() async throws {
        let key = TokenStoreKey(clientID: "courier-device", level: .device)
        for _ in 0..<40 {
            let fixtures = try StoreFixtures()
            defer { fixtures.remove() }
            let stores = (0..<8).map { _ in fixtures.store() }
            let versions = try await withThrowingTaskGroup(of: UInt64.self) { group in
                for store in stores { group.addTask { try await store.entry(for: key).version } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(versions == Array(repeating: 0, count: 8))
        }
    }
}
