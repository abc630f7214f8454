extension Session {
    /// Runs `body` with the transport's thread as its preferred task executor, so that the
    /// requests it sends skip a thread hop each way.
    ///
    /// ```swift
    /// let statuses = try await session.withTransportExecutor {
    ///     var statuses: [HTTPResponse.Status] = []
    ///     for path in ["/a", "/b", "/c"] {
    ///         statuses.append(try await session.send(HTTPRequest(method: .get, path: path)).status)
    ///     }
    ///     return statuses
    /// }
    /// ```
    ///
    /// Inside `body`, the calling task and the child tasks it creates run on the thread that
    /// drives libcurl (``CurlTransport/executor``): handing a request over and resuming the
    /// caller cost no wake-up of another thread. With a transport that has no such thread
    /// (any transport but ``CurlTransport``), `body` simply runs.
    ///
    /// - Warning: While code inside `body` runs, **no transfer of the transport makes
    ///   progress**. Keep it to awaiting requests and light work on their results. Blocking
    ///   work — a lock held long, synchronous file or network I/O, heavy computation — stalls
    ///   every request of every session on the transport until it ends. Blocking the thread
    ///   until one of the transport's own requests completes (a semaphore, say) deadlocks the
    ///   transport for good; Courier cannot detect that. Move such work off with
    ///   `withTaskExecutorPreference(nil)` or a detached task.
    ///
    /// Cancellation and errors behave as outside `body`. `body` is `@Sendable` and returns a
    /// `Sendable` value: it runs on the transport's thread, not on the caller's actor.
    ///
    /// - Parameter body: The work to run on the transport's thread.
    /// - Returns: What `body` returns.
    /// - Throws: What `body` throws.
    public nonisolated func withTransportExecutor<Result: Sendable, Failure: Error>(
        _ body: @Sendable () async throws(Failure) -> Result
    ) async throws(Failure) -> Result {
        let executor = (transport as? CurlTransport)?.executor
        return try await withTaskExecutorPreference(executor, operation: body)
    }
}
