extension CourierError {
    /// The kind of a ``CourierError``: an open set that can grow without breaking your code.
    ///
    /// Compare kinds with `==` against the static members (`error.kind == .timedOut`); do not
    /// `switch` over them exhaustively — later versions add kinds.
    public struct Kind: Hashable, Sendable, CustomStringConvertible {
        let code: Code

        private init(_ code: Code) { self.code = code }

        /// The kind's name, such as `timedOut`.
        public var description: String { name }

        /// The kind's name, such as `timedOut`.
        var name: String { code.rawValue }

        /// The group the kind belongs to.
        var domain: Domain { code.domain }

        /// The `reason` of ``CourierError/parameters``: the short names of the status kinds,
        /// the kind's name otherwise (fixed forever, like the hash).
        var reason: String { domain == .status ? code.hashName : code.rawValue }

        /// The name the stable hash uses (fixed forever; see ``CourierError/stableHash``).
        var hashName: String {
            switch domain {
            case .status: code.hashName
            case .authorization: "auth.\(code.rawValue)"
            default: code.rawValue
            }
        }

        /// The URL is missing, relative without a base URL, not HTTP(S), holds CR, LF or NUL, or a
        /// path is not a valid request target.
        public static let invalidURL = Kind(.invalidURL)
        /// A header field value holds a control character (swift-http-types already turns CR,
        /// LF and NUL into spaces; a `Content-Type` string or a lenient value may still carry one).
        public static let invalidHeader = Kind(.invalidHeader)
        /// The caller set a header field Courier owns: User-Agent, Authorization (on a secured
        /// transport), Host, Content-Length, Transfer-Encoding, or Content-Type on a multipart
        /// request.
        public static let reservedHeader = Kind(.reservedHeader)
        /// A parameter cannot be encoded: NaN or infinity, an empty name, or a nested value where
        /// the query-string format allows only scalars.
        public static let invalidParameter = Kind(.invalidParameter)
        /// The method cannot carry a body (GET, HEAD and TRACE; multipart data also not on DELETE
        /// and OPTIONS).
        public static let bodyNotAllowed = Kind(.bodyNotAllowed)
        /// Both a raw body and multipart data were given.
        public static let conflictingBody = Kind(.conflictingBody)
        /// A file to upload does not exist, is not a regular file, or changed size.
        public static let unreadableFile = Kind(.unreadableFile)
        /// An `Encodable` body could not be encoded as JSON or XML.
        public static let encodingFailed = Kind(.encodingFailed)
        /// A request body cannot be read into memory or exceeds the size allowed for it.
        public static let invalidBody = Kind(.invalidBody)
        /// The session, client or transport was shut down.
        public static let shutDown = Kind(.shutDown)
        /// The host name could not be resolved.
        public static let couldNotResolveHost = Kind(.couldNotResolveHost)
        /// No connection could be established.
        public static let couldNotConnect = Kind(.couldNotConnect)
        /// The request's deadline or the session's total timeout passed before the response was
        /// complete.
        public static let timedOut = Kind(.timedOut)
        /// No connection could be established within the connect timeout.
        public static let connectTimedOut = Kind(.connectTimedOut)
        /// No byte arrived or left for as long as the stall timeout allows: the server or the
        /// network stopped moving the transfer.
        public static let stalled = Kind(.stalled)
        /// The TLS handshake or certificate verification failed (a pin mismatch is
        /// ``pinMismatch``).
        public static let tlsFailure = Kind(.tlsFailure)
        /// The connection closed, or the HTTP/2 stream was reset, before the response was complete.
        public static let connectionClosed = Kind(.connectionClosed)
        /// More redirects than allowed.
        public static let tooManyRedirects = Kind(.tooManyRedirects)
        /// A redirect from HTTPS to plain HTTP was refused.
        public static let insecureRedirect = Kind(.insecureRedirect)
        /// The proxy refused to open a tunnel (for example 407, authentication required).
        public static let proxyFailure = Kind(.proxyFailure)
        /// The response body exceeded the buffering limit.
        public static let responseTooLarge = Kind(.responseTooLarge)
        /// A response header line, or the whole header section, exceeded what Courier accepts; the
        /// server sent more than any sane response head.
        public static let responseHeaderTooLarge = Kind(.responseHeaderTooLarge)
        /// The request body could not be read or sent during the transfer, or its trailer fields
        /// were refused (a field that framing, routing or authentication depends on).
        public static let requestBodyFailed = Kind(.requestBodyFailed)
        /// The server's answer is not HTTP: no status line, a malformed one (the version's case
        /// matters: `Http/1.1` is not HTTP), or a status outside 100–999. The request reached the
        /// server; the answer was not used.
        public static let malformedResponse = Kind(.malformedResponse)
        /// The response body's `Content-Encoding` is one Courier cannot decode, or its compressed
        /// bytes are corrupt. The connection was healthy; the request is not retried.
        public static let undecodableContent = Kind(.undecodableContent)
        /// Any other failure below HTTP; see ``CourierError/curlCode`` and
        /// ``CourierError/curlDetail``.
        public static let transportFailure = Kind(.transportFailure)
        /// A 4xx status that ``Response/validate(acceptableStatusCodes:)`` did not accept.
        public static let clientError = Kind(.clientError)
        /// A 5xx status that ``Response/validate(acceptableStatusCodes:)`` did not accept.
        public static let serverError = Kind(.serverError)
        /// Another status outside the accepted range (1xx, 3xx, or a 2xx not accepted).
        public static let unexpectedStatus = Kind(.unexpectedStatus)
        /// The body did not decode as the requested type, or an event stream answered with a body
        /// that is not `text/event-stream`.
        public static let undecodableBody = Kind(.undecodableBody)
        /// The host has no ``TrustPolicy`` in the secured configuration, so no request and no
        /// credential may go to it.
        public static let untrustedHost = Kind(.untrustedHost)
        /// A request on a secured transport, or one that would carry a credential, was not HTTPS.
        public static let insecureScheme = Kind(.insecureScheme)
        /// No certificate of the server's verified chain matched the host's pins; the handshake was
        /// aborted and nothing was sent.
        public static let pinMismatch = Kind(.pinMismatch)
        /// A debugger or tracer is attached to the process and debugger detection is on.
        public static let debuggerAttached = Kind(.debuggerAttached)
        /// libcurl's TLS backend is not the OpenSSL that Courier's verify hook needs, so pins could
        /// not be enforced.
        public static let unsupportedTLSBackend = Kind(.unsupportedTLSBackend)
        /// The configuration is invalid: a malformed pin or host pattern, an unreadable
        /// certificate, a wrong key password, a secured client on an unpinned transport.
        public static let invalidConfiguration = Kind(.invalidConfiguration)
        /// A server answered 307 or 308 to a request with a body and pointed to another origin:
        /// following would send the body there. The redirect was not followed.
        public static let crossOriginRedirect = Kind(.crossOriginRedirect)
        /// There is no user token, or the user's refresh token was rejected (`invalid_grant`) and
        /// the user's tokens were wiped: the user must authenticate again.
        public static let userNotAuthenticated = Kind(.userNotAuthenticated)
        /// The authorization server rejected the client's credentials (`invalid_client`).
        public static let clientAuthenticationFailed = Kind(.clientAuthenticationFailed)
        /// The token endpoint refused a grant with an OAuth error other than `invalid_client` (the
        /// error's `oauthError` holds it) and a status other than 429 and 5xx: wrong password,
        /// invalid code, invalid scope.
        public static let grantRejected = Kind(.grantRejected)
        /// Renewing a token failed for a reason other than a rejected grant: the token endpoint
        /// could not be reached, answered 429 or 5xx (whatever OAuth error its body names, such
        /// as `temporarily_unavailable`, which the error's `oauthError` keeps), or answered
        /// something unreadable.
        public static let tokenRefreshFailed = Kind(.tokenRefreshFailed)
        /// The token endpoint answered 2xx with a body that is not a valid token response.
        public static let invalidTokenResponse = Kind(.invalidTokenResponse)
        /// More renewals than the broker's limit allows in its time window: the resource server
        /// keeps rejecting fresh tokens, so Courier stops instead of looping.
        public static let excessiveRefresh = Kind(.excessiveRefresh)
        /// The authorization step answered with an error (`access_denied`, …).
        public static let authorizationDenied = Kind(.authorizationDenied)
        /// The authorization redirect is unusable: wrong `state` (a possible CSRF), no `code`, or
        /// not the configured redirect URI.
        public static let invalidAuthorizationResponse = Kind(.invalidAuthorizationResponse)
        /// Credentials given for an HTTP authentication challenge were rejected again.
        public static let challengeFailed = Kind(.challengeFailed)
        /// Revoking a token at logout failed; the tokens were wiped locally anyway.
        public static let revocationFailed = Kind(.revocationFailed)
        /// The grant needs something the configuration lacks (a refresh token, a subject token, a
        /// redirect URI, an endpoint).
        public static let missingConfiguration = Kind(.missingConfiguration)
        /// The token store's file was changed: authentication of its encrypted contents failed. A
        /// damaged store is never read as a token.
        public static let tokenStoreTampered = Kind(.tokenStoreTampered)
        /// The token store's file is shorter than its header says: a write was cut off or the file
        /// was cut.
        public static let tokenStoreTruncated = Kind(.tokenStoreTruncated)
        /// The token store's file was written with another key.
        public static let tokenStoreWrongKey = Kind(.tokenStoreWrongKey)
        /// The file is not a Courier token store, or a version this Courier cannot read, or its
        /// contents do not decode.
        public static let tokenStoreUnsupportedFormat = Kind(.tokenStoreUnsupportedFormat)
        /// The token store's key provider failed or returned a key of the wrong size.
        public static let tokenStoreKeyUnavailable = Kind(.tokenStoreKeyUnavailable)
        /// A file operation of the token store failed (see ``CourierError/message`` for the
        /// system's text).
        public static let tokenStoreIOFailure = Kind(.tokenStoreIOFailure)
        /// A token store of your own threw; see ``CourierError/underlying``.
        public static let tokenStoreFailed = Kind(.tokenStoreFailed)
    }

    enum Domain: Sendable {
        case input, network, status, security, authorization, store
    }

    enum Code: String, Sendable, Hashable, CaseIterable {
        case invalidURL
        case invalidHeader
        case reservedHeader
        case invalidParameter
        case bodyNotAllowed
        case conflictingBody
        case unreadableFile
        case encodingFailed
        case invalidBody
        case shutDown
        case couldNotResolveHost
        case couldNotConnect
        case timedOut
        case connectTimedOut
        case stalled
        case tlsFailure
        case connectionClosed
        case tooManyRedirects
        case insecureRedirect
        case proxyFailure
        case responseTooLarge
        case responseHeaderTooLarge
        case requestBodyFailed
        case malformedResponse
        case undecodableContent
        case transportFailure
        case clientError
        case serverError
        case unexpectedStatus
        case undecodableBody
        case untrustedHost
        case insecureScheme
        case pinMismatch
        case debuggerAttached
        case unsupportedTLSBackend
        case invalidConfiguration
        case crossOriginRedirect
        case userNotAuthenticated
        case clientAuthenticationFailed
        case grantRejected
        case tokenRefreshFailed
        case invalidTokenResponse
        case excessiveRefresh
        case authorizationDenied
        case invalidAuthorizationResponse
        case challengeFailed
        case revocationFailed
        case missingConfiguration
        case tokenStoreTampered
        case tokenStoreTruncated
        case tokenStoreWrongKey
        case tokenStoreUnsupportedFormat
        case tokenStoreKeyUnavailable
        case tokenStoreIOFailure
        case tokenStoreFailed

        var domain: Domain {
            switch self {
            case .invalidURL, .invalidHeader, .reservedHeader, .invalidParameter, .bodyNotAllowed, .conflictingBody,
                .unreadableFile, .encodingFailed, .invalidBody, .shutDown:
                .input
            case .couldNotResolveHost, .couldNotConnect, .timedOut, .connectTimedOut, .stalled, .tlsFailure,
                .connectionClosed, .tooManyRedirects,
                .insecureRedirect, .proxyFailure, .responseTooLarge, .responseHeaderTooLarge, .requestBodyFailed,
                .malformedResponse, .undecodableContent, .transportFailure:
                .network
            case .clientError, .serverError, .unexpectedStatus, .undecodableBody: .status
            case .untrustedHost, .insecureScheme, .pinMismatch, .debuggerAttached, .unsupportedTLSBackend,
                .invalidConfiguration, .crossOriginRedirect:
                .security
            case .userNotAuthenticated, .clientAuthenticationFailed, .grantRejected, .tokenRefreshFailed,
                .invalidTokenResponse, .excessiveRefresh, .authorizationDenied, .invalidAuthorizationResponse,
                .challengeFailed, .revocationFailed, .missingConfiguration:
                .authorization
            case .tokenStoreTampered, .tokenStoreTruncated, .tokenStoreWrongKey, .tokenStoreUnsupportedFormat,
                .tokenStoreKeyUnavailable, .tokenStoreIOFailure, .tokenStoreFailed:
                .store
            }
        }

        var hashName: String {
            switch self {
            case .clientError: "client"
            case .serverError: "server"
            case .unexpectedStatus: "unexpected"
            case .undecodableBody: "decoding"
            default: rawValue
            }
        }
    }
}
