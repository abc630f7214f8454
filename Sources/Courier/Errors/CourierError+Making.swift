/// The errors Courier makes in more than one place, with their messages in one place.
extension CourierError {
    static func invalidURL(_ message: String, file: String = #fileID, line: Int = #line) -> CourierError {
        CourierError(kind: .invalidURL, message: message, file: file, line: line)
    }

    static func invalidHeader(_ message: String, file: String = #fileID, line: Int = #line) -> CourierError {
        CourierError(kind: .invalidHeader, message: message, file: file, line: line)
    }

    static func reservedHeader(_ message: String, file: String = #fileID, line: Int = #line) -> CourierError {
        CourierError(kind: .reservedHeader, message: message, file: file, line: line)
    }

    static func invalidBody(_ message: String, file: String = #fileID, line: Int = #line) -> CourierError {
        CourierError(kind: .invalidBody, message: message, file: file, line: line)
    }

    static func shutDown(_ what: String = "session", file: String = #fileID, line: Int = #line) -> CourierError {
        CourierError(kind: .shutDown, message: "the \(what) was shut down", file: file, line: line)
    }

    static func invalidConfiguration(
        _ message: String,
        host: String? = nil,
        file: String = #fileID,
        line: Int = #line
    ) -> CourierError {
        CourierError(kind: .invalidConfiguration, message: message, host: host, file: file, line: line)
    }

    static func untrustedHost(_ host: String, file: String = #fileID, line: Int = #line) -> CourierError {
        CourierError(
            kind: .untrustedHost,
            message: "\(host) is not in the trust set of this secured transport: add a TrustPolicy with its pins "
                + "or pinned CA bundle; nothing was sent",
            host: host,
            file: file,
            line: line
        )
    }

    static func pinMismatch(host: String, expected: [SPKIPin], pinnedCertificateAuthorities: String?) -> CourierError {
        let pins = expected.map(\.description).joined(separator: ", ")
        let anchors = pinnedCertificateAuthorities.map { " and the pinned CA bundle \($0)" } ?? ""
        return CourierError(
            kind: .pinMismatch,
            message: "no certificate in the verified chain of \(host) matches its pins (expected one of: \(pins))"
                + "\(anchors); the TLS handshake was aborted and nothing was sent",
            host: host,
            expectedPins: expected
        )
    }

    static func crossOriginRedirect(status: Int, toHost host: String) -> CourierError {
        CourierError(
            kind: .crossOriginRedirect,
            message:
                "the server answered \(status) and pointed the request, body included, to another origin (\(host)); "
                + "a secured transport does not send a request body across origins: the redirect was not followed",
            host: host
        )
    }
}
