import Foundation

#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// What the fault server (`Tests/Servers/faults.py`) has seen, from `/admin/stats`.
struct FaultStats: Sendable, Decodable {
    /// What it saw of the requests with one `key` query parameter.
    struct Key: Sendable, Decodable {
        /// Requests that arrived (each read in full).
        let requests: Int
        /// Requests answered with a status.
        let answered: Int
        /// Requests answered by resetting the connection.
        let dropped: Int
        /// The method of each request, in order.
        let methods: [String]
        /// When each request arrived (seconds since 1970, the server's clock).
        let times: [Double]
        /// When each answer was sent.
        let answerTimes: [Double]
        /// The `Retry-After` dates sent (`retry_after_date`), in seconds since 1970.
        let retryAfterDates: [Double]

        private enum CodingKeys: String, CodingKey {
            case requests, answered, dropped, methods, times
            case answerTimes = "answer_times"
            case retryAfterDates = "retry_after_dates"
        }
    }

    /// Connections accepted since the last reset.
    let connections: Int
    /// Requests since the last reset (admin requests excluded).
    let requests: Int
    /// Requests answered by resetting the connection.
    let dropped: Int
    /// Requests by path.
    let paths: [String: Int]
    /// The key asked for.
    let key: Key?
}

extension TestEnvironment {
    /// `faults` + `path` (which may hold a query).
    func faultURL(_ path: String) -> URL {
        URL(string: faults.absoluteString + path)!
    }

    /// What the fault server saw; `key` selects the per-key entry.
    func faultStats(key: String? = nil) async throws -> FaultStats {
        let query = key.map { "?key=\($0)" } ?? ""
        let (data, _) = try await URLSession.shared.data(from: faultURL("/admin/stats\(query)"))
        return try JSONDecoder().decode(FaultStats.self, from: data)
    }

    /// The per-key entry of `key`.
    func faultStats(forKey key: String) async throws -> FaultStats.Key {
        guard let entry = try await faultStats(key: key).key else {
            throw TestServersError(message: "the fault server has no entry for \(key)")
        }
        return entry
    }

    /// Waits until the fault server has seen `count` requests with `key` (at most 10 s).
    @discardableResult
    func awaitFaultRequests(key: String, count: Int) async throws -> FaultStats.Key {
        let deadline = ContinuousClock.now + .seconds(10)
        while true {
            let entry = try await faultStats(forKey: key)
            if entry.requests >= count { return entry }
            guard ContinuousClock.now < deadline else {
                throw TestServersError(
                    message: "the fault server saw \(entry.requests) of \(count) requests for \(key)"
                )
            }
            try await Task.sleep(for: .milliseconds(10))
        }
    }
}

/// A key of its own for each use of the fault server, so tests never share counters.
func uniqueFaultKey(_ name: String) -> String {
    "\(name)-\(UUID().uuidString.prefix(8))"
}
