internal import CCurlShim

extension ClientCertificate {
    /// How a client certificate and its key are stored.
    public struct Format: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        /// The format's name.
        public let rawValue: String

        /// Creates a format from its name.
        ///
        /// - Parameter rawValue: The name.
        public init(rawValue: String) { self.rawValue = rawValue }

        /// A PEM certificate file (optionally followed by its chain) and a PEM key file.
        public static let pem = Format(rawValue: "PEM")
        /// One PKCS#12 (`.p12`, `.pfx`) file with the certificate, its key and optionally its
        /// chain, protected by a password.
        public static let pkcs12 = Format(rawValue: "P12")

        /// The format's name.
        public var description: String { rawValue }
    }

    private init(pkcs12File path: String, password: String?) {
        self.certificateFile = path
        self.privateKeyFile = path
        self.password = password
        self.format = .pkcs12
    }

    /// A client certificate from a PKCS#12 file, the format most certificate authorities and
    /// key stores hand out.
    ///
    /// Unlike the PEM initializer, the file is read and decrypted now: a missing or damaged
    /// file, a wrong password or a file without a certificate and its key throws here. It is
    /// read again when the ``SecurityConfiguration`` is made.
    ///
    /// ```swift
    /// let identity = try ClientCertificate.pkcs12(path: "/etc/myapp/client.p12", password: p12Password)
    /// ```
    ///
    /// - Parameters:
    ///   - path: The PKCS#12 file.
    ///   - password: Its password; `nil` for a file without one.
    /// - Returns: The client certificate.
    /// - Throws: ``CourierError/Kind/invalidConfiguration`` when the file cannot be used.
    public static func pkcs12(path: String, password: String?) throws -> ClientCertificate {
        let certificate = ClientCertificate(pkcs12File: path, password: password)
        guard let policy = ccourier_tls_policy_create() else {
            throw CourierError.invalidConfiguration("out of memory reading the PKCS#12 file \(path)")
        }
        defer { ccourier_tls_policy_free(policy) }
        var error = [CChar](repeating: 0, count: 512)
        guard certificate.load(into: policy, error: &error) else {
            throw CourierError.invalidConfiguration("the client certificate cannot be used: \(reason(error))")
        }
        return certificate
    }

    /// Loads the certificate and key into a compiled trust policy; on failure, `error` says why.
    func load(into policy: OpaquePointer, error: inout [CChar]) -> Bool {
        let capacity = error.count
        switch format {
        case .pkcs12:
            return ccourier_tls_policy_set_client_pkcs12(policy, certificateFile, password, &error, capacity) == 1
        default:
            return ccourier_tls_policy_set_client_certificate(
                policy,
                certificateFile,
                privateKeyFile,
                password,
                &error,
                capacity
            ) == 1
        }
    }

    private static func reason(_ error: [CChar]) -> String {
        String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }
}
