import CoreMetrics

/// The counters of a session's retry step.
struct RetryMetrics: Sendable {
    /// `courier.http.client.retries`: requests sent again after a failed attempt.
    static let retriesLabel = "courier.http.client.retries"
    /// `courier.http.client.retry_budget_exhausted`: retries the policy wanted and the
    /// session's retry budget refused.
    static let budgetExhaustedLabel = "courier.http.client.retry_budget_exhausted"

    let retries: Counter
    let budgetExhausted: Counter

    /// Counts a retry.
    func recordRetry() { retries.increment() }

    /// Counts a retry the budget refused.
    func recordBudgetExhausted() { budgetExhausted.increment() }

    init(factory: any MetricsFactory) {
        retries = Counter(label: Self.retriesLabel, dimensions: [], factory: factory)
        budgetExhausted = Counter(label: Self.budgetExhaustedLabel, dimensions: [], factory: factory)
    }
}
