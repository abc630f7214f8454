/// Whose stored responses a request may see: the shared partition of requests that carry no
/// credential, or the partition of one credential.
///
/// A lookup in one partition never sees another's entries, so one user's response is never
/// served to another. A partition of a credential holds what a private cache may hold; the
/// shared partition only what a shared cache may hold (RFC 9111 §3.5).
///
/// The credential is kept as given, in memory only and never logged: a user id, `"device"`,
/// or the values of the credential fields a request carries. Keyed by the values themselves,
/// two credentials can never share a partition, as they could through a short digest.
struct CachePartition: Hashable, Sendable {
    /// The credential, or `nil` for the shared partition.
    private let credential: String?

    /// The partition of requests that carry no credential.
    static let shared = CachePartition(nil)

    /// The partition of one credential.
    ///
    /// - Parameter credential: What identifies it: a user id, `"device"`, or the values of the
    ///   credential fields a request carries.
    init(credential: String) {
        self.init(Optional(credential))
    }

    private init(_ credential: String?) {
        self.credential = credential
    }

    /// Whether this is the shared partition.
    var isShared: Bool { credential == nil }
}

extension CachePartition: CustomStringConvertible {
    /// `shared` or `credential`: never the credential itself.
    var description: String { isShared ? "shared" : "credential" }
}
