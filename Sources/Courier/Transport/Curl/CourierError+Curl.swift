internal import CCurlShim

extension CourierError {
    /// Maps a libcurl failure to an error that keeps curl's code and text.
    ///
    /// - Parameters:
    ///   - code: curl's code.
    ///   - detail: curl's error buffer.
    ///   - https: Whether the request was HTTPS.
    ///   - inHead: Whether the failure came before the response head was complete: then
    ///     curl's own head limits explain an out-of-memory or a receive error.
    init(curlCode code: CURLcode, detail: String, https: Bool, inHead: Bool = false) {
        if inHead, let limit = ResponseHeadLimits.curlLimit(code: code, detail: detail) {
            self = limit
            return
        }
        let kind: Kind
        switch code {
        case CURLE_COULDNT_RESOLVE_HOST, CURLE_COULDNT_RESOLVE_PROXY:
            kind = .couldNotResolveHost
        case CURLE_COULDNT_CONNECT:
            kind = .couldNotConnect
        case CURLE_OPERATION_TIMEDOUT:
            // libcurl 7.88 says which limit fired only in its text, and words a connect that
            // ran out of time in two ways: "Connection timed out after" when the multi handle
            // notices, "Connection timeout after" when the connecting filter does first. (The
            // stall timeout is Courier's own: CurlTransfer+Stall.swift.)
            if detail.hasPrefix("Failed to connect") || detail.hasPrefix("Connection timed out")
                || detail.hasPrefix("Connection timeout") || detail.hasPrefix("Resolving timed out")
                || detail.hasPrefix("SSL connection timeout")
            {
                kind = .connectTimedOut
            } else {
                kind = .timedOut
            }
        case CURLE_SSL_CONNECT_ERROR, CURLE_PEER_FAILED_VERIFICATION, CURLE_SSL_CERTPROBLEM, CURLE_SSL_CIPHER,
            CURLE_SSL_CACERT_BADFILE, CURLE_SSL_PINNEDPUBKEYNOTMATCH, CURLE_SSL_INVALIDCERTSTATUS,
            CURLE_SSL_CRL_BADFILE, CURLE_SSL_ISSUER_ERROR, CURLE_SSL_CLIENTCERT, CURLE_SSL_ENGINE_NOTFOUND,
            CURLE_SSL_ENGINE_SETFAILED, CURLE_SSL_ENGINE_INITFAILED, CURLE_SSL_SHUTDOWN_FAILED, CURLE_USE_SSL_FAILED:
            kind = .tlsFailure
        case CURLE_PARTIAL_FILE, CURLE_RECV_ERROR, CURLE_SEND_ERROR, CURLE_GOT_NOTHING, CURLE_HTTP2,
            CURLE_HTTP2_STREAM:
            kind = .connectionClosed
        case CURLE_BAD_CONTENT_ENCODING:
            kind = .undecodableContent
        case CURLE_WEIRD_SERVER_REPLY:
            kind = .malformedResponse
        case CURLE_UNSUPPORTED_PROTOCOL where detail.contains("HTTP/0.9") || detail.contains("response code"):
            // libcurl refuses an answer without a status line as HTTP/0.9, and a status out of
            // range as an unsupported protocol: the server spoke, but not HTTP.
            kind = .malformedResponse
        case CURLE_TOO_MANY_REDIRECTS:
            kind = .tooManyRedirects
        case CURLE_READ_ERROR, CURLE_SEND_FAIL_REWIND, CURLE_ABORTED_BY_CALLBACK:
            kind = .requestBodyFailed
        case CURLE_UNSUPPORTED_PROTOCOL:
            kind = https ? .insecureRedirect : .invalidURL
        case CURLE_URL_MALFORMAT:
            kind = .invalidURL
        default:
            kind = .transportFailure
        }
        let summary = String(cString: curl_easy_strerror(code))
        let message: String
        switch kind {
        case .insecureRedirect:
            message = "refused a redirect from HTTPS to a non-HTTPS URL (\(detail.isEmpty ? summary : detail))"
        case .connectionClosed where code == CURLE_PARTIAL_FILE:
            message = "the connection closed before the whole body arrived: \(detail.isEmpty ? summary : detail)"
        case .malformedResponse:
            message = "the server's answer is not an HTTP response (\(detail.isEmpty ? summary : detail))"
        case .undecodableContent:
            message = "the response body cannot be decoded: \(detail.isEmpty ? summary : detail)"
        default:
            message = detail.isEmpty ? summary : "\(summary): \(detail)"
        }
        self.init(
            kind: kind,
            message: message,
            curlCode: Int(code.rawValue),
            curlDetail: detail.isEmpty ? summary : detail
        )
    }
}
