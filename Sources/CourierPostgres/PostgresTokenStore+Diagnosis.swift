#if Postgres
import Courier
import Logging
import PostgresNIO

extension PostgresTokenStore {
    /// Why the pool could not give a connection in time, found by opening one connection
    /// directly: the pool retries failed connections quietly, and its waiters only learn that
    /// time ran out.
    ///
    /// - Parameters:
    ///   - error: What the call failed with.
    ///   - operation: What the store was doing.
    /// - Returns: The connection's own failure (``CourierError/Kind/tlsFailure``,
    ///   ``CourierError/Kind/couldNotConnect``, …) when there is one, else `error`.
    func diagnosed(_ error: any Error, operation: String) async -> any Error {
        guard let courierError = error as? CourierError,
            courierError.kind == .timedOut || courierError.kind == .couldNotConnect,
            let configuration = diagnosisConfiguration
        else { return error }
        let logger = self.logger
        let limit = diagnosisTimeout
        do {
            let timeout: @Sendable () -> any Error = { error }
            try await withDeadline(limit, timeoutError: timeout) {
                let connection = try await PostgresConnection.connect(
                    configuration: configuration,
                    id: 0,
                    logger: logger
                )
                try? await connection.close()
            }
            return error
        } catch let failure as CourierError where failure == courierError {
            return error
        } catch {
            let found = Self.courierError(error, operation: operation)
            return (found as? CourierError)?.kind == .tokenStoreFailed ? courierError : found
        }
    }

    /// A direct connection's configuration, as the pool's connections have it.
    static func diagnosisConfiguration(_ configuration: Configuration) throws -> PostgresConnection.Configuration {
        var connection = PostgresConnection.Configuration(
            host: configuration.host,
            port: configuration.port,
            username: configuration.username,
            password: configuration.password,
            database: configuration.database,
            tls: try configuration.tls.connectionTLS()
        )
        let (seconds, attoseconds) = configuration.connectTimeout.components
        connection.options.connectTimeout = .milliseconds(seconds * 1000 + attoseconds / 1_000_000_000_000_000)
        return connection
    }
}
#endif
