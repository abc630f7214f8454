#if Postgres
import Courier
import PostgresNIO

extension PostgresTokenStore {
    /// `error` as the ``CourierError`` a caller of the store sees: what failed and why,
    /// without a token, a sealed value or a password.
    ///
    /// - Parameters:
    ///   - error: What postgres-nio, the pool or the sealer threw.
    ///   - operation: What the store was doing (`read`, `write`, `lease`, `migrate`).
    static func courierError(_ error: any Error, operation: String) -> any Error {
        switch error {
        case is CourierError, is CancellationError:
            return error
        case let error as PSQLError:
            return courierError(error, operation: operation)
        // The pool's own error type lives in an underscored module of postgres-nio; it is told
        // by its name rather than by importing that module.
        case _ where String(describing: type(of: error)) == "ConnectionPoolError":
            return CourierError(
                .couldNotConnect,
                message: "PostgreSQL token store: \(operation) failed: no connection to the database could be opened"
            )
        case is NIOSSLError, is BoringSSLError:
            return CourierError(
                .tlsFailure,
                message: "PostgreSQL token store: \(operation) failed: TLS to the database failed: \(error)"
            )
        default:
            return CourierError(
                .tokenStoreFailed,
                message: "PostgreSQL token store: \(operation) failed: \(String(describing: type(of: error)))"
            )
        }
    }

    private static func courierError(_ error: PSQLError, operation: String) -> CourierError {
        let prefix = "PostgreSQL token store: \(operation) failed"
        switch error.code {
        case .sslUnsupported:
            return CourierError(.tlsFailure, message: "\(prefix): the database does not offer TLS, and TLS is required")
        case .failedToAddSSLHandler, .receivedUnencryptedDataAfterSSLRequest:
            return CourierError(.tlsFailure, message: "\(prefix): TLS to the database failed (\(error.code))")
        case .connectionError:
            if let underlying = error.underlying, underlying is NIOSSLError || underlying is BoringSSLError {
                return CourierError(.tlsFailure, message: "\(prefix): TLS to the database failed: \(underlying)")
            }
            return CourierError(.couldNotConnect, message: "\(prefix): cannot connect to the database")
        case .serverClosedConnection, .clientClosedConnection, .uncleanShutdown:
            return CourierError(.connectionClosed, message: "\(prefix): the connection to the database closed")
        case .poolClosed:
            return CourierError(.shutDown, message: "\(prefix): the store was shut down")
        case .queryCancelled:
            return CourierError(.timedOut, message: "\(prefix): the query was cancelled")
        case .server:
            let state = error.serverInfo?[.sqlState] ?? "?"
            let text = error.serverInfo?[.message] ?? ""
            // 57014 query_canceled: statement_timeout; 55P03 lock_not_available: lock_timeout.
            let kind: CourierError.Kind = state == "57014" || state == "55P03" ? .timedOut : .tokenStoreFailed
            return CourierError(kind, message: "\(prefix): the database answered \(state) \(text)")
        default:
            return CourierError(.tokenStoreFailed, message: "\(prefix): \(error.code)")
        }
    }
}
#endif
