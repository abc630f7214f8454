extension ResourceAccess {
    /// The client of one of the many users a service acts for, keyed by the service's own id
    /// for the user.
    ///
    /// It has the methods of ``userClient`` — sign-in, the authenticated, implicit and
    /// exchanged requests, ``UserClient/logout()`` — for that user alone: its tokens are kept
    /// under its key (``TokenStoreKey/user``), it renews them on its own, and its logout
    /// removes its tokens only. The device token of ``deviceClient`` is shared.
    ///
    /// ```swift
    /// let alice = access.userClient(for: "u-123")
    /// try await alice.authenticate(username: "alice", password: "wonderland")
    /// let profile = try await access.userClient(for: "u-123").sendAuthenticatedRequest(
    ///     ResourceRequest(path: "/api/user/profile")
    /// )
    /// ```
    ///
    /// Looking a user up is cheap (a lock and a dictionary probe), so call it per request
    /// rather than keep clients around. Users share the sessions of this instance; a user in
    /// memory costs its token broker and tokens. At most
    /// ``Configuration/maximumUsersInMemory`` users stay in memory: past it, the least
    /// recently used user that is not in use is evicted, and its next lookup reads its tokens
    /// from the ``Configuration/tokenStore`` again — no new sign-in. As long as you hold a
    /// client, or a request or renewal of its user runs, the user is not evicted, so a key
    /// never has two clients at once.
    ///
    /// - Parameter user: The service's key for the user, such as its account id. It becomes
    ///   part of the token store's keys, so keep it stable.
    /// - Returns: The user's client.
    public func userClient(for user: String) -> UserClient {
        users.client(for: user)
    }
}
