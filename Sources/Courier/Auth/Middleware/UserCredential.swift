/// The token source of one user-bound request, carried in its ``MiddlewareContext``.
///
/// The sessions of user-bound requests are shared by every user of a ``ResourceAccess``: one
/// session per request kind, whatever the number of users. Each request names its user's
/// broker here, and ``BearerTokenMiddleware`` asks that broker. Holding the ``UserClient``
/// also keeps the user in memory while the request runs, so the user registry never evicts
/// a user with a request in flight.
struct UserCredential: RequestAttribute {
    /// The broker whose token the request carries.
    let broker: TokenBroker
    /// The user the broker belongs to.
    let user: UserClient
    /// The user's identity when the request started: where its cookies and cached responses
    /// are kept; `nil` when users keep neither, so a request then takes no lock for it.
    let identity: UserIdentity?
}

extension MiddlewareContext {
    /// The token of a user-bound request on a session every user shares: which broker the
    /// credential middleware asks, and the user it belongs to, kept in memory while the
    /// request runs. `nil` on sessions whose credential middleware holds its own broker.
    var userCredential: UserCredential? { attributes[UserCredential.self] }
}
