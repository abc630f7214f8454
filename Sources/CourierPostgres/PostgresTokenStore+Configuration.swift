#if Postgres
import PostgresNIO

extension PostgresTokenStore {
    /// Where the store's database is and how the store talks to it.
    ///
    /// ```swift
    /// var configuration = PostgresTokenStore.Configuration(
    ///     host: "db.internal", username: "courier", password: secret, database: "tokens",
    ///     tls: .require(caBundlePath: "/etc/ssl/db-ca.pem")
    /// )
    /// configuration.operationTimeout = .seconds(2)
    /// ```
    public struct Configuration: Sendable {
        /// The database server's host name or address.
        public var host: String
        /// The database server's port, 5432 by default.
        public var port: Int
        /// The role to connect as.
        public var username: String
        /// The role's password; `nil` when the server asks for none (trust or peer).
        public var password: String?
        /// The database; `nil` for the database named like the role.
        public var database: String?
        /// Whether and how the connection is encrypted.
        public var tls: TLS
        /// The table that holds the tokens; created and migrated by the store. Lower-case
        /// letters, digits and `_`, starting with a letter, at most 48 characters; by
        /// default `courier_tokens`.
        public var tableName: String
        /// How long opening a connection may take, TLS included.
        public var connectTimeout: Duration
        /// How long one call of the store may take, waiting for a connection included. The
        /// call then throws ``/Courier/CourierError/Kind/timedOut`` and a broker renews on its own:
        /// keep this short, an outage of the store must not stall requests. When the pool had
        /// no connection to give, the store spends at most ``connectTimeout`` more on opening
        /// one itself, to report why (``/Courier/CourierError/Kind/couldNotConnect``,
        /// ``/Courier/CourierError/Kind/tlsFailure``).
        public var operationTimeout: Duration
        /// The most connections the store opens to the database at once.
        public var maximumConnections: Int

        /// Creates a configuration.
        ///
        /// - Parameters:
        ///   - host: The server's host name or address.
        ///   - port: The server's port.
        ///   - username: The role to connect as.
        ///   - password: The role's password, or `nil`.
        ///   - database: The database, or `nil` for the role's name.
        ///   - tls: Whether and how to encrypt; ``TLS/prefer`` by default.
        ///   - tableName: The table; `courier_tokens` by default.
        ///   - connectTimeout: How long opening a connection may take; 3 s by default.
        ///   - operationTimeout: How long one call may take; 5 s by default.
        ///   - maximumConnections: The most connections at once; 8 by default.
        public init(
            host: String,
            port: Int = 5432,
            username: String,
            password: String? = nil,
            database: String? = nil,
            tls: TLS = .prefer,
            tableName: String = "courier_tokens",
            connectTimeout: Duration = .seconds(3),
            operationTimeout: Duration = .seconds(5),
            maximumConnections: Int = 8
        ) {
            self.host = host
            self.port = port
            self.username = username
            self.password = password
            self.database = database
            self.tls = tls
            self.tableName = tableName
            self.connectTimeout = connectTimeout
            self.operationTimeout = operationTimeout
            self.maximumConnections = maximumConnections
        }
    }
}

extension PostgresTokenStore.Configuration {
    /// Whether the connection to the database is encrypted, and whom it trusts.
    public struct TLS: Sendable, Hashable {
        enum Mode: Hashable {
            case disable
            case prefer
            case require
        }

        let mode: Mode
        let caBundlePath: String?
        let serverName: String?

        /// No TLS: the tokens are sealed, but the role's password and the row keys travel in
        /// the clear. Only for a database on the same host or a private link.
        public static let disable = TLS(mode: .disable, caBundlePath: nil, serverName: nil)

        /// TLS when the server offers it, a plain connection when it does not; the server's
        /// certificate is checked against the system's roots when TLS is used. Open to a
        /// downgrade by anyone on the path: prefer ``require(caBundlePath:serverName:)``.
        public static let prefer = TLS(mode: .prefer, caBundlePath: nil, serverName: nil)

        /// TLS or no connection: a server without TLS, or whose certificate does not chain
        /// to the roots or does not name the host, is refused with
        /// ``/Courier/CourierError/Kind/tlsFailure``.
        ///
        /// - Parameters:
        ///   - caBundlePath: PEM file of the roots to trust; `nil` for the system's roots.
        ///   - serverName: The name the certificate must carry, when it is not the host
        ///     (connecting by address, say).
        /// - Returns: The setting.
        public static func require(caBundlePath: String? = nil, serverName: String? = nil) -> TLS {
            TLS(mode: .require, caBundlePath: caBundlePath, serverName: serverName)
        }

        /// postgres-nio's setting for a pool.
        func clientTLS() -> PostgresClient.Configuration.TLS {
            let configuration = tlsConfiguration()
            switch mode {
            case .disable: return .disable
            case .prefer: return .prefer(configuration)
            case .require: return .require(configuration)
            }
        }

        /// postgres-nio's setting for one connection.
        func connectionTLS() throws -> PostgresConnection.Configuration.TLS {
            switch mode {
            case .disable: return .disable
            case .prefer: return .prefer(try NIOSSLContext(configuration: tlsConfiguration()))
            case .require: return .require(try NIOSSLContext(configuration: tlsConfiguration()))
            }
        }

        private func tlsConfiguration() -> TLSConfiguration {
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.minimumTLSVersion = .tlsv12
            configuration.certificateVerification = .fullVerification
            if let caBundlePath {
                configuration.trustRoots = .file(caBundlePath)
            }
            return configuration
        }
    }
}
#endif
