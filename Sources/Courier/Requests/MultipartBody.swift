import Foundation
import HTTPTypes

/// The layout of a `multipart/form-data` body (RFC 7578): segments of bytes and files, an
/// exact length, and a boundary that none of the in-memory content contains.
struct MultipartBody {
    /// A run of the body: bytes, or the whole of a file.
    enum Segment: Equatable {
        case data(Data)
        case file(path: String, length: Int64)

        var length: Int64 {
            switch self {
            case .data(let data): Int64(data.count)
            case .file(_, let length): length
            }
        }
    }

    /// The boundary, without the leading dashes.
    let boundary: String
    /// The body in order; adjacent bytes are merged.
    let segments: [Segment]

    /// The body's length in bytes.
    var length: Int64 { segments.reduce(0) { $0 + $1.length } }

    /// `multipart/form-data; boundary=…`.
    var contentType: String { "multipart/form-data; boundary=\(boundary)" }

    /// How many boundaries are drawn before giving up; one collision in 2^128 draws is
    /// already unlikely.
    static let maximumBoundaryDraws = 8

    /// Lays out `parts`.
    ///
    /// - Parameters:
    ///   - parts: The parts, in order.
    ///   - makeBoundary: Draws a boundary; random by default.
    /// - Throws: ``CourierError/Kind/unreadableFile`` for a file part that is missing or not a
    ///   regular file, ``CourierError/Kind/invalidHeader`` for a content type with control
    ///   characters.
    init(parts: [MultipartPart], makeBoundary: () -> String = MultipartBody.randomBoundary) throws {
        var heads: [Data] = []
        var contents: [Segment] = []
        for part in parts {
            heads.append(try Self.head(of: part))
            switch part.content {
            case .data(let data): contents.append(.data(data))
            case .file(let path): contents.append(.file(path: path, length: try FileSize.ofRegularFile(atPath: path)))
            }
        }
        var draws = 0
        var boundary = makeBoundary()
        while Self.occurs(boundary, in: heads, contents) {
            draws += 1
            guard draws < Self.maximumBoundaryDraws else {
                throw CourierError(
                    kind: .encodingFailed,
                    message: "no multipart boundary absent from the content was found"
                )
            }
            boundary = makeBoundary()
        }
        var segments: [Segment] = []
        func append(_ segment: Segment) {
            if case .data(let next) = segment, case .data(let previous)? = segments.last {
                segments[segments.count - 1] = .data(previous + next)
            } else {
                segments.append(segment)
            }
        }
        for (head, content) in zip(heads, contents) {
            append(.data(Data("--\(boundary)\r\n".utf8) + head))
            append(content)
            append(.data(Data("\r\n".utf8)))
        }
        append(.data(Data("--\(boundary)--\r\n".utf8)))
        self.boundary = boundary
        self.segments = segments
    }

    /// The body for the transport: bytes when every part is in memory, otherwise a
    /// replayable stream that reads the files in chunks.
    func requestBody() -> RequestBody {
        if segments.count == 1, case .data(let data) = segments[0] { return .data(data) }
        let segments = self.segments
        return .generated(length: length) { MultipartBodySequence(segments: segments) }
    }

    /// `Content-Disposition` and `Content-Type` lines and the blank line.
    private static func head(of part: MultipartPart) throws -> Data {
        var head = "Content-Disposition: form-data; name=\"\(escape(part.name))\""
        if let filename = part.filename { head += "; filename=\"\(escape(filename))\"" }
        head += "\r\n"
        if let contentType = part.contentType {
            guard HTTPField.isValidValue(contentType), !contentType.isEmpty else {
                throw CourierError(
                    kind: .invalidHeader,
                    message:
                        "the content type of multipart part `\(ErrorText.sanitized(part.name))` is empty or has control characters"
                )
            }
            head += "Content-Type: \(contentType)\r\n"
        }
        head += "\r\n"
        return Data(head.utf8)
    }

    /// Escapes a quoted name as browsers do (WHATWG HTML): `"` → `%22`, CR → `%0D`, LF → `%0A`.
    static func escape(_ name: String) -> String {
        var escaped = ""
        escaped.reserveCapacity(name.utf8.count)
        for character in name.unicodeScalars {
            switch character {
            case "\"": escaped += "%22"
            case "\r": escaped += "%0D"
            case "\n": escaped += "%0A"
            default: escaped.unicodeScalars.append(character)
            }
        }
        return escaped
    }

    private static func occurs(_ boundary: String, in heads: [Data], _ contents: [Segment]) -> Bool {
        let needle = Data(boundary.utf8)
        if heads.contains(where: { $0.range(of: needle) != nil }) { return true }
        return contents.contains { segment in
            if case .data(let data) = segment { return data.range(of: needle) != nil }
            return false
        }
    }

    /// `courier-` and 32 random hex digits (128 bits from the system generator).
    static func randomBoundary() -> String {
        var generator = SystemRandomNumberGenerator()
        let high = String(generator.next() as UInt64, radix: 16)
        let low = String(generator.next() as UInt64, radix: 16)
        return "courier-" + String(repeating: "0", count: 16 - high.count) + high
            + String(repeating: "0", count: 16 - low.count) + low
    }
}
