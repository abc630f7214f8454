// One member of a fleet of processes that share a token store: sends requests through Courier
// for a while, then prints a one-line JSON summary (FleetSummary) on standard output. Token
// events (renewed, adopted, lease, …) go to standard error as JSON lines while it runs.
//
//   CourierFleetMember --oauth https://127.0.0.1:P --gateway https://127.0.0.1:Q \
//       --ca-bundle ca.pem --pins sha256//…,sha256//… --store file --store-path /tmp/fleet.store \
//       --level device --callers 100 --seconds 20
//
// Every option can also come from COURIER_FLEET_<NAME> (see FleetOptions).
import Courier
import CourierFleet
import Foundation

#if canImport(Glibc)
import Glibc
#endif

do {
    let options = try FleetOptions()
    let store: any SharedTokenStore
    switch options.storeKind {
    case "file": store = EncryptedFileTokenStore(path: options.storePath)
    case "memory": store = InMemoryTokenStore()
    default: throw FleetOptionsError(message: "--store \(options.storeKind) is not known here (file, memory)")
    }
    let summary = try await FleetLoad.run(options, store: store)
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    print(String(decoding: try encoder.encode(summary), as: UTF8.self))
    exit(0)
} catch {
    FileHandle.standardError.write(Data("CourierFleetMember: \(error)\n".utf8))
    exit(2)
}
