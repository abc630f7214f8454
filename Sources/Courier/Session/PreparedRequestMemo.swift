import HTTPTypes

/// The last request a session prepared, and what it became.
///
/// Services send the same request again and again: a poll, a health check, one endpoint of an
/// API. Preparing a request (resolving it against the base URL, adding the default fields and
/// the User-Agent, screening it) copies its pseudo-header storage and its field list, and every
/// request in flight keeps both copies until it ends. A request equal to the last one, field by
/// field and byte for byte, gets the last one's prepared request instead: the same storage,
/// shared, and no work.
///
/// A snapshot of the session owns one, so a reconfiguration starts it empty. Only a successful
/// preparation is remembered; one that throws is checked again each time. A request that carries
/// a credential (`Authorization`, `Proxy-Authorization`, `Cookie`) is never remembered: a
/// credential does not outlive its request in memory.
final class PreparedRequestMemo: Sendable {
    private struct Entry {
        let request: HTTPRequest
        let prepared: HTTPRequest
    }

    private let last = LockedBox<Entry?>(nil)

    /// What `request` became when it was last prepared, if it was the last request prepared.
    @inline(__always)
    func prepared(for request: HTTPRequest) -> HTTPRequest? {
        last.withLock { last in
            guard let last, Self.isSame(request, last.request) else { return nil }
            return last.prepared
        }
    }

    /// Remembers that `request` was prepared as `prepared`, unless it carries a credential.
    func remember(_ prepared: HTTPRequest, for request: HTTPRequest) {
        guard !prepared.headerFields.contains(where: { Self.credentialFields.contains($0.name) }) else { return }
        let entry = Entry(request: request, prepared: prepared)
        last.withLock { $0 = entry }
    }

    private static let credentialFields: [HTTPField.Name] = [.authorization, .proxyAuthorization, .cookie]

    /// Whether two requests are the same to the byte: the same pseudo-header fields, and the
    /// same fields in the same order with the same spelling of each name. (`HTTPRequest`'s own
    /// equality ignores the case of names and the order of fields with different names, which
    /// an HTTP/1.1 request sends as they are.)
    static func isSame(_ request: HTTPRequest, _ other: HTTPRequest) -> Bool {
        guard request.pseudoHeaderFields == other.pseudoHeaderFields,
            request.headerFields.count == other.headerFields.count
        else { return false }
        for (field, otherField) in zip(request.headerFields, other.headerFields) {
            guard field == otherField, field.name.rawName == otherField.name.rawName else { return false }
        }
        return true
    }
}
