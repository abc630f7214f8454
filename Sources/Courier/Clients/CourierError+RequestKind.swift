/// An error of a ``UserClient`` or ``DeviceClient`` names the kind of request that failed.
extension CourierError {
    /// The kind of resource request that failed, when a ``UserClient`` or ``DeviceClient`` sent it.
    public internal(set) var requestKind: ResourceAccess.RequestKind? {
        get { self[attribute: ResourceAccess.RequestKind.self] }
        set { self[attribute: ResourceAccess.RequestKind.self] = newValue }
    }

    /// A copy that records the kind of resource request and, when unset, the level.
    func with(requestKind: ResourceAccess.RequestKind) -> CourierError {
        recording(requestKind)
    }
}

/// The kind of request is what a client's sessions tag their errors with
/// (``Session/errorTag``): `authenticated request` in the description, `request_kind` in the
/// parameters.
extension ResourceAccess.RequestKind: ErrorAttribute {
    /// First.
    static var order: Int { 0 }
    /// `request_kind`.
    static var parameterName: String { "request_kind" }
    /// The kind's name.
    var parameterValue: String { rawValue }
    /// `<kind> request`, among the context.
    var descriptionText: ErrorAttributeText { .context("\(self) request") }

    /// Records the kind and, when the error names no level yet, the level whose token the kind
    /// sends.
    ///
    /// - Parameter error: The error.
    func record(on error: inout CourierError) {
        error[attribute: Self.self] = self
        if error.level == nil, let level { error.level = level }
    }
}
