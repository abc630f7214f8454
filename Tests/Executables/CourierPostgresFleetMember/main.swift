#if Postgres
// One member of a fleet sharing tokens through PostgreSQL: the load of CourierFleet over a
// PostgresTokenStore. Prints a one-line JSON summary (FleetSummary) on standard output; token
// events go to standard error as JSON lines while it runs.
//
//   COURIER_TOKEN_STORE_KEY=<32 bytes, base64> COURIER_FLEET_POSTGRES_PORT=5432 \
//   CourierPostgresFleetMember --oauth https://127.0.0.1:P --gateway https://127.0.0.1:Q \
//       --ca-bundle ca.pem --pins sha256//…,sha256//… --store postgres --store-path - \
//       --level device --callers 100 --seconds 20
//
// The database comes from COURIER_FLEET_POSTGRES_HOST (127.0.0.1), _PORT (5432), _USER
// (courier), _PASSWORD, _DATABASE (postgres), _TABLE (courier_tokens) and _TIMEOUT_MS (the
// store's operation timeout, 3000); every process of the fleet needs the same key.
import Courier
import CourierFleet
import CourierPostgres
import Foundation
import Logging

#if canImport(Glibc)
import Glibc
#endif

do {
    let options = try FleetOptions()
    guard options.storeKind == "postgres" else {
        throw FleetOptionsError(message: "--store \(options.storeKind) is not known here (postgres)")
    }
    let environment = ProcessInfo.processInfo.environment
    func value(_ name: String, _ fallback: String) -> String {
        environment["COURIER_FLEET_POSTGRES_" + name] ?? fallback
    }
    guard let port = Int(value("PORT", "5432")), let timeout = Int(value("TIMEOUT_MS", "3000")) else {
        throw FleetOptionsError(message: "COURIER_FLEET_POSTGRES_PORT and _TIMEOUT_MS are numbers")
    }
    var logger = Logger(label: "courier.postgres") { StreamLogHandler.standardError(label: $0) }
    logger.logLevel = .warning
    let store = try PostgresTokenStore(
        configuration: .init(
            host: value("HOST", "127.0.0.1"),
            port: port,
            username: value("USER", "courier"),
            password: environment["COURIER_FLEET_POSTGRES_PASSWORD"],
            database: value("DATABASE", "postgres"),
            tls: .disable,
            tableName: value("TABLE", "courier_tokens"),
            connectTimeout: .milliseconds(min(timeout, 2000)),
            operationTimeout: .milliseconds(timeout)
        ),
        keyProvider: .environment(),
        logger: logger
    )
    // The store's pool runs in run(); the load ends it with shutdown(), and an error cancels it.
    let summary = try await withThrowingTaskGroup(of: Void.self) { group in
        group.addTask { try await store.run() }
        let summary = try await FleetLoad.run(options, store: store)
        await store.shutdown()
        try await group.waitForAll()
        return summary
    }
    let encoder = JSONEncoder()
    encoder.outputFormatting = .sortedKeys
    print(String(decoding: try encoder.encode(summary), as: UTF8.self))
    exit(0)
} catch {
    FileHandle.standardError.write(Data("CourierPostgresFleetMember: \(error)\n".utf8))
    exit(2)
}
#endif
