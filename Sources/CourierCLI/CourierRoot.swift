#if CommandLine
import ArgumentParser

/// `courier`: the root command, which only holds the subcommands.
struct CourierRoot: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "courier",
        abstract: "HTTP requests, TLS pins and OAuth2 tokens from the shell, through Courier.",
        discussion: """
            Requests verify TLS always: trust a private CA with --cacert FILE, pin keys with --pin.

            EXIT CODES
              0   success
              1   any other failure
              2   bad usage: unknown option, malformed URL, unreadable file, -k (nothing is sent)
              7   could not resolve the host or connect to it (or to the proxy)
              22  the server answered with a status of 400 or more, and --fail was given (events: always)
              28  timed out: connecting (--connect-timeout), the whole request (-m), or a stall
              35  the TLS handshake failed
              47  too many redirects (-L, --max-redirs)
              60  the server's certificate was not verified (unknown CA, expired, wrong host)
              90  the server's chain holds none of the --pin keys
              130 interrupted by Ctrl-C (SIGINT); 143 by SIGTERM (events)
            """,
        subcommands: [
            GetCommand.self, HeadCommand.self, PostCommand.self, PutCommand.self, PatchCommand.self,
            DeleteCommand.self, EventsCommand.self, PinCommand.self, TokenCommand.self,
        ]
    )
}
#endif
