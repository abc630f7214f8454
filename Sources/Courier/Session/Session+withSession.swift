extension Session {
    /// Runs `body` with a new session and shuts the session down when `body` returns or throws.
    ///
    /// ```swift
    /// let status = try await Session.withSession(configuration: .init(baseURL: url)) { session in
    ///     try await session.send(HTTPRequest(method: .get, path: "/status")).status
    /// }
    /// ```
    ///
    /// - Parameters:
    ///   - configuration: The session's configuration.
    ///   - transport: The transport, or `nil` for a new ``CurlTransport``.
    ///   - isolation: The caller's actor.
    ///   - body: The work to do with the session.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public static func withSession<Result>(
        configuration: Configuration = Configuration(),
        transport: (any Transport)? = nil,
        isolation: isolated (any Actor)? = #isolation,
        _ body: (Session) async throws -> sending Result
    ) async throws -> sending Result {
        let session = Session(configuration: configuration, transport: transport)
        do {
            let result = try await body(session)
            await session.shutdown()
            return result
        } catch {
            await session.shutdown()
            throw error
        }
    }
}
