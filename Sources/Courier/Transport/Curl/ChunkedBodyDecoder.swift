import Foundation
import HTTPTypes

/// Reads an HTTP/1.1 chunked body from its raw bytes: the data, the end, and the trailer
/// section.
///
/// libcurl decodes chunked bodies itself and says nothing when one ends while the request body
/// is still being sent, since the transfer goes on until the upload is done. For such a full
/// duplex exchange the transfer asks libcurl for the raw bytes and reads the framing here, so
/// that the response ends when its last chunk arrives.
///
/// A value: ``decode(_:into:)`` on a copy leaves the original as it was, so a transfer whose
/// consumer cannot take the bytes yet can let libcurl hand them over again.
struct ChunkedBodyDecoder: Sendable {
    /// What the bytes decoded so far amount to.
    enum Outcome: Equatable, Sendable {
        /// More of the body is to come.
        case more
        /// The last chunk and the trailer section arrived.
        case end
        /// The framing is not valid chunked encoding; the text says how.
        case malformed(String)
    }

    private enum State: Sendable {
        case size(digits: Int)
        case sizeExtension
        case data
        case dataEnd(sawCR: Bool)
        case trailerLine
        case done
    }

    private var state = State.size(digits: 0)
    private var chunkSize: UInt64 = 0
    private var line: [UInt8] = []
    private var trailerBytes = 0
    /// The trailer fields, once the section arrived.
    private(set) var trailerFields = HTTPFields()

    /// Whether the last chunk and the trailer section arrived.
    var isDone: Bool {
        if case .done = state { return true }
        return false
    }

    /// Decodes `bytes`, appending the body data they hold to `output`.
    mutating func decode(_ bytes: UnsafeRawBufferPointer, into output: inout Data) -> Outcome {
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch state {
            case .size(let digits):
                if let value = byte.hexValue {
                    guard digits < 15 else { return .malformed("a chunk size has more than 15 hex digits") }
                    chunkSize = chunkSize << 4 | UInt64(value)
                    state = .size(digits: digits + 1)
                } else if digits == 0 {
                    return .malformed("a chunk does not start with its size")
                } else if byte == 0x0A {
                    state = chunkSize == 0 ? .trailerLine : .data
                } else if byte == 0x3B || byte == 0x20 || byte == 0x09 || byte == 0x0D {
                    state = .sizeExtension  // chunk extensions are ignored
                } else {
                    return .malformed("a chunk size is followed by \(Self.describe(byte))")
                }
                index += 1
            case .sizeExtension:
                if byte == 0x0A { state = chunkSize == 0 ? .trailerLine : .data }
                index += 1
            case .data:
                let take = Int(min(UInt64(bytes.count - index), chunkSize))
                output.append(contentsOf: UnsafeRawBufferPointer(rebasing: bytes[index..<(index + take)]))
                chunkSize -= UInt64(take)
                index += take
                if chunkSize == 0 { state = .dataEnd(sawCR: false) }
            case .dataEnd(let sawCR):
                if byte == 0x0D, !sawCR {
                    state = .dataEnd(sawCR: true)
                } else if byte == 0x0A {
                    state = .size(digits: 0)
                } else {
                    return .malformed("a chunk's data is longer than its size")
                }
                index += 1
            case .trailerLine:
                trailerBytes += 1
                guard trailerBytes <= ResponseHeadLimits.maximumSectionBytes else {
                    return .malformed("the trailer section exceeds \(ResponseHeadLimits.maximumSectionBytes) bytes")
                }
                index += 1
                guard byte == 0x0A else {
                    line.append(byte)
                    continue
                }
                if line.last == 0x0D { line.removeLast() }
                if line.isEmpty {
                    state = .done
                    return .end
                }
                let field = line.withUnsafeBytes { ResponseHeadParser.field($0) }
                if let (field, _) = field { trailerFields.append(field) }
                line.removeAll(keepingCapacity: true)
            case .done:
                return .end  // bytes after the end: ignored, as libcurl does
            }
        }
        return isDone ? .end : .more
    }

    private static func describe(_ byte: UInt8) -> String {
        "the byte 0x\(String(byte, radix: 16, uppercase: true))"
    }
}

/// A transfer's ``ChunkedBodyDecoder``, kept apart: only a full-duplex exchange needs one, and
/// every transfer would otherwise carry its room.
final class ChunkedBodyReader {
    var decoder = ChunkedBodyDecoder()
}

extension UInt8 {
    /// The value of an ASCII hex digit, or `nil`.
    fileprivate var hexValue: UInt8? {
        switch self {
        case 48...57: self - 48
        case 65...70: self - 55
        case 97...102: self - 87
        default: nil
        }
    }
}
