extension Session.Configuration {
    /// The chain a session runs: ``middlewares`` with the retry step after the logging
    /// middleware they start with, unless they hold one already, and the cache step before it
    /// when the session has a ``cache``.
    func middlewares(retryBudget: RetryBudget, security: SecurityConfiguration? = nil) -> [any Middleware] {
        middlewares(
            retryBudget: retryBudget,
            metrics: RequestInstruments.metricsFactory(of: self).map(RetryMetrics.init(factory:)),
            security: security
        )
    }

    /// The chain with the retry step reporting to `metrics`, and with a ``cache``, the cache step
    /// right before the retry step (right after the leading logging middleware when the list
    /// holds its own retry step). `security`, the transport's, names the client certificates
    /// the cache partitions responses by.
    func middlewares(
        retryBudget: RetryBudget,
        metrics: RetryMetrics?,
        security: SecurityConfiguration? = nil
    ) -> [any Middleware] {
        let hasRetry = middlewares.contains { $0 is RetryMiddleware }
        guard !hasRetry || cache != nil else { return middlewares }
        var chain = middlewares
        let position = chain.firstIndex { !($0 is LoggingMiddleware) } ?? chain.endIndex
        if !hasRetry {
            chain.insert(RetryMiddleware(policy: retryPolicy, budget: retryBudget, metrics: metrics), at: position)
        }
        if let cache {
            let metrics = RequestInstruments.metricsFactory(of: self).map(CacheMetrics.init(factory:))
            var step = CacheMiddleware(
                cache: cache,
                partitionOfRequest: cachePartitionOfRequest ?? plainCachePartition(security: security),
                metrics: metrics
            )
            // What follows the cache step may add credentials the cache cannot see: the
            // caller's middleware, a cookie jar.
            step.usesSharedPartition =
                cookieJar == nil && cookieJarOfRequest == nil
                && chain[position...].allSatisfy { $0 is RetryMiddleware }
            chain.insert(step, at: position)
        }
        return chain
    }
}
