#if CommandLine
import ArgumentParser

/// The options every request command takes, spelled as curl spells them.
struct RequestOptions: ParsableArguments {
    @Argument(help: "The URL: http:// or https:// (http:// when no scheme is given).")
    var url: String

    @Option(
        name: [.customShort("d"), .customLong("data")],
        help: "The body: text, @FILE for a file's bytes, @- for stdin. Repeated ones are joined with '&'."
    )
    var data: [String] = []

    @Flag(help: "JSON: Content-Type and Accept application/json; a JSON answer is pretty-printed on a terminal.")
    var json = false

    @Option(
        name: [.customShort("F"), .customLong("form")],
        help: "A multipart field, name=value, or a file, name=@PATH; repeatable."
    )
    var form: [String] = []

    @Option(name: [.customShort("o"), .customLong("output")], help: "Write the body to FILE instead of stdout.")
    var output: String?

    @Flag(name: [.customShort("i"), .customLong("include")], help: "Print the response head before the body.")
    var include = false

    @Flag(name: [.customShort("L"), .customLong("location")], help: "Follow redirects.")
    var followRedirects = false

    @Option(name: .customLong("max-redirs"), help: "The most redirects followed with -L (default 5).")
    var maximumRedirects: Int = 5

    @Option(
        name: [.customShort("m"), .customLong("max-time")],
        help: "The longest the whole request may take, in seconds."
    )
    var maximumTime: Double?

    @OptionGroup var connection: ConnectionOptions

    @Flag(
        name: [.customShort("f"), .customLong("fail")],
        help: "Exit with 22 and print no body when the status is 400 or more."
    )
    var fail = false

    @Flag(
        name: [.customShort("w"), .customLong("timing")],
        help: "Print the timings on stderr as a table; --timing=json prints one JSON object."
    )
    var timing = false

    @Flag(name: .customLong("timing-json"), help: .hidden)
    var timingJSON = false

    @Flag(name: .customLong("no-progress"), help: "Never show a progress bar.")
    var noProgress = false

    mutating func validate() throws {
        try connection.validate()
        if !data.isEmpty && !form.isEmpty { throw ValidationError("-d and -F exclude each other: choose one body") }
        if maximumRedirects < 0 { throw ValidationError("--max-redirs must be 0 or more") }
        if let maximumTime, maximumTime <= 0 { throw ValidationError("--max-time must be positive") }
    }
}
#endif
