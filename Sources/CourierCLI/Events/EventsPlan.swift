#if CommandLine
import Courier
import Foundation
import HTTPTypes
import Logging

/// What `courier events` will open, and through what: checked in full before anything is
/// sent, so that bad input ends with exit code 2 and no request.
struct EventsPlan {
    /// The request each connection sends: a GET, or a POST of the `-d` body.
    let request: ResourceRequest
    /// How the stream reads events and reconnects.
    let events: ServerSentEvents.Configuration
    let transport: CurlTransport.Configuration
    /// The session's configuration, its middlewares included.
    let session: Session.Configuration
    /// The logger of `-v`, or `nil`.
    let logger: Logger?

    /// Checks the options and reads the body files they name.
    ///
    /// - Parameters:
    ///   - command: The parsed command.
    ///   - standardInput: Reads stdin, for `-d @-`.
    ///   - password: Asks for a client certificate's password.
    init(
        command: EventsCommand,
        standardInput: () -> Data = { FileHandle.standardInput.readDataToEndOfFile() },
        password: (String) -> String? = { Prompt.secret($0) }
    ) throws {
        let url = try RequestPlan.url(command.url)
        var fields = HTTPFields()
        var operatorFields = HTTPFields()
        for field in try RequestPlan.fields(command.connection.headers) {
            if OperatorHeaderMiddleware.carries(field.name) {
                operatorFields.append(field)
            } else {
                fields.append(field)
            }
        }
        if let lastEventID = command.lastEventID {
            let field = try RequestPlan.field("Last-Event-ID: \(lastEventID)")
            fields[field.name] = field.value
        }
        var request = ResourceRequest(path: url.absoluteString, headerFields: fields)
        if let data = try RequestPlan.data(command.data, standardInput: standardInput) {
            request.method = .post
            request.body = .data(data, contentType: RequestPlan.contentType(json: command.json))
        }
        self.request = request

        events = ServerSentEvents.Configuration(
            maximumEventBytes: command.maximumEventSize,
            idleTimeout: command.idleTimeout == 0 ? nil : RequestPlan.duration(command.idleTimeout),
            reconnects: !command.noReconnect,
            reconnectionDelay: RequestPlan.duration(command.retryDelay),
            maximumReconnectionDelay: max(.seconds(60), RequestPlan.duration(command.retryDelay)),
            maximumConsecutiveFailures: command.maximumFailures
        )
        transport = try command.connection.transportConfiguration(for: url, password: password)
        var session = command.connection.sessionConfiguration(timeout: nil, maximumRedirects: 0)
        logger = command.connection.verboseLogger
        // The operator's credentials go on first, so that -v logs them (redacted) as sent.
        var middlewares: [any Middleware] = []
        if !operatorFields.isEmpty { middlewares.append(OperatorHeaderMiddleware(fields: operatorFields)) }
        if let logger { middlewares.append(LoggingMiddleware(logger: logger)) }
        session.middlewares = middlewares
        self.session = session
    }
}
#endif
