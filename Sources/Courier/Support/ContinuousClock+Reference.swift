extension ContinuousClock {
    /// An instant taken once per process. `ContinuousClock.Instant` has no fixed layout outside
    /// the standard library: a value that stores one has none either, so each copy is a call
    /// through value witnesses and each async frame holding one a separate allocation. Values
    /// on the request path store their instants as a `Duration` from this one instead.
    static let reference = ContinuousClock.now

    /// Now, as its distance from ``reference``.
    static var sinceReference: Duration { reference.duration(to: .now) }
}
