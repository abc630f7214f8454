import CoreMetrics

/// The counter of a session's cache: `courier.http.client.cache.requests`, one per `GET` the
/// cache handled, with the dimension `result`: `hit`, `miss`, `revalidated` or `stale`.
struct CacheMetrics: Sendable {
    /// The counter's label.
    static let label = "courier.http.client.cache.requests"

    private let hits: Counter
    private let misses: Counter
    private let revalidations: Counter
    private let staleServes: Counter

    /// The counters, made by `factory`.
    init(factory: any MetricsFactory) {
        func counter(_ result: String) -> Counter {
            Counter(label: Self.label, dimensions: [("result", result)], factory: factory)
        }
        hits = counter("hit")
        misses = counter("miss")
        revalidations = counter("revalidated")
        staleServes = counter("stale")
    }

    /// Counts a response the cache handed out with `status`; a response from the network is a
    /// miss.
    func record(_ status: Response.CacheStatus) {
        switch status {
        case .network: misses.increment()
        case .hit: hits.increment()
        case .revalidated: revalidations.increment()
        case .stale: staleServes.increment()
        }
    }
}
