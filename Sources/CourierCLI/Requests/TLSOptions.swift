#if CommandLine
import ArgumentParser

/// How a command trusts servers and proves who it is: the CA bundle, pins and a client
/// certificate. Certificates are always verified; `-k` is refused.
struct TLSOptions: ParsableArguments {
    @Flag(name: [.customShort("k"), .customLong("insecure")], help: .hidden)
    var insecure = false

    @Option(name: .customLong("cacert"), help: "A PEM bundle of the CAs to trust instead of the system's.")
    var caBundle: String?

    @Option(
        name: .customLong("pin"),
        help: "An SPKI pin, sha256//BASE64, that the server's chain must hold; repeatable."
    )
    var pins: [String] = []

    @Option(name: .customLong("cert"), help: "A client certificate: PEM (with --key), or PKCS#12 with --cert-type p12.")
    var certificate: String?

    @Option(name: .customLong("key"), help: "The PEM private key of --cert.")
    var key: String?

    @Option(name: .customLong("cert-type"), help: "The format of --cert: pem (default) or p12.")
    var certificateType: String = "pem"

    @Option(
        name: .customLong("cert-password-env"),
        help: "The environment variable that holds the password of --cert (prompted when absent)."
    )
    var certificatePasswordVariable: String?

    func validate() throws {
        if insecure { throw TrustInput.insecureRefusal }
        guard ["pem", "p12"].contains(certificateType.lowercased()) else {
            throw ValidationError("--cert-type must be pem or p12, not \(certificateType)")
        }
        if certificateType.lowercased() == "pem", certificate != nil, key == nil {
            throw ValidationError("--cert needs --key with a PEM certificate")
        }
        if certificate == nil, key != nil { throw ValidationError("--key needs --cert") }
    }
}
#endif
