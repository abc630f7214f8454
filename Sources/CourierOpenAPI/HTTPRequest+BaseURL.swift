#if OpenAPI
import Courier
import Foundation
import HTTPTypes

extension HTTPRequest {
    /// The request addressed to the absolute URL made of `baseURL` with the request's path
    /// appended to its path, and the request's query.
    ///
    /// The session checks that URL as it checks any absolute request target (scheme, host,
    /// no credentials, the trust set of a secured transport) before anything is sent.
    ///
    /// - Throws: ``/Courier/CourierError/Kind/invalidURL`` when the two do not make a URL.
    func resolved(against baseURL: URL) throws -> HTTPRequest {
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: true),
            let relative = URLComponents(string: path ?? "")
        else {
            throw CourierError(.invalidURL, message: "\(path ?? "") cannot be joined to \(baseURL.absoluteString)")
        }
        components.percentEncodedPath += relative.percentEncodedPath
        components.percentEncodedQuery = relative.percentEncodedQuery
        guard let url = components.url, url.scheme != nil, url.host != nil else {
            throw CourierError(.invalidURL, message: "the server URL \(baseURL.absoluteString) has no scheme or host")
        }
        var resolved = self
        resolved.scheme = nil
        resolved.authority = nil
        resolved.path = url.absoluteString
        return resolved
    }
}
#endif
