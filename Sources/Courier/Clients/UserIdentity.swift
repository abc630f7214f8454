import Synchronization

/// What one sign-in of a user obtained besides its tokens: its cookies and its cached
/// responses.
///
/// A user's requests take the identity that is current when they start and keep it: a sign-in
/// that replaces the user, or a logout, starts a new identity first, so a request still in
/// flight from before stores what it receives with the old one, where no later request looks.
/// Every identity has a cache partition no other identity ever gets — not another user, not
/// an earlier or later sign-in of the same user, not the same user made again after it was
/// evicted from memory.
final class UserIdentity: Sendable {
    /// The identity's cookies, when users keep cookies.
    let cookieJar: CookieJar?
    /// The identity's partition of the cache.
    let cachePartition: CachePartition

    /// The source of partition names: never the same twice in a process.
    private static let nextNumber = Atomic<UInt64>(0)

    /// A number no other partition name of the process has.
    static func uniqueNumber() -> UInt64 {
        nextNumber.wrappingAdd(1, ordering: .relaxed).newValue
    }

    /// A new identity, with an empty jar when `keepsCookies`.
    init(keepsCookies: Bool) {
        cookieJar = keepsCookies ? CookieJar() : nil
        cachePartition = CachePartition(credential: "user identity \(Self.uniqueNumber())")
    }

    /// Lets go of what the identity obtained: its cookies, and its responses in `cache`.
    func forget(in cache: HTTPCache?) {
        cookieJar?.removeAll()
        cache?.removeAll(in: cachePartition)
    }
}
