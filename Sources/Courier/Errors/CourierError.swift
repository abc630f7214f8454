public import HTTPTypes

/// The one error Courier throws: what went wrong, where, and everything a caller needs to act.
///
/// Every public API of Courier throws `CourierError` (or `CancellationError` when the calling
/// task was cancelled). Match on ``kind`` — two errors are equal when their kinds are; the
/// other properties say where and why, and are filled in when they apply:
///
/// ```swift
/// do {
///     let items = try await session.send(ResourceRequest(path: "/api/items"))
/// } catch let error as CourierError where error.kind == .untrustedHost {
///     report(host: error.host)
/// } catch let error as CourierError where error.kind == .timedOut {
///     retryLater()
/// }
/// ```
///
/// ### Groups of kinds
///
/// - Bad input, refused before anything was sent: ``Kind/invalidURL``,
///   ``Kind/invalidHeader``, ``Kind/reservedHeader``, ``Kind/invalidParameter``,
///   ``Kind/bodyNotAllowed``, ``Kind/conflictingBody``, ``Kind/unreadableFile``,
///   ``Kind/encodingFailed``, ``Kind/invalidBody``, ``Kind/shutDown``.
/// - The network: ``Kind/couldNotResolveHost``, ``Kind/couldNotConnect``, ``Kind/timedOut``,
///   ``Kind/connectTimedOut``, ``Kind/stalled``, ``Kind/tlsFailure``, ``Kind/connectionClosed``, ``Kind/tooManyRedirects``,
///   ``Kind/insecureRedirect``, ``Kind/proxyFailure``, ``Kind/responseTooLarge``,
///   ``Kind/responseHeaderTooLarge``, ``Kind/requestBodyFailed``, ``Kind/malformedResponse``,
///   ``Kind/undecodableContent``, ``Kind/transportFailure``.
/// - A status or body the caller did not accept (only from ``Response/validate(acceptableStatusCodes:)``,
///   ``Response/decode(_:decoder:)`` and an event stream's answer, ``ServerSentEvents``): ``Kind/clientError``, ``Kind/serverError``,
///   ``Kind/unexpectedStatus``, ``Kind/undecodableBody``.
/// - Security, refused on purpose and never worth retrying: ``Kind/untrustedHost``,
///   ``Kind/insecureScheme``, ``Kind/pinMismatch``, ``Kind/debuggerAttached``,
///   ``Kind/unsupportedTLSBackend``, ``Kind/invalidConfiguration``,
///   ``Kind/crossOriginRedirect``.
/// - Authorization: ``Kind/userNotAuthenticated``, ``Kind/clientAuthenticationFailed``,
///   ``Kind/grantRejected``, ``Kind/tokenRefreshFailed``, ``Kind/invalidTokenResponse``,
///   ``Kind/excessiveRefresh``, ``Kind/authorizationDenied``,
///   ``Kind/invalidAuthorizationResponse``, ``Kind/challengeFailed``,
///   ``Kind/revocationFailed``, ``Kind/missingConfiguration``.
/// - Token storage: ``Kind/tokenStoreTampered``, ``Kind/tokenStoreTruncated``,
///   ``Kind/tokenStoreWrongKey``, ``Kind/tokenStoreUnsupportedFormat``,
///   ``Kind/tokenStoreKeyUnavailable``, ``Kind/tokenStoreIOFailure``,
///   ``Kind/tokenStoreFailed``.
///
/// ### The stable hash
///
/// ``stableHash`` is FNV-1a 64 over the UTF-8 bytes of `"<name>|<code>|<endpoint>"`, written
/// as 16 lower-case hex digits. The name is `client`, `server`, `unexpected` or `decoding`
/// for the status and body kinds, `auth.<kind>` for the authorization kinds and the kind's
/// name otherwise; the code is the status code, else the curl code, else `0`; the endpoint is
/// `METHOD /path` without the query, or `-`. The same error gives the same hash in every
/// process and every version of Courier (`"client|404|GET /api/users/42"` hashes to the same
/// value forever), so dashboards can group by it. A path with identifiers (`/users/42`) hashes
/// per identifier: use a template path for grouping.
///
/// No property Courier fills in holds a token, a secret, a password or a query string, and
/// ``message``, ``description`` and ``parameters`` never hold a control character: one that
/// came from a caller or a server is written as its code point (`<U+000A>`), so a line
/// logged from an error stays one line. ``response`` is the server's response as it came —
/// its fields may include `Set-Cookie` — so log its status, not its fields or body.
public struct CourierError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The kind of failure: compare it with `==` against the static members.
    public let kind: Kind
    /// What went wrong and, where it helps, what to do about it, for people.
    public var message: String { details.value.message }
    /// The request's method and path without the query (`GET /api/users/42`), when a request
    /// was involved: the resource request, or the token, revocation or challenge exchange
    /// that failed.
    public internal(set) var endpoint: String? {
        get { details.value.endpoint }
        set { update { $0.endpoint = newValue } }
    }
    /// The HTTP status of the exchange that failed, when a response arrived.
    public internal(set) var status: HTTPResponse.Status? {
        get { details.value.status }
        set { update { $0.status = newValue } }
    }
    /// The response, when one arrived: its header fields and its body (a problem-details
    /// document, say).
    public internal(set) var response: Response? {
        get { details.value.response }
        set { update { $0.response = newValue } }
    }
    /// libcurl's `CURLcode`, when libcurl reported the failure.
    public internal(set) var curlCode: Int? {
        get { details.value.curlCode }
        set { update { $0.curlCode = newValue } }
    }
    /// libcurl's own text for the failure, kept as detail.
    public internal(set) var curlDetail: String? {
        get { details.value.curlDetail }
        set { update { $0.curlDetail = newValue } }
    }
    /// The host concerned, for security and network failures.
    public internal(set) var host: String? {
        get { details.value.host }
        set { update { $0.host = newValue } }
    }
    /// The pins the host had to match (for ``Kind/pinMismatch``).
    public internal(set) var expectedPins: [SPKIPin] {
        get { details.value.expectedPins }
        set { update { $0.expectedPins = newValue } }
    }
    /// The file concerned (a token store's file).
    public internal(set) var filePath: String? {
        get { details.value.filePath }
        set { update { $0.filePath = newValue } }
    }
    /// The error underneath, when there was one: another `CourierError`, or an error thrown
    /// by code of yours (a token store, a grant strategy, a middleware).
    public internal(set) var underlying: (any Error & Sendable)? {
        get { details.value.underlying }
        set { update { $0.underlying = newValue } }
    }
    /// How many times the request was sent before it failed: 1 unless it was retried.
    public internal(set) var attempts: Int {
        get { details.value.attempts }
        set { update { $0.attempts = newValue } }
    }
    /// Whether any part of a response (a status line, a header) arrived before the failure.
    var receivedResponse: Bool {
        get { details.value.receivedResponse }
        set { update { $0.receivedResponse = newValue } }
    }
    /// Where the error was made (`#fileID`).
    public var file: String { details.value.file }
    /// Where the error was made (`#line`).
    public var line: Int { details.value.line }

    /// Everything but the kind, in one shared box: an error is two words wherever it is kept
    /// (a transfer holds two optional errors while it runs, ten thousand transfers at once).
    private var details: Box

    private final class Box: Sendable {
        let value: Details
        init(_ value: Details) { self.value = value }
    }

    private struct Details: Sendable {
        var message: String
        var endpoint: String?
        var status: HTTPResponse.Status?
        var response: Response?
        var curlCode: Int?
        var curlDetail: String?
        var host: String?
        var expectedPins: [SPKIPin]
        /// What the layers above the core recorded, in ``ErrorAttribute/order``.
        var attributes: [any ErrorAttribute] = []
        var filePath: String?
        var underlying: (any Error & Sendable)?
        var attempts = 1
        var receivedResponse = false
        var file: String
        var line: Int
    }

    private mutating func update(_ change: (inout Details) -> Void) {
        var value = details.value
        change(&value)
        details = Box(value)
    }

    /// Creates an error; for middleware, transports and token stores of your own, and as the
    /// expected error of a test (`#expect(throws: CourierError(.timedOut))`: errors are equal
    /// when their kinds are).
    ///
    /// - Parameters:
    ///   - kind: The kind of failure.
    ///   - message: What went wrong, for people; never a secret. Empty by default. A control
    ///     character in it is written as its code point (`<U+000A>`).
    ///   - underlying: The error underneath.
    ///   - file: Where the error was made.
    ///   - line: Where the error was made.
    public init(
        _ kind: Kind,
        message: String = "",
        underlying: (any Error & Sendable)? = nil,
        file: String = #fileID,
        line: Int = #line
    ) {
        self.init(kind: kind, message: message, underlying: underlying, file: file, line: line)
    }

    init(
        kind: Kind,
        message: String,
        host: String? = nil,
        expectedPins: [SPKIPin] = [],
        curlCode: Int? = nil,
        curlDetail: String? = nil,
        statusCode: Int? = nil,
        endpoint: String? = nil,
        response: Response? = nil,
        underlying: (any Error & Sendable)? = nil,
        path: String? = nil,
        file: String = #fileID,
        line: Int = #line
    ) {
        self.kind = kind
        self.details = Box(
            Details(
                message: ErrorText.sanitized(message, limit: nil),
                endpoint: endpoint,
                status: statusCode.map { HTTPResponse.Status.standard(code: $0) },
                response: response,
                curlCode: curlCode,
                curlDetail: curlDetail,
                host: host,
                expectedPins: expectedPins,
                filePath: path,
                underlying: underlying,
                file: file,
                line: line
            )
        )
    }

    /// The status code, when a response arrived.
    public var statusCode: Int? { status?.code }

    /// Errors are equal when their kinds are, whatever their messages and details.
    public static func == (lhs: CourierError, rhs: CourierError) -> Bool { lhs.kind == rhs.kind }

    /// Hashes the kind.
    public func hash(into hasher: inout Hasher) { hasher.combine(kind) }

    /// The analytics hash of kind, code and endpoint: 16 hex digits, stable across processes
    /// and versions (see "The stable hash").
    public var stableHash: String {
        StableHash.hex("\(kind.hashName)|\(statusCode ?? curlCode ?? 0)|\(endpoint ?? "-")")
    }

    /// The error as flat strings for logging and analytics: `reason` (`client`, `server`,
    /// `unexpected` or `decoding` for the status kinds, the kind's name otherwise), `hash`, and when known
    /// `code`, `endpoint`, `request_kind`, `level`, `oauth_error`, `curl_code`, `host`.
    /// Never holds a token, a secret, a query, an `error_description` or a control character.
    public var parameters: [String: String] {
        var parameters = ["reason": kind.reason, "hash": stableHash]
        if let statusCode { parameters["code"] = String(statusCode) }
        if let endpoint { parameters["endpoint"] = endpoint }
        for attribute in details.value.attributes {
            parameters[type(of: attribute).parameterName] = attribute.parameterValue
        }
        if let curlCode { parameters["curl_code"] = String(curlCode) }
        if let host { parameters["host"] = host }
        return parameters.mapValues { ErrorText.sanitized($0, limit: nil) }
    }

    /// The kind, the context and the message: `CourierError.timedOut (GET /items): …`.
    public var description: String {
        var text = "CourierError.\(kind.name)"
        var context: [String] = []
        var notes = ""
        for attribute in details.value.attributes {
            switch attribute.descriptionText {
            case .context(let text): context.append(text)
            case .note(let text): notes += " [\(text)]"
            }
        }
        if let endpoint { context.append(endpoint) }
        if let status { context.append("status \(status.code)") }
        if let curlCode { context.append("curl code \(curlCode)") }
        if !context.isEmpty { text += " (\(context.joined(separator: ", ")))" }
        if !message.isEmpty { text += ": \(message)" }
        text += notes
        if let underlying { text += " — \(underlying)" }
        // The server's error description and an underlying error of any kind may hold control
        // characters.
        return ErrorText.sanitized(text, limit: nil)
    }
}

extension CourierError {
    /// The value of the given type that a layer above the core recorded, or `nil`; setting
    /// `nil` removes it.
    subscript<Value: ErrorAttribute>(attribute _: Value.Type) -> Value? {
        get {
            for attribute in details.value.attributes {
                if let value = attribute as? Value { return value }
            }
            return nil
        }
        set {
            update { details in
                details.attributes.removeAll { $0 is Value }
                guard let newValue else { return }
                let position = details.attributes.firstIndex { type(of: $0).order > Value.order }
                details.attributes.insert(newValue, at: position ?? details.attributes.endIndex)
            }
        }
    }

    /// A copy that records `attribute` as the attribute's type does (``ErrorAttribute/record(on:)``).
    func recording(_ attribute: any ErrorAttribute) -> CourierError {
        var copy = self
        attribute.record(on: &copy)
        return copy
    }

    /// A copy that records the endpoint, when it has none yet.
    func with(endpoint: String) -> CourierError {
        guard self.endpoint == nil else { return self }
        var copy = self
        copy.endpoint = endpoint
        return copy
    }

    /// Whether the error is one of the security kinds.
    var isSecurityFailure: Bool { kind.domain == .security }
}
