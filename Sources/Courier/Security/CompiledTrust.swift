internal import CCurlShim

/// The trust policies of a secured configuration, looked up by host, with the OpenSSL
/// objects the TLS verify hook uses: pins, pinned CA stores, client certificates.
///
/// Built once, when the ``SecurityConfiguration`` is made, so an unreadable file or a wrong
/// key password is an error then. Every ``CurlTransport`` with the configuration keeps this
/// object alive at least until its connections are closed, so the pointers handed to
/// OpenSSL never dangle.
///
/// `@unchecked Sendable`: immutable after `init`; the C policies are only read, by the
/// transports' loop threads, and OpenSSL's certificate stores are thread-safe.
final class CompiledTrust: @unchecked Sendable {
    let policies: [TrustPolicy]
    private let exact: [String: Int]
    private let wildcards: [(suffix: String, index: Int)]
    private let handles: [OpaquePointer]

    init(policies: [TrustPolicy]) throws {
        var exact: [String: Int] = [:]
        var wildcards: [(suffix: String, index: Int)] = []
        for (index, policy) in policies.enumerated() {
            if let suffix = policy.pattern.wildcardSuffix {
                guard !wildcards.contains(where: { $0.suffix == suffix }) else { throw Self.duplicate(policy.host) }
                wildcards.append((suffix, index))
            } else {
                guard exact[policy.host] == nil else { throw Self.duplicate(policy.host) }
                exact[policy.host] = index
            }
        }
        var handles: [OpaquePointer] = []
        do {
            for policy in policies {
                handles.append(try Self.compile(policy))
            }
        } catch {
            for handle in handles { ccourier_tls_policy_free(handle) }
            throw error
        }
        self.policies = policies
        self.exact = exact
        self.wildcards = wildcards
        self.handles = handles
    }

    deinit {
        for handle in handles { ccourier_tls_policy_free(handle) }
    }

    /// The index of the policy for a normal host name: an exact host first, then a wildcard.
    func index(forHost host: String) -> Int? {
        if let index = exact[host] { return index }
        for wildcard in wildcards where policies[wildcard.index].pattern.matches(host) { return wildcard.index }
        return nil
    }

    /// The policy for a normal host name.
    func policy(forHost host: String) -> TrustPolicy? {
        index(forHost: host).map { policies[$0] }
    }

    /// The compiled policy for a normal host name, for the TLS verify hook; `nil` when the
    /// host has no policy (the hook then refuses every chain).
    func handle(forHost host: String) -> OpaquePointer? {
        index(forHost: host).map { handles[$0] }
    }

    private static func duplicate(_ host: String) -> SecurityError {
        .invalidConfiguration("two trust policies have the host pattern \(host); give each pattern once", host: host)
    }

    private static func compile(_ policy: TrustPolicy) throws -> OpaquePointer {
        guard let handle = ccourier_tls_policy_create() else {
            throw SecurityError.invalidConfiguration("out of memory compiling the trust policy for \(policy.host)")
        }
        var error = [CChar](repeating: 0, count: 512)
        func failure(_ what: String) -> SecurityError {
            ccourier_tls_policy_free(handle)
            let reason = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return .invalidConfiguration("\(what) for \(policy.host): \(reason)", host: policy.host)
        }
        for pin in policy.pins {
            guard ccourier_tls_policy_add_pin(handle, pin.sha256) == 1 else {
                throw failure("out of memory adding a pin")
            }
        }
        if let bundle = policy.pinnedCertificateAuthorities {
            guard ccourier_tls_policy_set_ca_bundle(handle, bundle, &error, error.count) == 1 else {
                throw failure("the pinned CA bundle cannot be used")
            }
        }
        if let identity = policy.clientCertificate {
            let ok = ccourier_tls_policy_set_client_certificate(
                handle,
                identity.certificateFile,
                identity.privateKeyFile,
                identity.password,
                &error,
                error.count
            )
            guard ok == 1 else { throw failure("the client certificate cannot be used") }
        }
        return handle
    }
}
