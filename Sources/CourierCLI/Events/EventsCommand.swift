#if CommandLine
import ArgumentParser

/// `courier events URL`: prints a server-sent event stream, one event per line, as it arrives.
struct EventsCommand: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "events",
        abstract: "Print a server-sent event stream (text/event-stream), one event per line as it arrives.",
        discussion: """
            Each event is written to stdout as one line the moment it arrives (a pipe sees it \
            at once).

            --format text (the default): TYPE<TAB>DATA, where TYPE is the event's type \
            ("message" when the server named none) and DATA its data, each with backslash, \
            tab, carriage return and line feed written as \\\\, \\t, \\r and \\n, so an \
            event is one line and `cut -f2` gives its data.

            --format json: one JSON object per line, keys sorted, every key present, id the \
            stream's last event ID (null when none), retry_ms the delay the event's block \
            asked for (null when none):
              {"data":"…","id":"7","retry_ms":null,"type":"message"}

            A connection that ends or drops is opened again after the server's retry delay or \
            --retry-delay, with the last event ID as Last-Event-ID: no event is printed twice \
            or skipped. A -d body is sent once (a POST, such as a model's streamed answer): \
            the stream ends with its connection.

            EXIT CODES
              0    the stream ended: a 204, --max-events reached, or the server ended a
                   stream that does not reconnect (-d, --no-reconnect)
              1    not an event stream, an event over --max-event-size, any other failure
              2    bad usage (nothing is sent)
              7    could not connect (--max-failures times in a row when reconnecting)
              22   the server answered with a status of 400 or more
              28   timed out: connecting, or nothing for --idle-timeout
              35, 60, 90   TLS: handshake, certificate, pin (as for the requests)
              130  interrupted by Ctrl-C (SIGINT), 143 by SIGTERM: the stream is closed
            """
    )

    @Argument(help: "The URL: http:// or https:// (http:// when no scheme is given).")
    var url: String

    @Option(name: .customLong("format"), help: "How each event is printed: text (TYPE<TAB>DATA) or json.")
    var format: EventFormat = .text

    @Option(
        name: [.customShort("d"), .customLong("data")],
        help: "POST this body (text, @FILE, @- for stdin; repeated ones joined with '&'); the stream never reconnects."
    )
    var data: [String] = []

    @Flag(help: "The -d body is JSON: Content-Type application/json. (For JSON output, use --format json.)")
    var json = false

    @Option(
        name: .customLong("last-event-id"),
        help: "The Last-Event-ID of the first connection: resume a stream after this event."
    )
    var lastEventID: String?

    @Option(name: .customLong("max-events"), help: "Stop, with exit code 0, after this many events.")
    var maximumEvents: Int?

    @Option(
        name: .customLong("idle-timeout"),
        help: "Seconds without an event or comment before the connection counts as dead; 0 for none."
    )
    var idleTimeout: Double = 120

    @Flag(name: .customLong("no-reconnect"), help: "End when the connection ends instead of reconnecting.")
    var noReconnect = false

    @Option(
        name: .customLong("retry-delay"),
        help: "Seconds before reconnecting, until the server sets a delay with retry."
    )
    var retryDelay: Double = 3

    @Option(
        name: .customLong("max-failures"),
        help: "How many reconnection attempts in a row may fail before the command gives up."
    )
    var maximumFailures: Int = 5

    @Option(name: .customLong("max-event-size"), help: "The most bytes one event may hold (default 1 MiB).")
    var maximumEventSize: Int = 1 << 20

    @OptionGroup var connection: ConnectionOptions

    mutating func validate() throws {
        try connection.validate()
        if let maximumEvents, maximumEvents < 1 { throw ValidationError("--max-events must be 1 or more") }
        if idleTimeout < 0 { throw ValidationError("--idle-timeout must be 0 or more") }
        if retryDelay < 0 { throw ValidationError("--retry-delay must be 0 or more") }
        if maximumFailures < 1 { throw ValidationError("--max-failures must be 1 or more") }
        if maximumEventSize < 1 { throw ValidationError("--max-event-size must be 1 or more") }
        if json && data.isEmpty { throw ValidationError("--json describes the -d body: give -d too") }
    }

    func run() async throws { try await EventsRunner(command: self).run() }
}
#endif
