import Foundation
import HTTPTypes
import MetricsTestKit

@testable import Courier

extension TestMetrics {
    /// The timers named `label`, each with its dimensions as a dictionary.
    func timers(_ label: String) -> [(dimensions: [String: String], values: [Int64])] {
        timers(label: label).map { (Dictionary($0.dimensions, uniquingKeysWith: { $1 }), $0.values) }
    }

    /// The total of the counters named `label` whose dimensions include `dimensions`.
    func total(_ label: String, where dimensions: [String: String] = [:]) -> Int64 {
        counters(label: label)
            .filter { counter in
                let own = Dictionary(counter.dimensions, uniquingKeysWith: { $1 })
                return dimensions.allSatisfy { own[$0.key] == $0.value }
            }
            .reduce(0) { $0 + $1.totalValue }
    }
}

/// The outcome of one request, as a test compares it.
func outcome(of request: () async throws -> Response) async -> String {
    do {
        return "status \(try await request().statusCode)"
    } catch let error as CourierError {
        return "\(error.kind)"
    } catch {
        return "\(type(of: error))"
    }
}
