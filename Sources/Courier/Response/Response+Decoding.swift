public import Foundation
import HTTPTypes

extension Response {
    /// Returns the response when its status is accepted, and throws otherwise.
    ///
    /// This is the one place where a status becomes an error, and only when the caller asks:
    ///
    /// ```swift
    /// let user = try await session.send(request).validate().decode(User.self)
    /// ```
    ///
    /// - Parameter acceptableStatusCodes: The accepted codes, 200–299 by default.
    /// - Returns: The response itself, for chaining.
    /// - Throws: ``CourierError`` (``CourierError/Kind/clientError``,
    ///   ``CourierError/Kind/serverError`` or ``CourierError/Kind/unexpectedStatus``)
    ///   carrying this response.
    @discardableResult
    public func validate(acceptableStatusCodes: ClosedRange<Int> = 200...299) throws -> Response {
        guard acceptableStatusCodes.contains(statusCode) else { throw CourierError.status(of: self) }
        return self
    }

    /// Decodes the body as JSON.
    ///
    /// Whatever the status: call ``validate(acceptableStatusCodes:)`` first to decode only
    /// successful responses, or decode an error document from a 4xx on purpose.
    ///
    /// - Parameters:
    ///   - type: The type to decode.
    ///   - decoder: The decoder, for key and date strategies.
    /// - Returns: The decoded value.
    /// - Throws: ``CourierError/Kind/undecodableBody`` with the decoder's explanation.
    public func decode<T: Decodable>(_ type: T.Type, decoder: JSONDecoder = JSONDecoder()) throws -> T {
        do {
            return try decoder.decode(type, from: data)
        } catch {
            throw undecodable(type, format: "JSON", error)
        }
    }

    /// Decodes the body as XML.
    ///
    /// The root element's name is not checked; child elements and attributes map to
    /// properties as described in <doc:Requests>. Document type declarations are refused,
    /// so entity expansion attacks cannot run.
    ///
    /// - Parameter type: The type to decode.
    /// - Returns: The decoded value.
    /// - Throws: ``CourierError/Kind/undecodableBody`` for malformed XML or a mismatch.
    public func decodeXML<T: Decodable>(_ type: T.Type) throws -> T {
        do {
            return try XMLTreeDecoder().decode(type, from: data)
        } catch {
            throw undecodable(type, format: "XML", error)
        }
    }

    private func undecodable<T>(_ type: T.Type, format: String, _ error: any Error) -> CourierError {
        let endpoint = self.endpoint?.description
        return CourierError(
            kind: .undecodableBody,
            message: "the \(format) body\(endpoint.map { " of \($0)" } ?? "") does not decode as \(T.self): \(error)",
            statusCode: statusCode,
            endpoint: endpoint,
            response: self
        )
    }
}

extension CourierError {
    /// The error for a status that was not accepted: ``Kind/clientError`` for 4xx,
    /// ``Kind/serverError`` for 5xx, ``Kind/unexpectedStatus`` otherwise.
    static func status(of response: Response) -> CourierError {
        let kind: Kind =
            switch response.status.kind {
            case .clientError: .clientError
            case .serverError: .serverError
            default: .unexpectedStatus
            }
        let endpoint = response.endpoint?.description
        return CourierError(
            kind: kind,
            message: "\(endpoint ?? "the request") answered \(response.status)",
            statusCode: response.statusCode,
            endpoint: endpoint,
            response: response
        )
    }
}
