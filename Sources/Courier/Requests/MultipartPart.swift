public import Foundation

/// One part of a `multipart/form-data` body: a text field, or a file from memory or disk.
///
/// ```swift
/// let parts: [MultipartPart] = [
///     .text("holiday", name: "album"),
///     .file(atPath: "/tmp/beach.jpg", name: "photo", contentType: "image/jpeg"),
/// ]
/// ```
///
/// A file part from a path is read in chunks while it is sent, so a large file never sits in
/// memory; its size is taken when the request is translated and must not change until the
/// upload ends.
public struct MultipartPart: Sendable, Hashable {
    /// Where a part's bytes come from.
    public enum Content: Sendable, Hashable {
        /// Bytes in memory.
        case data(Data)
        /// A file streamed from disk.
        case file(path: String)
    }

    /// The form field name.
    public let name: String
    /// The file name sent in `Content-Disposition`, or `nil` for a text field.
    public let filename: String?
    /// The part's media type, or `nil` for a text field (RFC 7578: `text/plain`).
    public let contentType: String?
    /// The part's bytes.
    public let content: Content

    /// Creates a part.
    ///
    /// - Parameters:
    ///   - name: The form field name.
    ///   - filename: The file name, or `nil` for a text field.
    ///   - contentType: The media type, or `nil`.
    ///   - content: The bytes or the file.
    public init(name: String, filename: String?, contentType: String?, content: Content) {
        self.name = name
        self.filename = filename
        self.contentType = contentType
        self.content = content
    }

    /// A text field.
    ///
    /// - Parameters:
    ///   - value: The field's text, sent as UTF-8.
    ///   - name: The field name.
    /// - Returns: The part.
    public static func text(_ value: String, name: String) -> MultipartPart {
        MultipartPart(name: name, filename: nil, contentType: nil, content: .data(Data(value.utf8)))
    }

    /// A file part whose bytes are in memory.
    ///
    /// - Parameters:
    ///   - data: The file's bytes.
    ///   - name: The field name.
    ///   - filename: The file name the server sees.
    ///   - contentType: The media type, `application/octet-stream` by default.
    /// - Returns: The part.
    public static func data(
        _ data: Data,
        name: String,
        filename: String,
        contentType: String = "application/octet-stream"
    ) -> MultipartPart {
        MultipartPart(name: name, filename: filename, contentType: contentType, content: .data(data))
    }

    /// A file part streamed from the file at `path`.
    ///
    /// - Parameters:
    ///   - path: The file to upload.
    ///   - name: The field name.
    ///   - filename: The file name the server sees; the last component of `path` by default.
    ///   - contentType: The media type, `application/octet-stream` by default.
    /// - Returns: The part.
    public static func file(
        atPath path: String,
        name: String,
        filename: String? = nil,
        contentType: String = "application/octet-stream"
    ) -> MultipartPart {
        let filename = filename ?? URL(fileURLWithPath: path).lastPathComponent
        return MultipartPart(name: name, filename: filename, contentType: contentType, content: .file(path: path))
    }
}
