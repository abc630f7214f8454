public import HTTPTypes
import Foundation

extension Session {
    /// Whether a credential may be attached to a request on this session: the session is
    /// secured and the request, resolved against the base URL, is HTTPS to a host with a
    /// ``TrustPolicy``.
    ///
    /// See ``SecurityConfiguration/mayAttachCredentials(to:)``, which takes absolute
    /// requests; this method also resolves a relative one first.
    ///
    /// - Parameter request: A relative or absolute request.
    /// - Returns: Whether credentials may go to its host.
    public nonisolated func mayAttachCredentials(to request: HTTPRequest) -> Bool {
        guard configuration.security.isSecured else { return false }
        var request = request
        if request.authority == nil, let baseURL = configuration.baseURL {
            request.scheme = baseURL.scheme
            request.authority = baseURL.host.map { host in
                let bracketed = host.contains(":") ? "[\(host)]" : host
                return baseURL.port.map { "\(bracketed):\($0)" } ?? bracketed
            }
        }
        return configuration.security.mayAttachCredentials(to: request)
    }
}
