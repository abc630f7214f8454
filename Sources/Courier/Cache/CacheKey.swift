import HTTPTypes

/// What a stored response is found by: the partition, the method and the absolute URL with its
/// query (RFC 9111 §2). The request fields a response varies on (`Vary`) are checked after the
/// lookup, on each stored response of the key.
struct CacheKey: Hashable, Sendable {
    /// Whose entry it is.
    let partition: CachePartition
    /// `GET` or `HEAD`.
    let method: HTTPRequest.Method
    /// The request's scheme, authority and path with query.
    let target: String

    /// The key of `request` in `partition`, or `nil` when the request has no scheme or
    /// authority.
    ///
    /// The scheme and host compare without case, as URLs do.
    init?(_ request: HTTPRequest, partition: CachePartition) {
        guard let scheme = request.scheme, let authority = request.authority else { return nil }
        self.init(
            partition: partition,
            method: request.method,
            scheme: scheme,
            authority: authority,
            path: request.path
        )
    }

    /// The key of a URL given by its parts.
    init(partition: CachePartition, method: HTTPRequest.Method, scheme: String, authority: String, path: String?) {
        self.partition = partition
        self.method = method
        target = "\(scheme.lowercased())://\(authority.lowercased())\(path ?? "/")"
    }

    /// The same URL in another partition or for another method.
    func with(partition: CachePartition? = nil, method: HTTPRequest.Method? = nil) -> CacheKey {
        CacheKey(partition: partition ?? self.partition, method: method ?? self.method, target: target)
    }

    private init(partition: CachePartition, method: HTTPRequest.Method, target: String) {
        self.partition = partition
        self.method = method
        self.target = target
    }
}
