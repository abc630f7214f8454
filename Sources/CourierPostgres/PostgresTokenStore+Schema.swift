#if Postgres
import Courier
import PostgresNIO

extension PostgresTokenStore {
    /// The schema's versions, in order: the store brings its table from the version the
    /// migrations table records up to the last one.
    ///
    /// Version 1, `<table>`: one row per token entry, keyed by client id, level and user
    /// (`has_user`, with `user_key` `''` when there is none, so that the key is unique without
    /// relying on how a database compares NULLs). `version` rises with every write, a removal
    /// too: a removed token leaves its row with `sealed_token` NULL, a tombstone, so a version
    /// never comes back (no ABA). `sealed_token` is the token sealed with AES-256-GCM, the row's
    /// key authenticated with it. `lease_holder` and `lease_expires_at` are the lease.
    static func migrations(table: String) -> [String] {
        [
            """
            CREATE TABLE IF NOT EXISTS \(table) (
                client_id text NOT NULL,
                level text NOT NULL,
                has_user boolean NOT NULL,
                user_key text NOT NULL,
                version bigint NOT NULL DEFAULT 0,
                sealed_token bytea,
                lease_holder text,
                lease_expires_at timestamptz,
                updated_at timestamptz NOT NULL DEFAULT now(),
                PRIMARY KEY (client_id, level, has_user, user_key),
                CHECK (has_user OR user_key = '')
            )
            """
        ]
    }

    /// The table that records, per token table, the schema version it has.
    static let migrationsTable = "courier_schema_migrations"

    /// The advisory lock every Courier migration takes, in every database: migrations of
    /// one database run one at a time, whichever table and process.
    static let migrationLock: Int64 = 0x436F_7572_6965_7201  // "Courier" + 1

    /// Creates or migrates the table, once per store; a failed attempt is tried again by the
    /// next call.
    func prepareSchema() async throws {
        let attempt = schema.withLock { task -> Task<Void, any Error> in
            if let task { return task }
            let fresh = Task { try await self.migrate(logger: self.logger) }
            task = fresh
            return fresh
        }
        do {
            try await attempt.value
        } catch {
            schema.withLock { task in if task == attempt { task = nil } }
            throw error
        }
    }

    /// Runs the missing migrations in one transaction under the advisory lock, so that N
    /// processes starting at once migrate once: the first runs them, the others wait for the
    /// lock and find nothing left to do.
    private func migrate(logger: Logger) async throws {
        let table = tableName
        let migrations = Self.migrations(table: table)
        let applied = try await client.withTransaction(logger: logger) { connection -> Int in
            try await connection.query("SELECT pg_advisory_xact_lock(\(Self.migrationLock))", logger: logger)
            try await connection.query(
                PostgresQuery(
                    unsafeSQL: """
                        CREATE TABLE IF NOT EXISTS \(Self.migrationsTable) (
                            table_name text PRIMARY KEY,
                            version integer NOT NULL,
                            applied_at timestamptz NOT NULL DEFAULT now()
                        )
                        """
                ),
                logger: logger
            )
            var current = 0
            let rows = try await connection.query(
                "SELECT version FROM \(unescaped: Self.migrationsTable) WHERE table_name = \(table)",
                logger: logger
            )
            for try await version in rows.decode(Int.self) { current = version }
            guard current < migrations.count else { return 0 }
            for sql in migrations[current...] {
                try await connection.query(PostgresQuery(unsafeSQL: sql), logger: logger)
            }
            try await connection.query(
                """
                INSERT INTO \(unescaped: Self.migrationsTable) (table_name, version)
                VALUES (\(table), \(migrations.count))
                ON CONFLICT (table_name) DO UPDATE SET version = EXCLUDED.version, applied_at = now()
                """,
                logger: logger
            )
            return migrations.count - current
        }
        if applied > 0 {
            logger.info(
                "PostgreSQL token store: schema migrated",
                metadata: ["table": "\(table)", "migrations": "\(applied)"]
            )
        }
    }

    /// Whether `name` may be a table name: it is written into SQL as it is.
    static func isValidTableName(_ name: String) -> Bool {
        guard let first = name.unicodeScalars.first, ("a"..."z").contains(first), name.count <= 48 else {
            return false
        }
        return name.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "_" }
    }
}
#endif
