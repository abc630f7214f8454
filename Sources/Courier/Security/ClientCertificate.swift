/// A client certificate and its private key, presented for mutual TLS to the hosts of one
/// ``TrustPolicy``.
///
/// Both files are PEM. The certificate file may continue with the certificate's chain.
/// The key may be encrypted; give its password. The files are read once, when the
/// ``SecurityConfiguration`` is made: a missing file, a wrong password or a key that does
/// not belong to the certificate is a ``CourierError`` then, not at the first request.
///
/// ```swift
/// let identity = ClientCertificate(certificateFile: "/etc/myapp/client.pem",
///                                  privateKeyFile: "/etc/myapp/client-key.pem",
///                                  password: keyPassword)
/// ```
///
/// The password never appears in ``description``, `debugDescription` or `dump(_:)`.
public struct ClientCertificate: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible,
    CustomReflectable
{
    /// The PEM certificate, optionally followed by its chain.
    public let certificateFile: String
    /// The PEM private key.
    public let privateKeyFile: String
    /// The password of an encrypted private key, or of the PKCS#12 file.
    public let password: String?
    /// How the files are encoded: ``Format/pem`` (two files) or ``Format/pkcs12`` (one file,
    /// named by both ``certificateFile`` and ``privateKeyFile``).
    public let format: Format

    /// Creates a client certificate.
    ///
    /// - Parameters:
    ///   - certificateFile: The PEM certificate file, optionally followed by its chain.
    ///   - privateKeyFile: The PEM private key file.
    ///   - password: The key's password, when it is encrypted.
    public init(certificateFile: String, privateKeyFile: String, password: String? = nil) {
        self.certificateFile = certificateFile
        self.privateKeyFile = privateKeyFile
        self.password = password
        self.format = .pem
    }

    /// The files, and whether there is a password (never the password).
    public var description: String {
        if format == .pkcs12 {
            return
                "ClientCertificate(pkcs12: \(certificateFile), password: \(password == nil ? "none" : Redaction.placeholder))"
        }
        return "ClientCertificate(certificateFile: \(certificateFile), privateKeyFile: \(privateKeyFile), "
            + "password: \(password == nil ? "none" : Redaction.placeholder))"
    }

    /// The same as ``description``.
    public var debugDescription: String { description }

    /// A mirror without the password.
    public var customMirror: Mirror {
        Mirror(
            self,
            children: [
                "certificateFile": certificateFile, "privateKeyFile": privateKeyFile,
                "password": password == nil ? "none" : Redaction.placeholder, "format": format.rawValue,
            ]
        )
    }
}
