import CoreMetrics
import Foundation

/// The trust set of a secured ``CurlTransport`` as it changes while the transport runs: the
/// current ``TrustGeneration``, and the renewal of client certificates that closures give.
///
/// A request takes the current generation when it enters the transport and keeps it to its
/// end, retries on a fresh connection included. An earlier generation lives on only while a
/// request or a connection made under it does — OpenSSL points into its compiled policies, so
/// each connection holds its generation until libcurl frees it — and is freed after the last:
/// a service that rotates its certificate every hour does not grow by a trust set an hour.
final class TransportTrust: Sendable {
    private struct State {
        var current: TrustGeneration
        /// How many generations there have been, the current one included: the next one's
        /// number.
        var count: UInt64 = 1
        /// The renewal of client certificates under way, if any.
        var renewal: Task<TrustGeneration, any Error>?
        /// No background renewal starts before this moment (seconds since 1970), after a
        /// failed one or one whose certificate is already within its margin.
        var quietUntil: Double = 0
    }

    /// How long a transport waits before asking a closure again after a renewal that failed
    /// or gave a certificate already within its margin.
    static let renewalPause: Double = 10

    private let state: LockedBox<State>
    private let metricsFactory: any MetricsFactory

    /// Creates the trust of a transport whose configuration is `security`, a secured one.
    init(security: SecurityConfiguration, metricsFactory: any MetricsFactory) {
        self.metricsFactory = metricsFactory
        // Generation 0 sets no cipher-list tag, so it cannot fail.
        let first = try! TrustGeneration(number: 0, security: security, metricsFactory: metricsFactory)
        state = LockedBox(State(current: first))
    }

    /// The generation new requests take.
    var current: TrustGeneration { state.withLock { $0.current } }

    /// How many generations the transport has had.
    var generationCount: Int { state.withLock { Int($0.count) } }

    /// Makes `security` the trust set of new requests.
    ///
    /// - Throws: ``CourierError/Kind/invalidConfiguration`` when `security` is weaker in kind
    ///   than the current set or trusts other hosts (``check(_:replacing:)``).
    func replace(with security: SecurityConfiguration) throws {
        try state.withLock { state in
            try Self.check(security, replacing: state.current.security)
            let next = try TrustGeneration(number: state.count, security: security, metricsFactory: metricsFactory)
            state.current = next
            state.count += 1
            // A renewal under way belongs to the set just replaced: it finds the set replaced
            // and drops its result, while the new set's closures are asked on their own.
            state.renewal = nil
            state.quietUntil = 0
        }
    }

    /// Throws unless `next` may replace `current`: it is secured, its TLS minimum is not
    /// lower, its debugger detection is the same, and it trusts the same host patterns and
    /// ports (sessions check a request's host before it reaches the transport).
    static func check(_ next: SecurityConfiguration, replacing current: SecurityConfiguration) throws {
        guard next.isSecured, next.compiled != nil else {
            throw CourierError.invalidConfiguration(
                "a secured transport's trust can be replaced only by another secured configuration; "
                    + "the trust was left as it was"
            )
        }
        if current.minimumTLSVersion == .v1_3, next.minimumTLSVersion != .v1_3 {
            throw CourierError.invalidConfiguration(
                "the replacement trust lowers the TLS minimum from 1.3 to 1.2; the trust was left as it was"
            )
        }
        guard next.detectsDebugger == current.detectsDebugger else {
            throw CourierError.invalidConfiguration(
                "the replacement trust changes debugger detection, which sessions check before the transport; "
                    + "make a new transport for that. The trust was left as it was"
            )
        }
        func authorities(_ security: SecurityConfiguration) -> Set<String> {
            Set(security.trustPolicies.map(\.authorityDescription))
        }
        let before = authorities(current)
        let after = authorities(next)
        guard before == after else {
            let added = after.subtracting(before).sorted()
            let removed = before.subtracting(after).sorted()
            throw CourierError.invalidConfiguration(
                "the replacement trust must cover the same hosts and ports (sessions check a request's host before "
                    + "the transport does); added: \(added), removed: \(removed). Make a new transport to change "
                    + "which hosts are trusted. The trust was left as it was"
            )
        }
    }

    /// The generation a new request takes, once its client certificates from closures are
    /// loaded: when one has not been loaded yet, waits for it; when one nears its end,
    /// starts its renewal in the background and returns `generation` at once.
    ///
    /// - Parameters:
    ///   - generation: The current generation, as the request read it.
    ///   - deadline: The request's deadline: waiting for a first certificate ends there.
    /// - Throws: ``CourierError/Kind/invalidConfiguration`` when a closure failed to give a
    ///   first certificate, or gave one that cannot be used; ``CourierError/Kind/timedOut``
    ///   when the deadline passed first; `CancellationError` when the request was cancelled.
    func ready(_ generation: TrustGeneration, deadline: ContinuousClock.Instant?) async throws -> TrustGeneration {
        guard generation.compiled.renewalDate != nil else { return generation }
        var generation = try await readyOnce(generation, deadline: deadline)
        // The trust may have been replaced while the request waited, by a set whose closures
        // have not given certificates yet either.
        for _ in 0..<3 where generation.compiled.lacksProvidedCertificates {
            generation = try await readyOnce(generation, deadline: deadline)
        }
        return generation
    }

    /// One round of ``ready(_:deadline:)``.
    private func readyOnce(
        _ generation: TrustGeneration,
        deadline: ContinuousClock.Instant?
    ) async throws -> TrustGeneration {
        guard let due = generation.compiled.renewalDate else { return generation }
        let now = Date().timeIntervalSince1970
        guard now >= due else { return generation }
        let waits = generation.compiled.lacksProvidedCertificates
        let task: Task<TrustGeneration, any Error>? = state.withLock { state in
            if let running = state.renewal { return running }
            guard state.current === generation, waits || now >= state.quietUntil else { return nil }
            let task = Task { try await self.renew(generation) }
            state.renewal = task
            return task
        }
        guard waits else { return generation }
        guard let task else { return current }
        return try await Self.value(of: task, deadline: deadline)
    }

    /// The value of a first load, or `CancellationError` as soon as the waiting request is
    /// cancelled, or ``CourierError/Kind/timedOut`` at its deadline: the load itself goes on
    /// for the requests that still wait (a closure that hangs must not hang a request its
    /// caller gave up, or whose time is up).
    private static func value(
        of task: Task<TrustGeneration, any Error>,
        deadline: ContinuousClock.Instant?
    ) async throws -> TrustGeneration {
        let waiter = LockedBox<CheckedContinuation<TrustGeneration, any Error>?>(nil)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { continuation in
                waiter.withLock { $0 = continuation }
                let timer = deadline.map { deadline in
                    Task {
                        // Cancelled when the load ends first: then it resumes nothing.
                        guard (try? await Task.sleep(until: deadline, clock: .continuous)) != nil else { return }
                        waiter.withLock { waiting in
                            defer { waiting = nil }
                            return waiting
                        }?.resume(
                            throwing: CourierError(
                                kind: .timedOut,
                                message: "the request's deadline passed while the transport waited for the first "
                                    + "client certificate of its trust set"
                            )
                        )
                    }
                }
                Task {
                    let result = await task.result
                    timer?.cancel()
                    waiter.withLock { waiting in
                        defer { waiting = nil }
                        return waiting
                    }?.resume(with: result)
                }
                if Task.isCancelled {
                    waiter.withLock { waiting in
                        defer { waiting = nil }
                        return waiting
                    }?.resume(throwing: CancellationError())
                }
            }
        } onCancel: {
            waiter.withLock { waiting in
                defer { waiting = nil }
                return waiting
            }?.resume(throwing: CancellationError())
        }
    }

    /// Asks the closures whose certificates are missing or due, compiles the policies with
    /// the new certificates, and makes that the current generation — unless the trust was
    /// replaced meanwhile.
    private func renew(_ generation: TrustGeneration) async throws -> TrustGeneration {
        let compiled = generation.compiled
        do {
            var certificates = compiled.providedCertificates
            let now = Date().timeIntervalSince1970
            for (index, policy) in compiled.policies.enumerated() {
                guard let provider = policy.clientCertificateProvider,
                    compiled.renewalDate(ofPolicyAt: index).map({ now >= $0 }) ?? false
                else { continue }
                do {
                    certificates[index] = try await provider.load()
                } catch {
                    throw CourierError(
                        kind: .invalidConfiguration,
                        message: "the client certificate closure for \(policy.authorityDescription) failed",
                        host: policy.host,
                        underlying: error
                    )
                }
            }
            if certificates == compiled.providedCertificates {
                // The closures gave the certificates in use again (an agent that has not rotated
                // yet): no new generation, which would only drop the pooled connections.
                return state.withLock { state in
                    guard state.current === generation else { return state.current }
                    state.renewal = nil
                    state.quietUntil = now + Self.renewalPause
                    return state.current
                }
            }
            let next = try CompiledTrust(policies: compiled.policies, providedCertificates: certificates)
            return try state.withLock { state in
                guard state.current === generation else { return state.current }
                state.renewal = nil
                // A renewal that gave a certificate already within its margin is not asked for
                // again at once; a first load is followed by its renewal at once.
                if !compiled.lacksProvidedCertificates, let due = next.renewalDate, due <= now {
                    state.quietUntil = now + Self.renewalPause
                }
                let renewed = try TrustGeneration(
                    number: state.count,
                    security: generation.security.replacingCompiled(next),
                    metricsFactory: metricsFactory
                )
                state.current = renewed
                state.count += 1
                return renewed
            }
        } catch {
            state.withLock { state in
                // Only the bookkeeping of the current set: a renewal of a set that was replaced
                // meanwhile leaves the new set's alone.
                guard state.current === generation else { return }
                state.renewal = nil
                state.quietUntil = Date().timeIntervalSince1970 + Self.renewalPause
            }
            throw error
        }
    }
}
