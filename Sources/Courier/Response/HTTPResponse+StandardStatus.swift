import HTTPTypes

extension HTTPResponse.Status {
    /// The status for a code with its standard reason phrase (RFC 9110), or the name of its
    /// class for a code without one: HTTP/2 sends no phrase, and what an HTTP/1.1 server
    /// sends is free text, so Courier never shows an empty or a server-chosen phrase.
    static func standard(code: Int) -> HTTPResponse.Status {
        switch code {
        case 100: .continue
        case 101: .switchingProtocols
        case 103: .earlyHints
        case 200: .ok
        case 201: .created
        case 202: .accepted
        case 203: .nonAuthoritativeInformation
        case 204: .noContent
        case 205: .resetContent
        case 206: .partialContent
        case 300: .multipleChoices
        case 301: .movedPermanently
        case 302: .found
        case 303: .seeOther
        case 304: .notModified
        case 307: .temporaryRedirect
        case 308: .permanentRedirect
        case 400: .badRequest
        case 401: .unauthorized
        case 403: .forbidden
        case 404: .notFound
        case 405: .methodNotAllowed
        case 406: .notAcceptable
        case 407: .proxyAuthenticationRequired
        case 408: .requestTimeout
        case 409: .conflict
        case 410: .gone
        case 411: .lengthRequired
        case 412: .preconditionFailed
        case 413: .contentTooLarge
        case 414: .uriTooLong
        case 415: .unsupportedMediaType
        case 416: .rangeNotSatisfiable
        case 417: .expectationFailed
        case 421: .misdirectedRequest
        case 422: .unprocessableContent
        case 425: .tooEarly
        case 426: .upgradeRequired
        case 428: .preconditionRequired
        case 429: .tooManyRequests
        case 431: .requestHeaderFieldsTooLarge
        case 451: .unavailableForLegalReasons
        case 500: .internalServerError
        case 501: .notImplemented
        case 502: .badGateway
        case 503: .serviceUnavailable
        case 504: .gatewayTimeout
        case 505: .httpVersionNotSupported
        case 511: .networkAuthenticationRequired
        default: HTTPResponse.Status(code: code, reasonPhrase: className(of: HTTPResponse.Status(code: code).kind))
        }
    }

    /// RFC 9110's name for a class of status codes.
    private static func className(of kind: Kind) -> String {
        switch kind {
        case .informational: "Informational"
        case .successful: "Successful"
        case .redirection: "Redirection"
        case .clientError: "Client Error"
        case .serverError: "Server Error"
        case .invalid: "Unknown"
        }
    }
}
