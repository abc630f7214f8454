internal import CCurlShim

/// How large a response head Courier accepts: a hostile or broken server cannot make the
/// client buffer an unbounded head, and going past a limit is a clear
/// ``CourierError/Kind/responseHeaderTooLarge``, on HTTP/1.1 and HTTP/2 alike.
///
/// Courier's own limits sit below libcurl's (100 KiB per line; 300 KiB per HTTP/1.1 head and
/// 128 KiB per HTTP/2 head in libcurl 7.88), so the header callback sees them first; when
/// libcurl stops a head before Courier sees it (a line over 100 KiB is never delivered),
/// its failure is mapped to the same kind.
enum ResponseHeadLimits {
    /// The longest response header line, terminator included: 64 KiB.
    static let maximumLineBytes = 64 << 10
    /// The largest response head (status line, fields and the blank line): 96 KiB.
    static let maximumSectionBytes = 96 << 10

    /// The error for a head that went past one of Courier's limits.
    static func exceeded(line: Bool) -> CourierError {
        CourierError(
            kind: .responseHeaderTooLarge,
            message: line
                ? "a response header line is longer than \(maximumLineBytes >> 10) KiB; the response was abandoned"
                : "the response head is larger than \(maximumSectionBytes >> 10) KiB; the response was abandoned"
        )
    }

    /// The error for a head that libcurl refused before Courier saw it, or `nil` when the
    /// failure is something else.
    static func curlLimit(code: CURLcode, detail: String) -> CourierError? {
        let reason: String
        switch code {
        case CURLE_OUT_OF_MEMORY where detail.isEmpty:
            // libcurl reports a header line over its 100 KiB buffer as out of memory, with no text.
            reason = "a response header line is longer than libcurl's 100 KiB limit"
        case CURLE_RECV_ERROR where detail.hasPrefix("Too large response headers"):
            reason = "the response head is larger than libcurl's limit"
        case CURLE_RECV_ERROR where detail.contains("nghttp2_session_mem_recv() returned -902"):
            // HTTP/2: libcurl gives up on a header block over 128 KiB inside nghttp2's callback.
            reason = "the HTTP/2 response head is larger than libcurl's 128 KiB limit"
        default:
            return nil
        }
        let summary = String(cString: curl_easy_strerror(code))
        return CourierError(
            kind: .responseHeaderTooLarge,
            message: "\(reason); the response was abandoned",
            curlCode: Int(code.rawValue),
            curlDetail: detail.isEmpty ? summary : detail
        )
    }
}
