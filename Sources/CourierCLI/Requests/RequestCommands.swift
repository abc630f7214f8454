#if CommandLine
import ArgumentParser
import HTTPTypes

/// A request command: `courier <method> URL [options]`.
protocol MethodCommand: AsyncParsableCommand {
    /// The method the command sends.
    static var method: HTTPRequest.Method { get }
    /// The options, as curl spells them.
    var options: RequestOptions { get }
}

extension MethodCommand {
    func run() async throws { try await RequestRunner(method: Self.method, options: options).run() }
}

/// `courier get URL`.
struct GetCommand: MethodCommand {
    static let configuration = CommandConfiguration(commandName: "get", abstract: "Send a GET request.")
    static let method = HTTPRequest.Method.get
    @OptionGroup var options: RequestOptions
}

/// `courier head URL`: prints the response head.
struct HeadCommand: MethodCommand {
    static let configuration = CommandConfiguration(
        commandName: "head",
        abstract: "Send a HEAD request; print the head."
    )
    static let method = HTTPRequest.Method.head
    @OptionGroup var options: RequestOptions
}

/// `courier post URL`.
struct PostCommand: MethodCommand {
    static let configuration = CommandConfiguration(commandName: "post", abstract: "Send a POST request.")
    static let method = HTTPRequest.Method.post
    @OptionGroup var options: RequestOptions
}

/// `courier put URL`.
struct PutCommand: MethodCommand {
    static let configuration = CommandConfiguration(commandName: "put", abstract: "Send a PUT request.")
    static let method = HTTPRequest.Method.put
    @OptionGroup var options: RequestOptions
}

/// `courier patch URL`.
struct PatchCommand: MethodCommand {
    static let configuration = CommandConfiguration(commandName: "patch", abstract: "Send a PATCH request.")
    static let method = HTTPRequest.Method.patch
    @OptionGroup var options: RequestOptions
}

/// `courier delete URL`.
struct DeleteCommand: MethodCommand {
    static let configuration = CommandConfiguration(commandName: "delete", abstract: "Send a DELETE request.")
    static let method = HTTPRequest.Method.delete
    @OptionGroup var options: RequestOptions
}
#endif
