import HTTPTypes

extension HTTPField.Name {
    /// `DPoP` (RFC 9449 §4.1): the proof of possession that goes with a sender-constrained
    /// token. A credential: never logged, never carried to another URL by a redirect.
    static let dpop = HTTPField.Name("DPoP")!
}
