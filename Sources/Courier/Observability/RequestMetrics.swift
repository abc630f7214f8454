import CoreMetrics
import HTTPTypes

/// The request metrics of one session: the duration timer and the request counter of each
/// set of dimensions, made once and kept, and the transport's gauges.
///
/// Each request looks its pair up by a small hashable key under a lock; the dimension
/// array and the metric objects are built only the first time a key is seen.
final class RequestMetrics: Sendable {
    /// `http.client.request.duration`: the time from sending a request to its final response
    /// or failure, every attempt and redirect included, in seconds.
    static let durationLabel = "http.client.request.duration"
    /// `courier.http.client.requests`: requests that ended, with the same dimensions.
    static let requestsLabel = "courier.http.client.requests"
    /// `courier.transport.active_transfers`: transfers holding a connection slot.
    static let activeTransfersLabel = "courier.transport.active_transfers"
    /// `courier.transport.queued_transfers`: transfers waiting for a connection slot.
    static let queuedTransfersLabel = "courier.transport.queued_transfers"
    /// The most dimension sets kept; past it, metric objects are made per request.
    static let maximumCachedKeys = 1024

    /// The dimension values of one request's outcome.
    struct Key: Hashable, Sendable {
        var method: String
        var serverAddress: String
        var serverPort: Int
        var status: Int?
        var errorType: String?
        var protocolVersion: String?

        var dimensions: [(String, String)] {
            var dimensions = [
                ("http.request.method", method),
                ("server.address", serverAddress),
                ("server.port", String(serverPort)),
            ]
            if let status { dimensions.append(("http.response.status_code", String(status))) }
            if let errorType { dimensions.append(("error.type", errorType)) }
            if let protocolVersion { dimensions.append(("network.protocol.version", protocolVersion)) }
            return dimensions
        }
    }

    /// The timer and counter of one key.
    private struct Pair: Sendable {
        let duration: Timer
        let requests: Counter
    }

    private let factory: any MetricsFactory
    private let pairs = LockedBox<[Key: Pair]>([:])
    private let transferGauges: TransferGauges?

    init(factory: any MetricsFactory, transport: any Transport) {
        self.factory = factory
        self.transferGauges = (transport as? CurlTransport).map { TransferGauges(transport: $0, factory: factory) }
    }

    /// Records a request that ended after `nanoseconds`.
    func record(_ key: Key, nanoseconds: Int64) {
        let pair = pair(for: key)
        pair.duration.recordNanoseconds(nanoseconds)
        pair.requests.increment()
        transferGauges?.sample()
    }

    /// Samples the transport's gauges (when a request starts).
    func sampleTransport() {
        transferGauges?.sample()
    }

    private func pair(for key: Key) -> Pair {
        if let pair = pairs.withLock({ $0[key] }) { return pair }
        let dimensions = key.dimensions
        let pair = Pair(
            duration: Timer(
                label: Self.durationLabel,
                dimensions: dimensions,
                preferredDisplayUnit: .seconds,
                factory: factory
            ),
            requests: Counter(label: Self.requestsLabel, dimensions: dimensions, factory: factory)
        )
        return pairs.withLock { pairs in
            if let existing = pairs[key] { return existing }
            if pairs.count < Self.maximumCachedKeys { pairs[key] = pair }
            return pair
        }
    }

    /// The gauges of a ``CurlTransport``, sampled from its counters whenever a request starts
    /// or ends.
    private struct TransferGauges: Sendable {
        let transport: CurlTransport
        let active: Meter
        let queued: Meter

        init(transport: CurlTransport, factory: any MetricsFactory) {
            self.transport = transport
            active = Meter(label: RequestMetrics.activeTransfersLabel, dimensions: [], factory: factory)
            queued = Meter(label: RequestMetrics.queuedTransfersLabel, dimensions: [], factory: factory)
        }

        func sample() {
            let statistics = transport.statistics
            active.set(statistics.activeTransfers)
            queued.set(statistics.queuedTransfers)
        }
    }
}
