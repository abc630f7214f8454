// The transport's `SecurityConfiguration` is the credential policy of everything in Auth:
// tokens, client secrets, challenge answers and filter-set cookies go only where its
// credential gate (`checkCredentialTarget(_:)`) allows: secured, HTTPS, a trusted host and port.
extension SecurityConfiguration: CredentialPolicy {}
