import Foundation
public import HTTPTypes

extension ResourceRequest {
    /// Translates the request into the HTTP request and body a ``Session`` sends.
    ///
    /// This is where every check runs; ``Session/send(_:logger:)`` calls it before anything
    /// is sent. The rules:
    ///
    /// - The path is checked and, for an absolute URL, split into scheme, authority and
    ///   path; a relative path is left for the session to resolve against its base URL.
    /// - GET, HEAD, DELETE, OPTIONS and TRACE: parameters are appended to the query.
    /// - Every other method (POST, PUT, PATCH, custom ones): multipart data makes a `multipart/form-data` body whose first
    ///   fields are the parameters; otherwise a raw body is sent as it is, and otherwise the
    ///   parameters are encoded as JSON or form data.
    /// - `Content-Type` comes from the body unless the header fields set it; a multipart request
    ///   may not set it (the boundary is Courier's). `Content-Length` is the body's exact
    ///   length, known before sending, including for streamed files.
    ///
    /// - Returns: The request head and the body, `nil` when there is none.
    /// - Throws: ``CourierError`` for bad input; see ``CourierError/Kind``.
    public func makeHTTPRequest() throws -> (request: HTTPRequest, body: RequestBody?) {
        let target = try RequestTarget(path)
        var fields = try HeaderValidation.checked(headerFields)
        let encoder = QueryStringEncoder(format: queryStringFormat)
        var pathAndQuery = target.pathAndQuery
        var content: (body: RequestBody, contentType: String?)?

        if !multipartData.isEmpty {
            guard body == nil else {
                throw CourierError(
                    kind: .conflictingBody,
                    message: "a request cannot have both a raw body and multipart data"
                )
            }
            guard method.sendsParametersInBody else {
                throw CourierError(
                    kind: .bodyNotAllowed,
                    message: "a \(method.rawValue) request cannot carry multipart data"
                )
            }
            guard fields[.contentType] == nil else {
                throw CourierError(
                    kind: .reservedHeader,
                    message: "Content-Type of a multipart request is set by Courier with its boundary"
                )
            }
            let textFields = try encoder.pairs(parameters).map { MultipartPart.text($0.text, name: $0.name) }
            let multipart = try MultipartBody(parts: textFields + multipartData)
            content = (multipart.requestBody(), multipart.contentType)
        } else if let body {
            guard method.allowsBody else {
                throw CourierError(kind: .bodyNotAllowed, message: "a \(method.rawValue) request cannot carry a body")
            }
            content = (try body.requestBody(), body.contentType)
        } else if method.sendsParametersInBody && !parameters.isEmpty {
            switch parametersEncoding {
            case .json:
                content = (.data(try ParameterValue.jsonData(parameters)), "application/json")
            case .formURLEncoded:
                content = (.data(Data(try encoder.encode(parameters).utf8)), "application/x-www-form-urlencoded")
            }
        }

        if !method.sendsParametersInBody && !parameters.isEmpty {
            let query = try encoder.encode(parameters)
            if !query.isEmpty {
                if !pathAndQuery.contains("?") {
                    pathAndQuery += "?"
                } else if !pathAndQuery.hasSuffix("?") && !pathAndQuery.hasSuffix("&") {
                    pathAndQuery += "&"
                }
                pathAndQuery += query
            }
        }
        if fields[.contentType] == nil, let contentType = content?.contentType {
            fields[.contentType] = try HeaderValidation.checkedValue(contentType, name: "Content-Type")
        }
        let request = HTTPRequest(
            method: method,
            scheme: target.scheme,
            authority: target.authority,
            path: pathAndQuery,
            headerFields: fields
        )
        return (request, content?.body)
    }
}

extension ResourceRequest.Body {
    /// The transport's body: the bytes, or the file streamed from disk.
    ///
    /// - Throws: ``CourierError/Kind/unreadableFile`` when the file is missing or not regular.
    func requestBody() throws -> RequestBody {
        switch content {
        case .data(let data):
            return .data(data)
        case .file(let path):
            _ = try FileSize.ofRegularFile(atPath: path)
            do {
                return try .file(atPath: path)
            } catch {
                throw CourierError(kind: .unreadableFile, message: "\(ErrorText.file(path)) cannot be read: \(error)")
            }
        }
    }
}
