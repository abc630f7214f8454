internal import CCurlShim
import HTTPTypes

/// One libcurl easy handle and what the loop knows about the options it carries.
///
/// Handles are reused from transfer to transfer without `curl_easy_reset`: a reset throws
/// away the parsed URL, the formatted request headers and every option, and libcurl spends
/// microseconds per request building them again. Instead the handle remembers the
/// ``CurlTransfer/Profile`` its options were set for; a transfer with the same profile sets
/// only what differs per request (URL, callback data, header list), and any other transfer
/// resets the handle and sets everything.
///
/// Loop thread only, and not `Sendable`: only the loop and the transfer it runs hold one.
final class CurlEasyHandle {
    let pointer: UnsafeMutableRawPointer

    /// libcurl writes the text of a failure here (`CURLOPT_ERRORBUFFER`); owned by the handle
    /// so that an idle handle never points at freed memory.
    let errorBuffer: UnsafeMutablePointer<CChar>

    /// The options the handle carries, or `nil` after a reset or a failed configuration.
    var profile: CurlTransfer.Profile?

    /// Whether the handle may serve another transfer. libcurl 7.88 keeps the state of a request
    /// body's trailer fields in the handle and never resets it, not even in `curl_easy_reset`:
    /// a later transfer would send no trailers, or, after trailers that were refused, read a
    /// freed buffer. A handle that sent trailers is cleaned up instead.
    var isReusable = true
    /// Whether libcurl's informational text goes to the debug callback (`CURLOPT_VERBOSE`; see
    /// ``CurlTransfer/readInformation(_:)``).
    var watchesRefusedStreams = false
    /// `CURLOPT_BUFFERSIZE` as last set (chosen per request, see ``CurlOriginSlots``).
    var receiveBufferSize = CurlOriginSlots.defaultReceiveBufferSize
    /// The origin and path of `CURLOPT_URL` as last set: libcurl copies the URL each time it is
    /// set, so a transfer to the URL of the handle's previous one does not set it again.
    var url: (origin: CurlOriginSlots.Origin, path: String)?

    /// What the transfer running on the handle keeps only while it runs (``CurlTransfer/Running``);
    /// fresh between transfers.
    let running = CurlTransfer.Running()

    /// The request header list the handle points at, and the fields it was made from.
    private var headerList: UnsafeMutablePointer<curl_slist>?
    private var headerKey: HeaderKey?
    /// Whether that list holds credentials (dropped when the transfer ends, see ``transferEnded``).
    private var headersHoldCredentials = false

    /// The exact fields of a header list: names as spelt, in order (`HTTPFields`' own `==`
    /// ignores the case of names and the order between different names).
    private struct HeaderKey: Equatable {
        var fields: HTTPFields
        var hasBody: Bool

        static func == (lhs: HeaderKey, rhs: HeaderKey) -> Bool {
            lhs.hasBody == rhs.hasBody && lhs.fields.count == rhs.fields.count
                && zip(lhs.fields, rhs.fields).allSatisfy { $0.name.rawName == $1.name.rawName && $0.value == $1.value }
        }
    }

    /// `Accept-Encoding` with every coding this libcurl decodes.
    private static let acceptEncodingLine = "Accept-Encoding: " + String(cString: ccurl_accepted_encodings())

    init?() {
        guard let pointer = curl_easy_init() else { return nil }
        self.pointer = pointer
        errorBuffer = .allocate(capacity: Int(CURL_ERROR_SIZE))
        errorBuffer.initialize(to: 0)
    }

    deinit {
        curl_easy_cleanup(pointer)
        if let headerList { curl_slist_free_all(headerList) }
        errorBuffer.deallocate()
    }

    /// The HTTP version of the handle's last response (`CURLINFO_HTTP_VERSION`); `.unknown`
    /// before a response head arrived.
    var httpVersion: Response.Metrics.HTTPVersion {
        var value = 0
        _ = ccurl_easy_getinfo_long(pointer, CURLINFO_HTTP_VERSION, &value)
        return switch value {
        case Int(CURL_HTTP_VERSION_1_0): .http1_0
        case Int(CURL_HTTP_VERSION_1_1): .http1_1
        case Int(CURL_HTTP_VERSION_2_0): .http2
        case Int(CURL_HTTP_VERSION_3): .http3
        default: .unknown
        }
    }

    /// The text libcurl left in the error buffer.
    var errorText: String { String(cString: errorBuffer) }

    /// Called when a transfer on the handle ended.
    ///
    /// - A header list with credentials does not stay in an idle handle (a token must not
    ///   outlive its request in memory, say after logout), and neither does the response head.
    /// (A handle whose transfer was retried or failed is reset before its next use; see
    /// ``CurlTransfer/detach(after:)``.)
    func transferEnded() {
        running.reset()
        if headersHoldCredentials, let list = headerList {
            _ = ccurl_easy_setopt_slist(pointer, CURLOPT_HTTPHEADER, nil)
            curl_slist_free_all(list)
            headerList = nil
            headerKey = nil
            headersHoldCredentials = false
        }
    }

    /// Whether the handle's URL is `origin` followed by `path`.
    func hasURL(_ origin: CurlOriginSlots.Origin, path: String) -> Bool {
        guard let url else { return false }
        return url.path == path && url.origin == origin
    }

    /// Whether a transfer has set options on the handle since it was made.
    private var isUsed = false

    /// Makes the handle ready for a transfer with `profile`: returns `false` when its options
    /// already match, `true` when the transfer must set them all (after a reset, unless the
    /// handle is new).
    func needsOptions(for profile: CurlTransfer.Profile) -> Bool {
        if self.profile == profile { return false }
        if isUsed {
            curl_easy_reset(pointer)  // forgets every option, keeps connections and caches
            headerKey = nil
            url = nil
            watchesRefusedStreams = false
            receiveBufferSize = CurlOriginSlots.defaultReceiveBufferSize
        }
        isUsed = true
        self.profile = nil  // set again once every option was applied
        return true
    }

    /// Points the handle at the header list for `fields`, building it only when the fields
    /// differ from the previous request's.
    func setHeaders(_ fields: HTTPFields, hasBody: Bool) -> CURLcode {
        let key = HeaderKey(fields: fields, hasBody: hasBody)
        if key == headerKey, headerList != nil { return CURLE_OK }
        var list: UnsafeMutablePointer<curl_slist>?
        var hasExpect = false
        var hasContentType = false
        var hasAcceptEncoding = false
        for field in fields {
            // CR, LF and NUL cannot reach here: HTTPFields never stores them, and the session
            // screens every request (SecurityConfiguration.rejectControlCharacters).
            if field.name == .expect { hasExpect = true }
            if field.name == .contentType { hasContentType = true }
            if field.name == .acceptEncoding { hasAcceptEncoding = true }
            // curl sends "Name;" as a header with an empty value.
            let line = field.value.isEmpty ? "\(field.name.rawName);" : "\(field.name.rawName): \(field.value)"
            list = curl_slist_append(list, line)
        }
        if !hasExpect { list = curl_slist_append(list, "Expect:") }
        // The field libcurl would add for `CURLOPT_ACCEPT_ENCODING ""`, in the list that
        // transfers with the same fields share: libcurl formats its own anew for every request.
        // It still decodes what the server encodes, as that option asks.
        if !hasAcceptEncoding { list = curl_slist_append(list, Self.acceptEncodingLine) }
        if !hasContentType && hasBody { list = curl_slist_append(list, "Content-Type:") }
        let code = ccurl_easy_setopt_slist(pointer, CURLOPT_HTTPHEADER, list)
        guard code == CURLE_OK else {
            curl_slist_free_all(list)  // the handle still points at the previous list
            return code
        }
        if let headerList { curl_slist_free_all(headerList) }
        headerList = list
        headerKey = key
        headersHoldCredentials = fields.contains {
            $0.name == .authorization || $0.name == .proxyAuthorization || $0.name == .cookie
        }
        return code
    }
}

@available(*, unavailable)
extension CurlEasyHandle: Sendable {}
