public import Foundation

extension ResourceRequest {
    /// The raw body of a ``ResourceRequest``: bytes, text, a file, or an `Encodable` value
    /// encoded as JSON or XML.
    ///
    /// A raw body replaces the request's parameters (see ``ResourceRequest/parameters``).
    /// Encodable values are encoded when the body is made, so the request stays a plain,
    /// comparable value and an encoding failure surfaces where the body is written:
    ///
    /// ```swift
    /// let request = ResourceRequest(path: "/people", method: .post, body: try .json(person))
    /// ```
    public struct Body: Sendable, Hashable {
        /// Where the bytes come from.
        public enum Content: Sendable, Hashable {
            /// Bytes in memory.
            case data(Data)
            /// A file streamed from disk when the request is sent, never loaded whole.
            case file(path: String)
        }

        /// Where the bytes come from.
        public let content: Content
        /// The `Content-Type` sent with the body, unless the request's headers set one.
        public let contentType: String?

        /// Creates a body.
        ///
        /// - Parameters:
        ///   - content: The bytes or the file.
        ///   - contentType: The media type, or `nil` to send none.
        public init(content: Content, contentType: String?) {
            self.content = content
            self.contentType = contentType
        }

        /// A body of bytes.
        ///
        /// - Parameters:
        ///   - data: The bytes.
        ///   - contentType: The media type, or `nil` to send none.
        /// - Returns: The body.
        public static func data(_ data: Data, contentType: String? = nil) -> Body {
            Body(content: .data(data), contentType: contentType)
        }

        /// A body of the UTF-8 form of `text`.
        ///
        /// - Parameters:
        ///   - text: The text.
        ///   - contentType: The media type, `text/plain; charset=utf-8` by default.
        /// - Returns: The body.
        public static func text(_ text: String, contentType: String = "text/plain; charset=utf-8") -> Body {
            Body(content: .data(Data(text.utf8)), contentType: contentType)
        }

        /// A body streamed from the file at `path`.
        ///
        /// The file is checked when the request is translated
        /// (``ResourceRequest/makeHTTPRequest()``), and read in chunks while it is sent.
        ///
        /// - Parameters:
        ///   - path: The file's path.
        ///   - contentType: The media type, `application/octet-stream` by default.
        /// - Returns: The body.
        public static func file(atPath path: String, contentType: String? = "application/octet-stream") -> Body {
            Body(content: .file(path: path), contentType: contentType)
        }

        /// A body of `value` encoded as JSON, `Content-Type: application/json`.
        ///
        /// - Parameters:
        ///   - value: The value.
        ///   - encoder: The encoder, for key, date and formatting strategies.
        /// - Returns: The body.
        /// - Throws: ``CourierError/Kind/encodingFailed`` when the encoder fails (a NaN, say).
        public static func json(_ value: some Encodable, encoder: JSONEncoder = JSONEncoder()) throws -> Body {
            do {
                return Body(content: .data(try encoder.encode(value)), contentType: "application/json")
            } catch {
                throw CourierError(kind: .encodingFailed, message: "the body cannot be encoded as JSON: \(error)")
            }
        }

        /// A body of `value` encoded as XML, `Content-Type: application/xml; charset=utf-8`.
        ///
        /// The value is written as the element `rootElement`; see <doc:Requests> for how
        /// properties, arrays and optionals map to elements.
        ///
        /// - Parameters:
        ///   - value: The value.
        ///   - rootElement: The name of the document's root element.
        /// - Returns: The body.
        /// - Throws: ``CourierError/Kind/encodingFailed`` for an invalid element name, a non-finite
        ///   number, or text that XML 1.0 cannot hold.
        public static func xml(_ value: some Encodable, rootElement: String) throws -> Body {
            do {
                let data = try XMLTreeEncoder().encode(value, rootElement: rootElement)
                return Body(content: .data(data), contentType: "application/xml; charset=utf-8")
            } catch {
                throw CourierError(kind: .encodingFailed, message: "the body cannot be encoded as XML: \(error)")
            }
        }
    }
}
