import HTTPTypes

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The last final response head of one origin, kept so that a head repeating it line for line
/// costs no parsing and no allocation: its response gets the same `HTTPResponse`, whose status
/// and fields share the memo's storage.
///
/// Servers send nearly the same head with every response of an endpoint (`Server`,
/// `Content-Type`, `Content-Length`, `Last-Modified`, `ETag`); `Date` changes once a second. A
/// transfer compares each line's bytes with the memo's line in the same place. While they match
/// it makes nothing; at the first difference it builds the fields the usual way, starting from
/// the memo's fields before that line, and the head it ends with becomes the new memo.
///
/// Only bytes decide, so the response is the one parsing would give: identical lines parse to
/// identical fields. The memo belongs to its origin (``CurlOriginSlots``): heads of one server
/// are never compared with another's.
///
/// Loop thread only, like the origin's slots; not `Sendable`.
final class ResponseHeadMemo {
    /// What a field line did to the head besides adding its field.
    enum Effect: Equatable {
        /// Nothing more.
        case none
        /// The line is ignored (obsolete folding, no colon, an invalid name): no field.
        case ignored
        /// A `Content-Length` of this many bytes.
        case contentLength(Int64)
        /// A `Transfer-Encoding` whose last coding is, or is not, chunked.
        case transferEncoding(chunked: Bool)
        /// A `Content-Encoding` other than `identity`, or `identity`.
        case contentEncoding(encoded: Bool)
    }

    /// A head's lines as they arrive after the first one that differs from the memo's.
    struct Recording {
        /// The lines, line ends included, status line first.
        var bytes: [UInt8] = []
        /// Where each line ends in ``bytes``.
        var lineEnds: [Int] = []
        /// Each field line's effect (the status line has none).
        var effects: [Effect] = []

        /// Whether the head has outgrown what a memo keeps.
        var isTooLarge: Bool {
            bytes.count > ResponseHeadMemo.largestHead || lineEnds.count > ResponseHeadMemo.mostLines
        }

        mutating func append(_ line: UnsafeRawBufferPointer, effect: Effect?) {
            guard !isTooLarge else { return }
            bytes.append(contentsOf: line)
            lineEnds.append(bytes.count)
            if let effect { effects.append(effect) }
        }
    }

    /// Heads larger than this are not kept.
    static let largestHead = 16 << 10
    /// Heads with more lines than this are not kept.
    static let mostLines = 128

    /// A kept head: its lines and the response head they gave. Immutable, so a transfer that
    /// compares its lines with one is not disturbed when another transfer of the origin (on
    /// another connection, its head split over two reads) keeps a new head meanwhile.
    final class Head {
        /// The head's lines, status line first.
        private let recording: Recording
        /// The response head those lines gave.
        let head: HTTPResponse

        init(recording: Recording, head: HTTPResponse) {
            self.recording = recording
            self.head = head
        }

        /// How many lines the head has, the status line included.
        var lineCount: Int { recording.lineEnds.count }

        /// Whether line `index` (`0`: the status line) has exactly these bytes.
        func matches(_ line: UnsafeRawBufferPointer, at index: Int) -> Bool {
            guard index < recording.lineEnds.count else { return false }
            let start = index == 0 ? 0 : recording.lineEnds[index - 1]
            let end = recording.lineEnds[index]
            guard end - start == line.count else { return false }
            guard let bytes = line.baseAddress, !line.isEmpty else { return true }
            // memcmp: a byte-by-byte iterator costs about half a microsecond per head.
            return recording.bytes.withUnsafeBytes { stored in
                memcmp(stored.baseAddress! + start, bytes, line.count) == 0
            }
        }

        /// The effect of field line `index` (`1` is the first field line).
        func effect(ofLine index: Int) -> Effect { recording.effects[index - 1] }

        /// A recording that starts with the first `lines` lines, for a head that differs
        /// after them.
        func recording(ofFirst lines: Int) -> Recording {
            guard lines > 0 else { return Recording() }
            let end = recording.lineEnds[lines - 1]
            return Recording(
                bytes: Array(recording.bytes[..<end]),
                lineEnds: Array(recording.lineEnds[..<lines]),
                effects: Array(recording.effects[..<(lines - 1)])
            )
        }
    }

    /// The origin's last final head, `nil` before one.
    private(set) var last: Head?

    /// Keeps `recording` and the head it gave as the origin's last head, unless the head is
    /// too large to keep.
    func keep(_ recording: Recording, head: HTTPResponse) {
        guard !recording.isTooLarge, !recording.lineEnds.isEmpty else { return }
        last = Head(recording: recording, head: head)
    }
}

@available(*, unavailable)
extension ResponseHeadMemo: Sendable {}

@available(*, unavailable)
extension ResponseHeadMemo.Head: Sendable {}
