#if CommandLine
import Courier
import Foundation

/// The timings of `-w`/`--timing`: an aligned table for people, one JSON object for scripts.
///
/// Each duration is measured from the start of the transfer, as libcurl measures it;
/// `transfer` is the time from the first byte to the end.
struct TimingReport {
    let metrics: Response.Metrics

    init(response: Response) {
        self.metrics = response.metrics ?? Response.Metrics()
    }

    private var transfer: Duration { max(.zero, metrics.total - metrics.timeToFirstByte) }

    /// The table, one `name  value` line per measure.
    var table: String {
        let rows: [(String, String)] = [
            ("dns", Self.milliseconds(metrics.nameLookup)),
            ("connect", Self.milliseconds(metrics.connect)),
            ("tls", Self.milliseconds(metrics.tlsHandshake)),
            ("first byte", Self.milliseconds(metrics.timeToFirstByte)),
            ("transfer", Self.milliseconds(transfer)),
            ("total", Self.milliseconds(metrics.total)),
            ("reused", metrics.isConnectionReused ? "yes" : "no"),
            ("http", metrics.httpVersion.rawValue),
            ("redirects", "\(metrics.redirectCount)"),
        ]
        let nameWidth = rows.map(\.0.count).max() ?? 0
        let valueWidth = rows.map(\.1.count).max() ?? 0
        return rows.map { name, value in
            name.padding(toLength: nameWidth, withPad: " ", startingAt: 0) + "  "
                + String(repeating: " ", count: valueWidth - value.count) + value
        }.joined(separator: "\n") + "\n"
    }

    /// One JSON object: durations in milliseconds, the facts as they are.
    var json: String {
        let object: [String: Any] = [
            "dns_ms": Self.millisecondsValue(metrics.nameLookup),
            "connect_ms": Self.millisecondsValue(metrics.connect),
            "tls_ms": Self.millisecondsValue(metrics.tlsHandshake),
            "first_byte_ms": Self.millisecondsValue(metrics.timeToFirstByte),
            "transfer_ms": Self.millisecondsValue(transfer),
            "total_ms": Self.millisecondsValue(metrics.total),
            "connection_reused": metrics.isConnectionReused,
            "http_version": metrics.httpVersion.rawValue,
            "redirects": metrics.redirectCount,
            "bytes_sent": metrics.bytesSent,
            "bytes_received": metrics.bytesReceived,
        ]
        let data =
            (try? JSONSerialization.data(withJSONObject: object, options: [.sortedKeys, .withoutEscapingSlashes]))
            ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    static func millisecondsValue(_ duration: Duration) -> Double {
        let (seconds, attoseconds) = duration.components
        let milliseconds = Double(seconds) * 1000 + Double(attoseconds) / 1e15
        return (milliseconds * 1000).rounded() / 1000
    }

    static func milliseconds(_ duration: Duration) -> String {
        String(format: "%.1f ms", millisecondsValue(duration))
    }
}
#endif
