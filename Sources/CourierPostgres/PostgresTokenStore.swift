#if Postgres
public import Courier
import Foundation
public import Logging
public import PostgresNIO

/// A ``/Courier/SharedTokenStore`` in PostgreSQL: the instances of a service on many hosts
/// renew each token once between them.
///
/// - **One table** (`courier_tokens` by default), which the store creates on first use and
///   migrates itself. Migrations run under an advisory lock, so any number of processes may
///   start at once; the schema version is kept in `courier_schema_migrations`.
/// - **Compare-and-swap writes.** Every entry has a version that each write raises, in one
///   statement (`UPDATE … WHERE version = $n`). A removed token leaves a tombstone row, so a
///   version never comes back.
/// - **Leases on the database's clock.** A lease is a holder and an expiry in the entry's row,
///   taken in one statement only when the row has no holder or its lease ran out: the clocks
///   of the hosts play no part. A holder that dies is replaced once its lease times out.
/// - **Encrypted rows.** Tokens are sealed with AES-256-GCM under the key of a
///   ``/Courier/TokenStoreKeyProvider``, as ``/Courier/EncryptedFileTokenStore`` seals its file;
///   the row's key is authenticated with the token, so a sealed token copied into another row
///   does not open.
/// - **Key changes.** With a provider that accepts other keys
///   (``/Courier/TokenStoreKeyProvider/accepting(_:)``), a row sealed under one of them opens,
///   and is sealed under the provider's own key when it is next written; ``resealEntries()``
///   re-seals the rows nobody writes.
/// - **Bounded calls.** Every call ends within ``Configuration/operationTimeout`` (plus, when no
///   connection could be had, ``Configuration/connectTimeout`` to learn why); an unreachable
///   database is a ``/Courier/CourierError`` (``/Courier/CourierError/Kind/couldNotConnect``,
///   ``/Courier/CourierError/Kind/timedOut``), and a broker then renews on its own.
///
/// The store is a swift-service-lifecycle `Service`: its connection pool runs inside
/// ``run()``, so run the store in the `ServiceGroup` of your service, before the services
/// that use it:
///
/// ```swift
/// let store = try PostgresTokenStore(
///     configuration: .init(host: "db.internal", username: "courier", password: secret,
///                          database: "tokens", tls: .require(caBundlePath: "/etc/ssl/db-ca.pem")),
///     keyProvider: .environment()
/// )
/// let group = ServiceGroup(services: [store, access], logger: logger)
/// try await group.run()
/// ```
///
/// Without swift-service-lifecycle, run it in a task group for as long as it is used, and
/// end it with ``shutdown()``:
///
/// ```swift
/// try await withThrowingDiscardingTaskGroup { group in
///     group.addTask { try await store.run() }
///     try await serveRequests(with: store)
///     await store.shutdown()
/// }
/// ```
public final class PostgresTokenStore: SharedTokenStore {
    /// The table of tokens.
    public let tableName: String
    let client: PostgresClient
    let logger: Logger
    let schema = LockedBox<Task<Void, any Error>?>(nil)
    /// Whether the store runs `client` itself (in ``run()``), or the caller does.
    let ownsClient: Bool
    let lifecycle = StoreLifecycle()
    let sealer: TokenSealer
    private let operationTimeout: Duration
    /// A connection like the pool's, opened to learn why the pool has none; `nil` for a
    /// client the caller runs.
    let diagnosisConfiguration: PostgresConnection.Configuration?
    /// How long that connection may take.
    let diagnosisTimeout: Duration

    /// Creates a store with a connection pool of its own, which runs inside ``run()``.
    /// Nothing is sent before the first call.
    ///
    /// - Parameters:
    ///   - configuration: The database, TLS, the table and the time limits.
    ///   - keyProvider: The 256-bit key that seals the tokens; every process of the fleet
    ///     needs the same key.
    ///   - logger: Where the store and its pool log; never a token or a password.
    /// - Throws: ``/Courier/CourierError/Kind/invalidConfiguration`` for a table name that is not
    ///   a plain identifier, or TLS settings that do not load (a CA file that cannot be read).
    public init(
        configuration: Configuration,
        keyProvider: TokenStoreKeyProvider,
        logger: Logger = Logger(label: "courier.postgres")
    ) throws {
        try Self.validate(tableName: configuration.tableName)
        do {
            diagnosisConfiguration = try Self.diagnosisConfiguration(configuration)
        } catch {
            throw CourierError(.invalidConfiguration, message: "the TLS settings for PostgreSQL do not load: \(error)")
        }
        diagnosisTimeout = configuration.connectTimeout
        var postgres = PostgresClient.Configuration(
            host: configuration.host,
            port: configuration.port,
            username: configuration.username,
            password: configuration.password,
            database: configuration.database,
            tls: configuration.tls.clientTLS()
        )
        postgres.options.connectTimeout = configuration.connectTimeout
        postgres.options.maximumConnections = max(1, configuration.maximumConnections)
        postgres.options.additionalStartupParameters = Self.sessionSettings(configuration.operationTimeout)
        let client = PostgresClient(configuration: postgres, backgroundLogger: logger)
        self.client = client
        self.ownsClient = true
        self.tableName = configuration.tableName
        self.operationTimeout = configuration.operationTimeout
        self.sealer = TokenSealer(keyProvider: keyProvider)
        self.logger = logger
    }

    /// Creates a store on a client you run yourself (with `client.run()`, or as a service of
    /// swift-service-lifecycle); neither ``run()`` nor ``shutdown()`` runs or ends it.
    ///
    /// Such a store serves calls whether or not ``run()`` runs. Run it anyway in a
    /// `ServiceGroup`, between the client and the services that use the store, to have its
    /// graceful shutdown wait for the calls in flight before the client's does.
    ///
    /// - Parameters:
    ///   - client: The PostgreSQL client.
    ///   - tableName: The table of tokens.
    ///   - operationTimeout: How long one call may take.
    ///   - keyProvider: The key that seals the tokens.
    ///   - logger: Where the store logs.
    /// - Throws: ``/Courier/CourierError/Kind/invalidConfiguration`` for a table name that is not
    ///   a plain identifier.
    public init(
        client: PostgresClient,
        tableName: String = "courier_tokens",
        operationTimeout: Duration = .seconds(5),
        keyProvider: TokenStoreKeyProvider,
        logger: Logger = Logger(label: "courier.postgres")
    ) throws {
        try Self.validate(tableName: tableName)
        self.client = client
        self.ownsClient = false
        self.diagnosisConfiguration = nil
        self.diagnosisTimeout = .zero
        self.tableName = tableName
        self.operationTimeout = operationTimeout
        self.sealer = TokenSealer(keyProvider: keyProvider)
        self.logger = logger
    }

    /// Creates or migrates the table now, rather than on the first call: for services that
    /// want to fail at start-up when the database is not there.
    ///
    /// - Throws: ``/Courier/CourierError`` when the database cannot be reached in time or
    ///   refuses the migration.
    public func prepare() async throws {
        try await bounded("migrate") {}
    }

    // MARK: TokenStore

    /// The token under `key`.
    ///
    /// - Throws: ``/Courier/CourierError`` when the database cannot be reached, or the row does
    ///   not open with the key.
    public func token(for key: TokenStoreKey) async throws -> OAuth2Token? {
        try await entry(for: key).token
    }

    /// Stores or removes the token under `key` whatever its version, raising the version.
    ///
    /// - Throws: ``/Courier/CourierError`` when the database cannot be reached.
    public func setToken(_ token: OAuth2Token?, for key: TokenStoreKey) async throws {
        let row = RowKey(key)
        let sealed = try await seal(token, for: row)
        try await bounded("write") { [tableName, client, logger] in
            if let sealed {
                try await client.query(
                    """
                    INSERT INTO \(unescaped: tableName) AS t
                        (client_id, level, has_user, user_key, version, sealed_token, updated_at)
                    VALUES (\(row.clientID), \(row.level), \(row.hasUser), \(row.user), 1, \(sealed), now())
                    ON CONFLICT (client_id, level, has_user, user_key) DO UPDATE
                    SET version = t.version + 1, sealed_token = EXCLUDED.sealed_token, updated_at = now()
                    """,
                    logger: logger
                )
            } else {
                try await client.query(
                    """
                    UPDATE \(unescaped: tableName)
                    SET version = version + 1, sealed_token = NULL, updated_at = now()
                    WHERE client_id = \(row.clientID) AND level = \(row.level)
                        AND has_user = \(row.hasUser) AND user_key = \(row.user) AND sealed_token IS NOT NULL
                    """,
                    logger: logger
                )
            }
        }
    }

    /// Removes every token of a client, leaving tombstones whose versions are raised.
    ///
    /// - Throws: ``/Courier/CourierError`` when the database cannot be reached.
    public func removeTokens(clientID: String) async throws {
        try await bounded("remove") { [tableName, client, logger] in
            try await client.query(
                """
                UPDATE \(unescaped: tableName)
                SET version = version + 1, sealed_token = NULL, updated_at = now()
                WHERE client_id = \(clientID) AND sealed_token IS NOT NULL
                """,
                logger: logger
            )
        }
    }

    /// Removes every token of one user of the client (a tombstone for each, its version
    /// raised), leaving every other user's tokens in place.
    public func removeTokens(clientID: String, user: String?) async throws {
        let hasUser = user != nil
        let userKey = user ?? ""
        try await bounded("remove") { [tableName, client, logger] in
            try await client.query(
                """
                UPDATE \(unescaped: tableName)
                SET version = version + 1, sealed_token = NULL, updated_at = now()
                WHERE client_id = \(clientID) AND has_user = \(hasUser) AND user_key = \(userKey)
                    AND sealed_token IS NOT NULL
                """,
                logger: logger
            )
        }
    }

    // MARK: SharedTokenStore

    /// The entry under `key` with its version; version 0 and no token when nothing was
    /// ever written.
    ///
    /// - Throws: ``/Courier/CourierError`` when the database cannot be reached, or the row does
    ///   not open with the key (``/Courier/CourierError/Kind/tokenStoreWrongKey``,
    ///   ``/Courier/CourierError/Kind/tokenStoreTampered``).
    public func entry(for key: TokenStoreKey) async throws -> TokenStoreEntry {
        let row = RowKey(key)
        let found = try await bounded("read") { [tableName, client, logger] () -> (Int64, Data?)? in
            let rows = try await client.query(
                """
                SELECT version, sealed_token FROM \(unescaped: tableName)
                WHERE client_id = \(row.clientID) AND level = \(row.level)
                    AND has_user = \(row.hasUser) AND user_key = \(row.user)
                """,
                logger: logger
            )
            var found: (Int64, Data?)?
            for try await values in rows.decode((Int64, Data?).self) { found = values }
            return found
        }
        guard let (version, sealed) = found else { return TokenStoreEntry(token: nil, version: 0) }
        return TokenStoreEntry(token: try await open(sealed, for: row), version: UInt64(max(0, version)))
    }

    /// Writes `token` (`nil`: a tombstone) when the entry is still at `version`, in one
    /// statement.
    ///
    /// - Returns: The entry as written, or `nil` when its version had moved on.
    /// - Throws: ``/Courier/CourierError`` when the database cannot be reached.
    public func setToken(
        _ token: OAuth2Token?,
        for key: TokenStoreKey,
        ifVersion version: UInt64
    ) async throws
        -> TokenStoreEntry?
    {
        let row = RowKey(key)
        let sealed = try await seal(token, for: row)
        let expected = Int64(clamping: version)
        let written = try await bounded("write") { [tableName, client, logger] () -> Int64? in
            let query: PostgresQuery
            if expected == 0 {
                // No row yet, or a row that a lease created and nothing has written.
                query = try """
                INSERT INTO \(unescaped: tableName) AS t
                    (client_id, level, has_user, user_key, version, sealed_token, updated_at)
                VALUES (\(row.clientID), \(row.level), \(row.hasUser), \(row.user), 1, \(sealed), now())
                ON CONFLICT (client_id, level, has_user, user_key) DO UPDATE
                SET version = t.version + 1, sealed_token = EXCLUDED.sealed_token, updated_at = now()
                WHERE t.version = 0
                RETURNING version
                """
            } else {
                query = try """
                UPDATE \(unescaped: tableName)
                SET version = version + 1, sealed_token = \(sealed), updated_at = now()
                WHERE client_id = \(row.clientID) AND level = \(row.level)
                    AND has_user = \(row.hasUser) AND user_key = \(row.user) AND version = \(expected)
                RETURNING version
                """
            }
            var written: Int64?
            for try await value in try await client.query(query, logger: logger).decode(Int64.self) { written = value }
            return written
        }
        return written.map { TokenStoreEntry(token: token, version: UInt64(max(0, $0))) }
    }

    /// Takes the lease on `key` for `duration` when nobody holds it or its lease has run out,
    /// by the database's clock.
    ///
    /// - Returns: The lease, or `nil` when another holder has it.
    /// - Throws: ``/Courier/CourierError`` when the database cannot be reached.
    public func acquireLease(for key: TokenStoreKey, duration: Duration) async throws -> TokenStoreLease? {
        let row = RowKey(key)
        let holder = Self.newHolder()
        let milliseconds =
            Double(duration.components.seconds) * 1000
            + Double(duration.components.attoseconds) / 1e15
        let expiry = try await bounded("lease") { [tableName, client, logger] () -> Date? in
            let rows = try await client.query(
                """
                INSERT INTO \(unescaped: tableName) AS t
                    (client_id, level, has_user, user_key, version, lease_holder, lease_expires_at, updated_at)
                VALUES (\(row.clientID), \(row.level), \(row.hasUser), \(row.user), 0, \(holder),
                        now() + interval '1 millisecond' * \(milliseconds), now())
                ON CONFLICT (client_id, level, has_user, user_key) DO UPDATE
                SET lease_holder = EXCLUDED.lease_holder, lease_expires_at = EXCLUDED.lease_expires_at
                WHERE t.lease_holder IS NULL OR t.lease_expires_at IS NULL OR t.lease_expires_at <= now()
                RETURNING lease_expires_at
                """,
                logger: logger
            )
            var expiry: Date?
            for try await value in rows.decode(Date.self) { expiry = value }
            return expiry
        }
        return expiry.map { TokenStoreLease(key: key, holder: holder, expiresAt: $0) }
    }

    /// Ends `lease` when its holder still has it; otherwise changes nothing.
    ///
    /// - Throws: ``/Courier/CourierError`` when the database cannot be reached; the lease then
    ///   ends when it times out.
    public func releaseLease(_ lease: TokenStoreLease) async throws {
        let row = RowKey(lease.key)
        let holder = lease.holder
        try await bounded("release") { [tableName, client, logger] in
            try await client.query(
                """
                UPDATE \(unescaped: tableName) SET lease_holder = NULL, lease_expires_at = NULL
                WHERE client_id = \(row.clientID) AND level = \(row.level)
                    AND has_user = \(row.hasUser) AND user_key = \(row.user) AND lease_holder = \(holder)
                """,
                logger: logger
            )
        }
    }

    // MARK: Helpers

    /// Runs `body` after the schema is in place, within ``Configuration/operationTimeout``,
    /// with every error as a ``/Courier/CourierError``.
    @discardableResult
    func bounded<Result: Sendable>(
        _ operation: String,
        _ body: @escaping @Sendable () async throws -> Result
    ) async throws -> Result {
        let limit = operationTimeout
        guard lifecycle.enter() else {
            throw CourierError(.shutDown, message: "PostgreSQL token store: \(operation) after the store stopped")
        }
        defer { lifecycle.leave() }
        do {
            let timeout: @Sendable () -> any Error = {
                CourierError(.timedOut, message: "PostgreSQL token store: \(operation) took longer than \(limit)")
            }
            return try await withDeadline(limit, timeoutError: timeout) { [self] in
                try await prepareSchema()
                return try await body()
            }
        } catch {
            if ownsClient, lifecycle.phase == StoreLifecycle.Phase.idle, (error as? CourierError)?.kind == .timedOut {
                throw CourierError(
                    .shutDown,
                    message: "PostgreSQL token store: \(operation) failed: the store is not running; "
                        + "run it in a ServiceGroup, or call run() in a task of its own"
                )
            }
            throw await diagnosed(Self.courierError(error, operation: operation), operation: operation)
        }
    }

    private func seal(_ token: OAuth2Token?, for row: RowKey) async throws -> Data? {
        guard let token else { return nil }
        return try await sealer.sealToken(token, context: row.sealingContext)
    }

    private func open(_ sealed: Data?, for row: RowKey) async throws -> OAuth2Token? {
        guard let sealed else { return nil }
        return try await sealer.openToken(sealed, context: row.sealingContext)
    }

    /// A value unique to one acquisition, which names the process for people reading the
    /// table.
    private static func newHolder() -> String {
        "pid \(ProcessInfo.processInfo.processIdentifier) \(UUID().uuidString.lowercased())"
    }

    /// Settings of every session: a statement the server has not finished within the
    /// operation's time is cancelled by the server too, and no statement waits long for a lock.
    private static func sessionSettings(_ timeout: Duration) -> [(String, String)] {
        let (seconds, attoseconds) = timeout.components
        let milliseconds = max(100, seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        return [
            ("application_name", "courier-token-store"),
            ("statement_timeout", "\(milliseconds)"),
            ("lock_timeout", "\(milliseconds)"),
        ]
    }

    private static func validate(tableName: String) throws {
        guard isValidTableName(tableName) else {
            throw CourierError(
                .invalidConfiguration,
                message: "the table name \(tableName) must be lower-case letters, digits and _, starting with a letter"
            )
        }
    }
}
#endif
