#if CommandLine
import ArgumentParser
import Courier
import Foundation
import Logging

/// The options of every command that talks HTTP to a URL: header fields, the protocol, the
/// connect timeout, TLS trust, the proxy and verbose logging, spelled as curl spells them.
struct ConnectionOptions: ParsableArguments {
    @Option(name: [.customShort("H"), .customLong("header")], help: "A header field, 'Name: value'; repeatable.")
    var headers: [String] = []

    @Flag(name: .customLong("http1.1"), help: "Use HTTP/1.1 only.")
    var http1 = false

    @Flag(name: .customLong("http2"), help: "Use HTTP/2 when the server offers it (the default).")
    var http2 = false

    @Option(name: .customLong("connect-timeout"), help: "The longest connecting may take, in seconds.")
    var connectTimeout: Double?

    @OptionGroup var tls: TLSOptions

    @Option(name: [.customShort("x"), .customLong("proxy")], help: "The proxy, http://[user:password@]host:port.")
    var proxy: String?

    @Flag(name: [.customShort("v"), .customLong("verbose")], help: "Log the exchange on stderr, secrets redacted.")
    var verbose = false

    mutating func validate() throws {
        try tls.validate()
        if http1 && http2 { throw ValidationError("--http1.1 and --http2 exclude each other") }
        if let connectTimeout, connectTimeout <= 0 { throw ValidationError("--connect-timeout must be positive") }
    }

    /// The transport for requests to `url`: its trust, its proxy and its HTTP versions.
    ///
    /// - Parameters:
    ///   - url: The URL the command sends to; pins and client certificates are for its host.
    ///   - password: Asks for a client certificate's password.
    func transportConfiguration(
        for url: URL,
        password: (String) -> String?
    ) throws -> CurlTransport.Configuration {
        try TransportSettings.configuration(
            for: url,
            tls: tls,
            proxy: proxy,
            allowsHTTP2: !http1,
            password: password
        )
    }

    /// The session configuration of a command: the connect timeout and, like curl, one attempt
    /// (an operator re-runs a command if they want).
    ///
    /// - Parameters:
    ///   - timeout: The longest a whole request may take, or `nil` for no limit.
    ///   - maximumRedirects: How many redirects are followed.
    func sessionConfiguration(timeout: Duration?, maximumRedirects: Int) -> Session.Configuration {
        var configuration = Session.Configuration(
            connectTimeout: connectTimeout.map(RequestPlan.duration) ?? .seconds(10),
            timeout: timeout,
            maximumRedirects: maximumRedirects,
            maximumResponseBodySize: Int.max
        )
        configuration.retryPolicy = .never
        return configuration
    }

    /// The logger of `-v`, which writes the exchange on stderr (secrets redacted), or `nil`.
    var verboseLogger: Logger? {
        guard verbose else { return nil }
        var logger = Logger(label: "courier") { StreamLogHandler.standardError(label: $0) }
        logger.logLevel = .debug
        return logger
    }
}
#endif
