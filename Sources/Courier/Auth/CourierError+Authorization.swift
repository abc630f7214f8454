/// What an error of the authorization layer says besides the core's details: the level whose
/// token was involved and the authorization server's error response.
extension CourierError {
    /// The authorization server's error response (`error`, `error_description`, `error_uri`).
    public internal(set) var oauthError: OAuth2Error? {
        get { self[attribute: OAuth2Error.self] }
        set { self[attribute: OAuth2Error.self] = newValue }
    }

    /// The authorization level whose token was involved.
    public internal(set) var level: AuthorizationLevel? {
        get { self[attribute: AuthorizationLevel.self] }
        set { self[attribute: AuthorizationLevel.self] = newValue }
    }

    /// Creates an error of the authorization layer: the core's details with the level whose
    /// token was involved and the server's error response.
    init(
        kind: Kind,
        message: String,
        level: AuthorizationLevel?,
        oauthError: OAuth2Error? = nil,
        statusCode: Int? = nil,
        endpoint: String? = nil,
        response: Response? = nil,
        underlying: (any Error & Sendable)? = nil,
        file: String = #fileID,
        line: Int = #line
    ) {
        self.init(
            kind: kind,
            message: message,
            statusCode: statusCode,
            endpoint: endpoint,
            response: response,
            underlying: underlying,
            file: file,
            line: line
        )
        if let level { self.level = level }
        if let oauthError { self.oauthError = oauthError }
    }

    /// Creates an error of the authorization layer that names no level: the core's details with
    /// the server's error response.
    init(
        kind: Kind,
        message: String,
        oauthError: OAuth2Error?,
        statusCode: Int? = nil,
        endpoint: String? = nil,
        response: Response? = nil,
        underlying: (any Error & Sendable)? = nil,
        file: String = #fileID,
        line: Int = #line
    ) {
        self.init(
            kind: kind,
            message: message,
            level: nil,
            oauthError: oauthError,
            statusCode: statusCode,
            endpoint: endpoint,
            response: response,
            underlying: underlying,
            file: file,
            line: line
        )
    }

    /// A copy that records the level, when it has none yet.
    func with(level: AuthorizationLevel) -> CourierError {
        guard self.level == nil else { return self }
        var copy = self
        copy.level = level
        return copy
    }

    /// A token store's failure as Courier reports it: a ``CourierError`` of the store keeps its
    /// kind (``Kind/tokenStoreTampered``, …); any other error of a store of your own becomes
    /// ``Kind/tokenStoreFailed`` with it as ``underlying``.
    static func tokenStore(
        _ error: any Error,
        level: AuthorizationLevel?,
        _ what: @autoclosure () -> String
    ) -> CourierError {
        if let error = error as? CourierError { return level.map { error.with(level: $0) } ?? error }
        return CourierError(kind: .tokenStoreFailed, message: what(), level: level, underlying: error)
    }
}
