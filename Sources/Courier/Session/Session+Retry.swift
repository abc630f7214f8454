extension Session.Configuration {
    /// The chain a session runs: ``middlewares`` with the retry step after the logging
    /// middleware they start with, unless they hold one already.
    func middlewares(retryBudget: RetryBudget) -> [any Middleware] {
        middlewares(
            retryBudget: retryBudget,
            metrics: RequestInstruments.metricsFactory(of: self).map(RetryMetrics.init(factory:))
        )
    }

    /// The chain with the retry step reporting to `metrics`.
    func middlewares(retryBudget: RetryBudget, metrics: RetryMetrics?) -> [any Middleware] {
        guard !middlewares.contains(where: { $0 is RetryMiddleware }) else { return middlewares }
        var chain = middlewares
        let position = chain.firstIndex { !($0 is LoggingMiddleware) } ?? chain.endIndex
        chain.insert(RetryMiddleware(policy: retryPolicy, budget: retryBudget, metrics: metrics), at: position)
        return chain
    }
}
