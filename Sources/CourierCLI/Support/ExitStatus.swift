#if CommandLine
import Courier

/// The process exit codes, and which error maps to which (documented in `courier --help`).
enum ExitStatus {
    static let success: Int32 = 0
    static let failure: Int32 = 1
    static let usage: Int32 = 2
    static let couldNotConnect: Int32 = 7
    static let httpError: Int32 = 22
    static let timedOut: Int32 = 28
    static let tlsFailure: Int32 = 35
    static let tooManyRedirects: Int32 = 47
    static let certificate: Int32 = 60
    static let pinMismatch: Int32 = 90

    /// The exit code for an error a command threw.
    ///
    /// - Parameters:
    ///   - error: The error.
    ///   - statusFails: Whether a status of 400 or more is an HTTP error (22), as it is for a
    ///     command run with `--fail` and for `courier events`.
    static func code(for error: any Error, statusFails: Bool = false) -> Int32 {
        guard let error = error as? CourierError else { return failure }
        switch error.kind {
        case .clientError where statusFails, .serverError where statusFails:
            return httpError
        case .invalidURL, .invalidHeader, .reservedHeader, .invalidParameter, .bodyNotAllowed, .conflictingBody,
            .unreadableFile, .invalidConfiguration, .invalidBody, .insecureScheme, .untrustedHost:
            return usage
        case .couldNotResolveHost, .couldNotConnect, .proxyFailure:
            return couldNotConnect
        case .timedOut, .connectTimedOut, .stalled:
            return timedOut
        case .pinMismatch:
            return pinMismatch
        case .tlsFailure:
            return error.curlCode == 60 ? certificate : tlsFailure
        case .tooManyRedirects:
            return tooManyRedirects
        default:
            return failure
        }
    }

    /// One line that says what went wrong, without a secret.
    static func describe(_ error: any Error) -> String {
        if let error = error as? CourierError { return "courier: \(error.message)" }
        return "courier: \(error)"
    }
}

/// A failure a command reports itself: its exit code and the one line it prints on stderr
/// (none when empty).
struct CommandFailure: Error {
    let code: Int32
    let message: String

    init(_ code: Int32, _ message: String) {
        self.code = code
        self.message = message.isEmpty ? "" : "courier: " + message
    }

    /// Bad usage: exit code 2.
    static func usage(_ message: String) -> CommandFailure { CommandFailure(ExitStatus.usage, message) }
}
#endif
