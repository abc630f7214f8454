internal import CCurlShim
import Foundation

/// The trust policies of a secured configuration, looked up by host, with the OpenSSL
/// objects the TLS verify hook uses: pins, pinned CA stores, client certificates, and
/// whether a policy trusts the system's roots without pins.
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
    /// The client certificates the policies' closures gave, by policy index.
    let providedCertificates: [Int: ClientCertificate]
    /// When, in seconds since 1970, a transport should ask the policies' closures for client
    /// certificates: `nil` when no policy has a closure, `-infinity` when one has not given a
    /// certificate yet, otherwise the earliest end of a certificate less its margin.
    let renewalDate: Double?
    /// By policy index, the SHA-256 of the client certificate the policy presents, `nil` for a
    /// policy that presents none.
    let clientCertificateDigests: [CertificateDigest?]
    private let exact: [String: [Int]]
    private let wildcards: [Int]
    private let handles: [OpaquePointer]

    /// Compiles `policies`, with the client certificates their closures gave.
    ///
    /// - Parameters:
    ///   - policies: The trust policies.
    ///   - providedCertificates: By policy index, the certificate a policy's closure gave.
    init(policies: [TrustPolicy], providedCertificates: [Int: ClientCertificate] = [:]) throws {
        var exact: [String: [Int]] = [:]
        var wildcards: [Int] = []
        for (index, policy) in policies.enumerated() {
            let twin = { (other: Int) in policies[other].port == policy.port }
            if policy.pattern.wildcardSuffix != nil {
                guard !wildcards.contains(where: { policies[$0].pattern == policy.pattern && twin($0) }) else {
                    throw Self.duplicate(policy)
                }
                wildcards.append(index)
            } else {
                guard !(exact[policy.host] ?? []).contains(where: twin) else { throw Self.duplicate(policy) }
                exact[policy.host, default: []].append(index)
            }
        }
        var handles: [OpaquePointer] = []
        do {
            for (index, policy) in policies.enumerated() {
                handles.append(try Self.compile(policy, provided: providedCertificates[index]))
            }
        } catch {
            for handle in handles { ccourier_tls_policy_free(handle) }
            throw error
        }
        self.policies = policies
        self.exact = exact
        self.wildcards = wildcards
        self.handles = handles
        self.providedCertificates = providedCertificates
        self.renewalDate = Self.renewalDate(policies, handles: handles)
        self.clientCertificateDigests = handles.map(Self.clientCertificateDigest)
    }

    /// The SHA-256 of a compiled policy's client certificate, `nil` when it has none.
    private static func clientCertificateDigest(of handle: OpaquePointer) -> CertificateDigest? {
        var digest = [UInt8](repeating: 0, count: 32)
        guard ccourier_tls_policy_client_sha256(handle, &digest) == 1 else { return nil }
        return CertificateDigest(sha256: digest)
    }

    /// The SHA-256 of the client certificate presented to a host and port, `nil` when the
    /// host's policy presents none (or the host has no policy).
    func clientCertificateDigest(forHost host: String, port: Int?) -> CertificateDigest? {
        index(forHost: host, port: port).flatMap { clientCertificateDigests[$0] }
    }

    /// The earliest moment a closure must be asked again (see ``renewalDate``).
    private static func renewalDate(_ policies: [TrustPolicy], handles: [OpaquePointer]) -> Double? {
        var earliest: Double?
        for (index, policy) in policies.enumerated() {
            guard let due = renewalDate(of: policy, handle: handles[index]) else { continue }
            earliest = min(earliest ?? due, due)
        }
        return earliest
    }

    /// When a policy's closure must be asked for a client certificate (seconds since 1970):
    /// `nil` for a policy without a closure, `-infinity` before its first certificate,
    /// otherwise the certificate's `notAfter` less the policy's margin.
    private static func renewalDate(of policy: TrustPolicy, handle: OpaquePointer) -> Double? {
        guard let provider = policy.clientCertificateProvider else { return nil }
        var notAfter: Int64 = 0
        guard ccourier_tls_policy_client_not_after(handle, &notAfter) == 1 else { return -.infinity }
        let (seconds, attoseconds) = provider.renewalMargin.components
        return Double(notAfter) - Double(seconds) - Double(attoseconds) / 1e18
    }

    /// When the closure of the policy at `index` must be asked (see ``renewalDate``).
    func renewalDate(ofPolicyAt index: Int) -> Double? {
        Self.renewalDate(of: policies[index], handle: handles[index])
    }

    /// Whether a policy with a closure has not given a client certificate yet.
    var lacksProvidedCertificates: Bool { renewalDate == -.infinity }

    deinit {
        for handle in handles { ccourier_tls_policy_free(handle) }
    }

    /// The index of the policy for a normal host name and the port a connection goes to:
    /// an exact host before a wildcard, and, for each, a policy naming the port before one
    /// for every port. A policy that names another port does not apply.
    func index(forHost host: String, port: Int?) -> Int? {
        func best(_ candidates: some Sequence<Int>) -> Int? {
            var anyPort: Int?
            for index in candidates {
                switch policies[index].port {
                case nil where anyPort == nil: anyPort = index
                case let policyPort? where policyPort == port: return index
                default: continue
                }
            }
            return anyPort
        }
        if let candidates = exact[host], let index = best(candidates) { return index }
        return best(wildcards.lazy.filter { self.policies[$0].pattern.matches(host) })
    }

    /// The policy for a normal host name and port.
    func policy(forHost host: String, port: Int?) -> TrustPolicy? {
        index(forHost: host, port: port).map { policies[$0] }
    }

    /// The compiled policy for a normal host name and port, for the TLS verify hook; `nil`
    /// when the host has no policy (the hook then refuses every chain).
    func handle(forHost host: String, port: Int?) -> OpaquePointer? {
        index(forHost: host, port: port).map { handles[$0] }
    }

    /// The compiled policy at an index of ``policies``.
    func handle(at index: Int) -> OpaquePointer { handles[index] }

    private static func duplicate(_ policy: TrustPolicy) -> CourierError {
        .invalidConfiguration(
            "two trust policies are for \(policy.authorityDescription); give each host pattern and port once",
            host: policy.host
        )
    }

    private static func compile(_ policy: TrustPolicy, provided: ClientCertificate?) throws -> OpaquePointer {
        guard let handle = ccourier_tls_policy_create() else {
            throw CourierError.invalidConfiguration("out of memory compiling the trust policy for \(policy.host)")
        }
        var error = [CChar](repeating: 0, count: 512)
        func failure(_ what: String) -> CourierError {
            ccourier_tls_policy_free(handle)
            let reason = String(decoding: error.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
            return .invalidConfiguration("\(what) for \(policy.host): \(reason)", host: policy.host)
        }
        for pin in policy.pins {
            guard ccourier_tls_policy_add_pin(handle, pin.sha256) == 1 else {
                throw failure("out of memory adding a pin")
            }
        }
        if !policy.isPinned {
            // Only a policy made with `TrustPolicy.systemRoots` has neither; the hook refuses
            // every chain for an empty policy that is not marked so.
            ccourier_tls_policy_accept_system_roots(handle)
        }
        if let bundle = policy.pinnedCertificateAuthorities {
            guard ccourier_tls_policy_set_ca_bundle(handle, bundle, &error, error.count) == 1 else {
                throw failure("the pinned CA bundle cannot be used")
            }
        }
        if policy.pinMode == .audit {
            ccourier_tls_policy_audit_pins(handle)
        }
        if let identity = provided ?? policy.clientCertificate {
            guard identity.load(into: handle, error: &error) else {
                throw failure("the client certificate cannot be used")
            }
        }
        return handle
    }
}
