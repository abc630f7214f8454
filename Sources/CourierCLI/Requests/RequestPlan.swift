#if CommandLine
import Courier
import Foundation
import HTTPTypes

/// What a request command will send, and through what: checked in full before anything is
/// sent, so that bad input ends with exit code 2 and no request.
struct RequestPlan {
    let url: URL
    let request: HTTPRequest
    let body: RequestBody?
    let transport: CurlTransport.Configuration
    let session: Session.Configuration

    /// Checks the options and reads the body files they name.
    ///
    /// - Parameters:
    ///   - method: The method of the command.
    ///   - options: The parsed options.
    ///   - standardInput: Reads stdin, for `-d @-`.
    ///   - password: Asks for a client certificate's password.
    init(
        method: HTTPRequest.Method,
        options: RequestOptions,
        standardInput: () -> Data = { FileHandle.standardInput.readDataToEndOfFile() },
        password: (String) -> String? = { Prompt.secret($0) }
    ) throws {
        let url = try Self.url(options.url)
        var fields = try Self.fields(options.connection.headers)
        var body: RequestBody?
        var contentType: String?
        if let data = try Self.data(options.data, standardInput: standardInput) {
            body = .data(data)
            contentType = Self.contentType(json: options.json)
        } else if !options.form.isEmpty {
            let parts = try options.form.map(Self.part)
            let encoded = try ResourceRequest(path: "/", method: .post, multipartData: parts).makeHTTPRequest()
            body = encoded.body
            contentType = encoded.request.headerFields[.contentType]
        }
        if let contentType, fields[.contentType] == nil { fields[.contentType] = contentType }
        if options.json, fields[.accept] == nil { fields[.accept] = "application/json" }

        self.url = url
        self.request = HTTPRequest(method: method, path: url.absoluteString, headerFields: fields)
        self.body = body
        self.transport = try options.connection.transportConfiguration(for: url, password: password)
        self.session = options.connection.sessionConfiguration(
            timeout: options.maximumTime.map(Self.duration),
            maximumRedirects: options.followRedirects ? options.maximumRedirects : 0
        )
    }

    /// The URL of the command line: http or https with a host; `http://` when no scheme is given.
    static func url(_ text: String) throws -> URL {
        let withScheme = text.contains("://") ? text : "http://" + text
        guard let url = URL(string: withScheme), let scheme = url.scheme?.lowercased(),
            scheme == "http" || scheme == "https", let host = url.host, !host.isEmpty
        else {
            throw CommandFailure.usage("\(text.debugDescription) is not an http:// or https:// URL")
        }
        return url
    }

    /// The `-H` fields, in order.
    static func fields(_ headers: [String]) throws -> HTTPFields {
        var fields = HTTPFields()
        for header in headers { fields.append(try field(header)) }
        return fields
    }

    /// The body of the `-d` options, joined with `&` as curl joins them, or `nil` without one.
    static func data(_ items: [String], standardInput: () -> Data) throws -> Data? {
        guard !items.isEmpty else { return nil }
        var joined = Data()
        for (index, item) in items.enumerated() {
            if index > 0 { joined.append(UInt8(ascii: "&")) }
            joined.append(try data(item, standardInput: standardInput))
        }
        return joined
    }

    /// The content type of a `-d` body: JSON with `--json`, a form otherwise (as curl sends it).
    static func contentType(json: Bool) -> String {
        json ? "application/json" : "application/x-www-form-urlencoded"
    }

    /// A `-H 'Name: value'` field.
    static func field(_ text: String) throws -> HTTPField {
        guard let colon = text.firstIndex(of: ":") else {
            throw CommandFailure.usage("-H \(text.debugDescription) is not 'Name: value'")
        }
        let name = String(text[..<colon]).trimmingCharacters(in: .whitespaces)
        let value = String(text[text.index(after: colon)...]).trimmingCharacters(in: .whitespaces)
        guard let fieldName = HTTPField.Name(name) else {
            throw CommandFailure.usage("-H \(text.debugDescription): \(name.debugDescription) is not a header name")
        }
        guard !value.contains(where: { $0 == "\r" || $0 == "\n" }) else {
            throw CommandFailure.usage("-H \(name): a header value cannot hold a line break")
        }
        return HTTPField(name: fieldName, value: value)
    }

    /// The bytes of one `-d`: the text, a file's bytes for `@FILE`, stdin for `@-`.
    static func data(_ item: String, standardInput: () -> Data) throws -> Data {
        guard item.hasPrefix("@") else { return Data(item.utf8) }
        let path = String(item.dropFirst())
        if path == "-" { return standardInput() }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw CommandFailure.usage("-d @\(path): cannot read \(path.debugDescription)")
        }
        return data
    }

    /// One `-F`: `name=value` a text field, `name=@PATH` a file (`;type=MEDIA` sets its type).
    static func part(_ item: String) throws -> MultipartPart {
        guard let equals = item.firstIndex(of: "="), equals != item.startIndex else {
            throw CommandFailure.usage("-F \(item.debugDescription) is not name=value or name=@FILE")
        }
        let name = String(item[..<equals])
        let value = String(item[item.index(after: equals)...])
        guard value.hasPrefix("@") else { return .text(value, name: name) }
        var path = String(value.dropFirst())
        var type = "application/octet-stream"
        if let range = path.range(of: ";type=") {
            type = String(path[range.upperBound...])
            path = String(path[..<range.lowerBound])
        }
        guard FileManager.default.isReadableFile(atPath: path) else {
            throw CommandFailure.usage("-F \(name)=@\(path): cannot read \(path.debugDescription)")
        }
        return .file(atPath: path, name: name, contentType: type)
    }

    /// Seconds as a duration, to the millisecond.
    static func duration(_ seconds: Double) -> Duration {
        .milliseconds(Int64((seconds * 1000).rounded()))
    }
}
#endif
