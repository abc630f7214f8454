// One member of a fleet sharing tokens through one SQLite file: the load of CourierFleet over a
// SQLiteTokenStore. Prints a one-line JSON summary (FleetSummary) on standard output; token
// events go to standard error as JSON lines while it runs.
//
//   CourierSQLiteFleetMember --oauth https://127.0.0.1:P --gateway https://127.0.0.1:Q \
//       --ca-bundle ca.pem --pins sha256//…,sha256//… --store sqlite --store-path /tmp/fleet.sqlite \
//       --level device --callers 100 --seconds 20
//
// The store's key is in <store-path>.key (create it before the members start, so that they
// all read the same key).
import Courier
import CourierFleet
import CourierSQLite
import Foundation

#if canImport(Glibc)
import Glibc
#endif

do {
    let options = try FleetOptions()
    guard options.storeKind == "sqlite" else {
        throw FleetOptionsError(message: "--store \(options.storeKind) is not known here (sqlite)")
    }
    let store = SQLiteTokenStore(path: options.storePath)
    let summary = try await FleetLoad.run(options, store: store)
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    print(String(decoding: try encoder.encode(summary), as: UTF8.self))
    exit(0)
} catch {
    FileHandle.standardError.write(Data("CourierSQLiteFleetMember: \(error)\n".utf8))
    exit(2)
}
