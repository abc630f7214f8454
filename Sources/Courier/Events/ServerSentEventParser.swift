import Foundation

/// Turns the bytes of a `text/event-stream` body into events, chunk by chunk, as the HTML
/// standard's event-stream interpretation does.
///
/// Lines end with CR, LF or CRLF, anywhere across chunk boundaries (a CR at the end of one chunk
/// and an LF at the start of the next are one line end). A byte-order mark at the very start is
/// dropped. A line that starts with a colon is a comment; a line without a colon is a field with
/// an empty value; one space after the colon is not part of the value. `data` lines join with a
/// line feed; `id` sets the last event ID unless its value holds a NUL; `retry` sets the
/// reconnection time when its value is all ASCII digits; other fields are ignored. A blank line
/// dispatches the block: nothing when it had no `data`, else an event. Bytes after the last
/// blank line are an unterminated event, which the end of the stream discards.
///
/// An `id` takes effect when its block ends (a blank line), so an event cut off by a dropped
/// connection never moves the last event ID a reconnection sends.
///
/// The parser never holds more than `maximumEventBytes` of one event — its data and type so far
/// plus the line being read, field name included: past that it throws
/// ``CourierError/Kind/responseTooLarge``.
struct ServerSentEventParser {
    /// What one call of ``parse(_:into:)`` saw besides the events it dispatched.
    struct Activity {
        /// Whether a blank line ended a block or a comment arrived: the stream is alive.
        var sawBoundaryOrComment = false
    }

    /// The most bytes one event may hold while it is being read.
    let maximumEventBytes: Int
    /// The last event ID, as the last complete block left it; carried over to the next connection.
    private(set) var lastEventID: [UInt8]
    /// The ID the block being read set, which becomes ``lastEventID`` when the block ends.
    private var pendingEventID: [UInt8]
    /// The reconnection time the stream asked for last, if it did.
    private(set) var reconnectionTime: Duration?

    /// The bytes of a line whose end has not arrived yet.
    private var pendingLine: [UInt8] = []
    /// The `data` lines of the block so far, each followed by a line feed.
    private var data: [UInt8] = []
    /// The block's `event` field, if it had one.
    private var eventType: [UInt8]?
    /// The `retry` of the block so far, reported with its event.
    private var blockRetry: Duration?
    /// Whether the previous chunk ended with a CR, so that an LF starting this one is part of it.
    private var skipLineFeed = false
    /// The first bytes of the stream, held until it is clear whether they are a byte-order mark.
    private var start: [UInt8]? = []

    /// A parser for one connection.
    ///
    /// - Parameters:
    ///   - maximumEventBytes: The most bytes one event may hold while it is read.
    ///   - lastEventID: The last event ID an earlier connection of the stream ended with.
    ///   - reconnectionTime: The reconnection time an earlier connection asked for.
    init(maximumEventBytes: Int, lastEventID: [UInt8] = [], reconnectionTime: Duration? = nil) {
        self.maximumEventBytes = max(1, maximumEventBytes)
        self.lastEventID = lastEventID
        self.pendingEventID = lastEventID
        self.reconnectionTime = reconnectionTime
    }

    /// Parses the next chunk of the body, appending the events it completes to `events`.
    ///
    /// - Throws: ``CourierError/Kind/responseTooLarge`` when an event grows past the maximum.
    mutating func parse(_ chunk: Data, into events: inout [ServerSentEvent]) throws -> Activity {
        var activity = Activity()
        if start != nil {
            guard let rest = takeStart(chunk) else { return activity }
            try rest.withUnsafeBytes { try parseLines($0, into: &events, activity: &activity) }
            return activity
        }
        try chunk.withUnsafeBytes { try parseLines($0, into: &events, activity: &activity) }
        return activity
    }

    /// The bytes of `chunk` that follow a leading byte-order mark, once the stream's first three
    /// bytes are known; `nil` while they may still be one.
    private mutating func takeStart(_ chunk: Data) -> [UInt8]? {
        let byteOrderMark: [UInt8] = [0xEF, 0xBB, 0xBF]
        var bytes = start ?? []
        bytes.append(contentsOf: chunk)
        if bytes.count < byteOrderMark.count, byteOrderMark.starts(with: bytes) {
            start = bytes
            return nil
        }
        start = nil
        return bytes.starts(with: byteOrderMark) ? Array(bytes.dropFirst(byteOrderMark.count)) : bytes
    }

    /// Splits `buffer` into lines and interprets each complete one; an incomplete last line is
    /// kept for the next chunk.
    private mutating func parseLines(
        _ buffer: UnsafeRawBufferPointer,
        into events: inout [ServerSentEvent],
        activity: inout Activity
    ) throws {
        guard let base = buffer.baseAddress, buffer.count > 0 else { return }
        let count = buffer.count
        var index = 0
        if skipLineFeed {
            skipLineFeed = false
            if buffer[0] == 0x0A { index = 1 }
        }
        // The next LF at or after `index`, found once per LF rather than once per line, so that a
        // stream whose lines end with CR alone is still read in one pass.
        var lineFeed = Self.find(0x0A, in: base, from: index, to: count)
        while index < count {
            if let found = lineFeed, found < index { lineFeed = Self.find(0x0A, in: base, from: index, to: count) }
            let searchEnd = lineFeed ?? count
            guard let end = Self.find(0x0D, in: base, from: index, to: searchEnd) ?? lineFeed else {
                guard held + pendingLine.count + count - index <= maximumEventBytes else { throw tooLarge() }
                pendingLine.append(contentsOf: UnsafeRawBufferPointer(rebasing: buffer[index..<count]))
                return
            }
            let line = UnsafeRawBufferPointer(rebasing: buffer[index..<end])
            if pendingLine.isEmpty {
                guard held + line.count <= maximumEventBytes else { throw tooLarge() }
                try interpret(line, into: &events, activity: &activity)
            } else {
                guard held + pendingLine.count + line.count <= maximumEventBytes else { throw tooLarge() }
                pendingLine.append(contentsOf: line)
                let whole = pendingLine
                pendingLine.removeAll(keepingCapacity: true)
                try whole.withUnsafeBytes { try interpret($0, into: &events, activity: &activity) }
            }
            if buffer[end] == 0x0D {
                if end + 1 < count {
                    index = buffer[end + 1] == 0x0A ? end + 2 : end + 1
                } else {
                    skipLineFeed = true
                    index = end + 1
                }
            } else {
                index = end + 1
            }
        }
    }

    /// The bytes the block being read holds: its data and its type.
    private var held: Int { data.count + (eventType?.count ?? 0) }

    /// The index of the first `byte` in `base[from..<to]`, or `nil`.
    private static func find(_ byte: UInt8, in base: UnsafeRawPointer, from: Int, to: Int) -> Int? {
        guard from < to else { return nil }
        return memchr(base + from, Int32(byte), to - from).map { UnsafeRawPointer($0) - base }
    }

    /// Interprets one complete line.
    private mutating func interpret(
        _ line: UnsafeRawBufferPointer,
        into events: inout [ServerSentEvent],
        activity: inout Activity
    ) throws {
        guard let first = line.first else {
            activity.sawBoundaryOrComment = true
            if let event = dispatch() { events.append(event) }
            return
        }
        if first == UInt8(ascii: ":") {
            activity.sawBoundaryOrComment = true
            return
        }
        let colon = line.firstIndex(of: UInt8(ascii: ":"))
        let name = UnsafeRawBufferPointer(rebasing: line[..<(colon ?? line.count)])
        var valueStart = colon.map { $0 + 1 } ?? line.count
        if valueStart < line.count, line[valueStart] == UInt8(ascii: " ") { valueStart += 1 }
        let value = UnsafeRawBufferPointer(rebasing: line[valueStart...])
        switch Field(name) {
        case .data:
            data.append(contentsOf: value)
            data.append(0x0A)
        case .event:
            eventType = Array(value)
        case .id:
            if !value.contains(0) { pendingEventID = Array(value) }
        case .retry:
            if !value.isEmpty, value.allSatisfy({ (0x30...0x39).contains($0) }) {
                // Digits beyond what a Duration holds mean "wait longer than anyone will".
                let milliseconds = value.reduce(0) { total, digit in
                    total > Int64.max / 20 ? total : total * 10 + Int64(digit - 0x30)
                }
                reconnectionTime = .milliseconds(milliseconds)
                blockRetry = reconnectionTime
            }
        case .other:
            break
        }
    }

    /// Ends the block: its ID becomes the last event ID; its event, or `nil` when it had no data.
    private mutating func dispatch() -> ServerSentEvent? {
        lastEventID = pendingEventID
        defer {
            data.removeAll(keepingCapacity: true)
            eventType = nil
            blockRetry = nil
        }
        guard !data.isEmpty else { return nil }
        data.removeLast()
        return ServerSentEvent(
            type: eventType.map { $0.isEmpty ? "message" : String(decoding: $0, as: UTF8.self) } ?? "message",
            data: String(decoding: data, as: UTF8.self),
            id: lastEventID.isEmpty ? nil : String(decoding: lastEventID, as: UTF8.self),
            retry: blockRetry
        )
    }

    /// The error for an event past the maximum.
    private func tooLarge() -> CourierError {
        CourierError(
            kind: .responseTooLarge,
            message: "a server-sent event exceeds \(maximumEventBytes) bytes (the event stream's maximumEventBytes)"
        )
    }

    /// The fields the interpretation knows.
    private enum Field {
        case data, event, id, retry, other

        init(_ name: UnsafeRawBufferPointer) {
            switch name.count {
            case 2 where name.elementsEqual("id".utf8): self = .id
            case 4 where name.elementsEqual("data".utf8): self = .data
            case 5 where name.elementsEqual("event".utf8): self = .event
            case 5 where name.elementsEqual("retry".utf8): self = .retry
            default: self = .other
            }
        }
    }
}
