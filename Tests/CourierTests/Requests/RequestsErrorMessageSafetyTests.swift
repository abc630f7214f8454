import Foundation
import HTTPTypes
import Logging
import Testing

@testable import Courier

/// What a refused request's error says: never the query (which may hold a secret), never a
/// control character (which could forge a log line), wherever the request failed — in its
/// preparation, in the session, or on a redirect whose `Location` holds the secret — and
/// neither does anything logged about it.
@Suite(.timeLimit(.minutes(1)))
struct RequestsErrorMessageSafetyTests {
    static let secret = "SECRET-123"
    static let query = "token=\(secret)"
    static let missingFile = "/nonexistent/courier-\(UUID().uuidString)\r\nX-Injected: 1.bin"

    /// Where a request goes, and how it fails.
    enum Failure: String, CaseIterable, Sendable, CustomTestStringConvertible {
        case spaceInQuery, lineBreakInPath, fragment, badPercentEscape, protocolRelative, otherScheme,
            noAuthority, malformedAuthority, controlInHeaderValue, reservedHeader, nanParameterWithLineBreakInName,
            nestedArrayInCommaFormat, bodyOnGET, unreadableFile, multipartContentType, relativeWithoutBaseURL,
            otherSchemeOfHTTPRequest, spaceInAbsoluteHTTPRequestPath, unusableBaseURL, tooManyRedirects,
            insecureRedirect

        var testDescription: String { rawValue }

        /// The kind the request fails with, to be sure each case takes its own path.
        var kind: CourierError.Kind {
            switch self {
            case .spaceInQuery, .lineBreakInPath, .fragment, .badPercentEscape, .protocolRelative, .otherScheme,
                .noAuthority, .malformedAuthority, .relativeWithoutBaseURL, .otherSchemeOfHTTPRequest,
                .spaceInAbsoluteHTTPRequestPath, .unusableBaseURL:
                .invalidURL
            case .controlInHeaderValue, .multipartContentType: .invalidHeader
            case .reservedHeader: .reservedHeader
            case .nanParameterWithLineBreakInName, .nestedArrayInCommaFormat: .invalidParameter
            case .bodyOnGET: .bodyNotAllowed
            case .unreadableFile: .unreadableFile
            case .tooManyRedirects: .tooManyRedirects
            case .insecureRedirect: .insecureRedirect
            }
        }
    }

    /// A session with the logging middleware whose lines `handler` captures.
    static func session(
        _ env: TestEnvironment,
        baseURL: URL?,
        handler: CapturingLogHandler,
        secured: Bool = false
    ) -> Session {
        var configuration = Session.Configuration(
            baseURL: baseURL,
            maximumRedirects: 2,
            middlewares: [LoggingMiddleware(logger: handler.makeLogger())]
        )
        configuration.retryPolicy = .never
        var transport = CurlTransport.Configuration(proxy: .none)
        if secured { transport.trustedCertificateBundlePath = env.caBundle }
        return Session(configuration: configuration, transport: CurlTransport(configuration: transport))
    }

    /// A resource request whose failure is `failure`, each with the secret in its query.
    static func resourceRequest(_ failure: Failure, env: TestEnvironment) -> ResourceRequest? {
        let query = Self.query
        switch failure {
        case .spaceInQuery:
            return ResourceRequest(path: "/x?\(query)&q=a b")
        case .lineBreakInPath:
            return ResourceRequest(path: "/x\r\nX-Injected: 1?\(query)")
        case .fragment:
            return ResourceRequest(path: "/x?\(query)#\r\nsection")
        case .badPercentEscape:
            return ResourceRequest(path: "/x?\(query)&q=%zz\r\n")
        case .protocolRelative:
            return ResourceRequest(path: "//evil.example/x?\(query)\r\n")
        case .otherScheme:
            return ResourceRequest(path: "ftp://evil.example/x?\(query)\r\n")
        case .noAuthority:
            return ResourceRequest(path: "http:x?\(query)\r\n")
        case .malformedAuthority:
            return ResourceRequest(path: "http://user:\(secret)\r\n@127.0.0.1/x?\(query)")
        case .controlInHeaderValue:
            return ResourceRequest(
                path: "/x?\(query)",
                headerFields: HTTPFields([
                    HTTPField(name: HTTPField.Name("X-Note")!, lenientValue: Array("a\u{1B}[2Jb".utf8))
                ])
            )
        case .reservedHeader:
            return ResourceRequest(path: "/x?\(query)", headerFields: [.authorization: "Bearer \(secret)"])
        case .nanParameterWithLineBreakInName:
            return ResourceRequest(
                path: "/x?\(query)",
                parameters: ["q\r\nX-Injected: 1": .double(.nan), "token": .string(secret)]
            )
        case .nestedArrayInCommaFormat:
            return ResourceRequest(
                path: "/x?\(query)",
                parameters: ["list\r\nX-Injected: 1": [[1]], "token": .string(secret)],
                queryStringFormat: ResourceRequest.QueryStringFormat(arrayFormat: .commaSeparated)
            )
        case .bodyOnGET:
            return ResourceRequest(path: "/x?\(query)", body: .text("x"))
        case .unreadableFile:
            return ResourceRequest(path: "/x?\(query)", method: .put, body: .file(atPath: missingFile))
        case .multipartContentType:
            return ResourceRequest(
                path: "/x?\(query)",
                method: .post,
                multipartData: [
                    MultipartPart(
                        name: "field\r\nX-Injected: 1",
                        filename: nil,
                        contentType: "text/plain\r\nX-Injected: 1",
                        content: .data(Data(secret.utf8))
                    )
                ]
            )
        case .tooManyRedirects:
            // The fault server's Location repeats the request target, query and all.
            return ResourceRequest(path: "/redirect-loop?\(query)")
        case .insecureRedirect:
            // Every byte escaped, so that only the Location, not the request, holds the secret.
            let target = "http://127.0.0.1:\(env.faults.port ?? 80)/x?\(query)"
            let encoded = target.utf8.map { String(format: "%%%02X", $0) }.joined()
            return ResourceRequest(path: "/httpbin/redirect-to?url=\(encoded)")
        case .relativeWithoutBaseURL, .otherSchemeOfHTTPRequest, .spaceInAbsoluteHTTPRequestPath, .unusableBaseURL:
            return nil
        }
    }

    /// Sends the request of `failure` and returns its error.
    static func error(
        of failure: Failure,
        env: TestEnvironment,
        handler: CapturingLogHandler
    ) async throws
        -> CourierError
    {
        let session: Session
        switch failure {
        case .relativeWithoutBaseURL:
            session = Self.session(env, baseURL: nil, handler: handler)
        case .unusableBaseURL:
            session = Self.session(env, baseURL: URL(string: "file:///tmp/base?\(query)")!, handler: handler)
        case .insecureRedirect:
            session = Self.session(env, baseURL: env.url(.https), handler: handler, secured: true)
        default:
            session = Self.session(env, baseURL: env.faults, handler: handler)
        }
        defer { Task { await session.shutdown() } }
        do {
            if let resource = resourceRequest(failure, env: env) {
                _ = try await session.send(resource)
            } else {
                // An HTTPRequest cannot hold a control character: swift-http-types turns them
                // into spaces.
                let request =
                    switch failure {
                    case .otherSchemeOfHTTPRequest:
                        HTTPRequest(method: .get, scheme: "gopher", authority: "127.0.0.1", path: "/x?\(query)")
                    case .spaceInAbsoluteHTTPRequestPath:
                        HTTPRequest(method: .get, path: "http://127.0.0.1/x?\(query)&q=a b")
                    default:
                        HTTPRequest(method: .get, path: "/x?\(query)")
                    }
                _ = try await session.send(request)
            }
        } catch let error as CourierError {
            return error
        }
        throw TestServersError(message: "\(failure) was sent")
    }

    /// Whether `text` holds the secret or a control character.
    static func leaks(_ text: String) -> Bool {
        text.contains(secret) || text.unicodeScalars.contains { $0.properties.generalCategory == .control }
    }

    @Test(arguments: Failure.allCases)
    func anErrorNeverRepeatsTheQueryOrAControlCharacter(_ failure: Failure) async throws {
        let env = try await TestServers.shared()
        let handler = CapturingLogHandler()
        let error = try await Self.error(of: failure, env: env, handler: handler)
        // As an application logs a failure.
        let logger = handler.makeLogger()
        logger.error("request failed: \(error)")
        logger.error("request failed: \(error.message) \(error.parameters)")

        #expect(error.kind == failure.kind)
        #expect(!Self.leaks(error.description), "description: \(error.description.debugDescription)")
        #expect(!Self.leaks(error.message), "message: \(error.message.debugDescription)")
        for (name, value) in error.parameters {
            #expect(!Self.leaks(name) && !Self.leaks(value), "parameter \(name): \(value.debugDescription)")
        }
        #expect(!Self.leaks(error.stableHash))
        #expect(!error.message.isEmpty)
        for line in handler.captured {
            #expect(!Self.leaks(line), "logged: \(line.debugDescription)")
        }
    }

    @Test func aRefusedCharacterIsNamedByItsCodePointAndOffset() throws {
        let query = #expect(throws: CourierError(.invalidURL)) {
            try ResourceRequest(path: "/x?\(Self.query)&q=a b").makeHTTPRequest()
        }
        #expect(query?.message == "the query has a space (U+0020) at offset 23, which must be percent-encoded")
        let path = #expect(throws: CourierError(.invalidURL)) {
            try ResourceRequest(path: "https://example.com/caf\u{E9}?\(Self.query)").makeHTTPRequest()
        }
        #expect(
            path?.message == "the path has a non-ASCII character (U+00E9) at offset 23, which must be percent-encoded"
        )
        let header = #expect(throws: CourierError(.invalidHeader)) {
            try ResourceRequest(
                path: "/x",
                headerFields: HTTPFields([
                    HTTPField(name: HTTPField.Name("X-Note")!, lenientValue: Array("a\u{1B}b".utf8))
                ])
            ).makeHTTPRequest()
        }
        #expect(header?.message == "the value of header X-Note has a control character (U+001B) at offset 1")
    }

    @Test func aControlCharacterInAMessageIsWrittenAsItsCodePoint() {
        let error = CourierError(.transportFailure, message: "one\r\nforged line\u{1B}[2J")
        #expect(error.message == "one<U+000D><U+000A>forged line<U+001B>[2J")
        #expect(!Self.leaks(error.description))
    }
}
