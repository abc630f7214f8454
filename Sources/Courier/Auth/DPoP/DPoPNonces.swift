import HTTPTypes
import Synchronization

extension HTTPField.Name {
    /// `DPoP-Nonce` (RFC 9449 §8, §9): a nonce a server wants in the next proof.
    static let dpopNonce = HTTPField.Name("DPoP-Nonce")!
}

/// The latest DPoP nonce each server gave (RFC 9449 §8, §9), by origin: the authorization
/// server's and each resource server's are their own.
///
/// A nonce is taken from every response that carries `DPoP-Nonce` — a `use_dpop_nonce`
/// challenge or a success — and put in the next proof for that origin. One instance serves
/// every client of a ``ResourceAccess``: token requests and resource requests alike.
final class DPoPNonces: Sendable {
    /// The most origins remembered; past it, the table starts afresh (a nonce is only an
    /// optimisation: a server that wants one asks again).
    static let maximumOrigins = 256
    /// The longest nonce kept; a longer one is ignored.
    static let maximumLength = 1024

    private let locked_nonces = Mutex<[Authority.Origin: String]>([:])

    /// Creates an empty table.
    init() {}

    /// The nonce to put in the next proof for `origin`, if the server gave one.
    func nonce(for origin: Authority.Origin?) -> String? {
        guard let origin else { return nil }
        return locked_nonces.withLock { $0[origin] }
    }

    /// Remembers the nonce a response gave, if it gave one.
    ///
    /// - Parameters:
    ///   - fields: The header fields of a response from `origin`.
    ///   - origin: Where the request went.
    /// - Returns: The nonce the response gave, `nil` when it gave none.
    @discardableResult
    func remember(from fields: HTTPFields, origin: Authority.Origin?) -> String? {
        guard let origin, let nonce = fields[.dpopNonce], !nonce.isEmpty, nonce.utf8.count <= Self.maximumLength,
            nonce.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value < 0x7F })
        else { return nil }
        locked_nonces.withLock { nonces in
            if nonces.count >= Self.maximumOrigins, nonces[origin] == nil { nonces.removeAll() }
            nonces[origin] = nonce
        }
        return nonce
    }
}
