#if CommandLine
import ArgumentParser
import Courier
import Foundation

/// How `courier events` prints an event: one line each, whatever the event holds.
enum EventFormat: String, CaseIterable, ExpressibleByArgument {
    /// `TYPE<TAB>DATA`, with backslash, tab, CR and LF escaped as `\\`, `\t`, `\r`, `\n`.
    case text
    /// One JSON object, keys sorted: `data`, `id`, `retry_ms`, `type`; `null` for what is absent.
    case json

    /// The line for `event`, with its line feed.
    func line(for event: ServerSentEvent) -> String {
        switch self {
        case .text: Self.escaped(event.type) + "\t" + Self.escaped(event.data) + "\n"
        case .json: Self.json(event) + "\n"
        }
    }

    /// `text` with the characters that would split a line or a field escaped, reversibly.
    static func escaped(_ text: String) -> String {
        guard text.contains(where: { $0 == "\\" || $0 == "\t" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }) else {
            return text
        }
        var escaped = ""
        escaped.reserveCapacity(text.utf8.count + 8)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\\": escaped += "\\\\"
            case "\t": escaped += "\\t"
            case "\r": escaped += "\\r"
            case "\n": escaped += "\\n"
            default: escaped.unicodeScalars.append(scalar)
            }
        }
        return escaped
    }

    /// The event as one JSON object with sorted keys.
    static func json(_ event: ServerSentEvent) -> String {
        let line = JSONLine(
            data: event.data,
            id: event.id,
            retryMilliseconds: event.retry.map(milliseconds),
            type: event.type
        )
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // Strings and integers always encode.
        let data = (try? encoder.encode(line)) ?? Data("{}".utf8)
        return String(decoding: data, as: UTF8.self)
    }

    /// A duration in whole milliseconds.
    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// The JSON object of one event; absent values are written as `null`.
    private struct JSONLine: Encodable {
        let data: String
        let id: String?
        let retryMilliseconds: Int64?
        let type: String

        enum CodingKeys: String, CodingKey {
            case data, id, type
            case retryMilliseconds = "retry_ms"
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(data, forKey: .data)
            try container.encode(id, forKey: .id)
            try container.encode(retryMilliseconds, forKey: .retryMilliseconds)
            try container.encode(type, forKey: .type)
        }
    }
}
#endif
