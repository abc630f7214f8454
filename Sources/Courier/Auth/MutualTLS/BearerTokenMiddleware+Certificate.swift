import HTTPTypes
import Logging

extension MiddlewareContext {
    /// This context for sending `token`: a token bound to a client certificate requires the
    /// connection to present it (``CertificateBinding/require(_:)``); any other token leaves
    /// the context as it is.
    ///
    /// - Parameter token: The token the request carries.
    /// - Returns: The context to send with.
    func presenting(certificateOf token: BrokeredToken) -> MiddlewareContext {
        guard let thumbprint = token.token.certificateThumbprint else {
            guard options.certificateBinding != nil else { return self }
            var context = self
            context.options.certificateBinding = nil
            return context
        }
        var context = self
        context.options.certificateBinding = .require(CertificateDigest(thumbprint: thumbprint))
        return context
    }
}

extension BearerTokenMiddleware {
    /// Answers a send the transport refused because the connection would present another
    /// client certificate than the one the token is bound to (RFC 8705 §3): nothing went out.
    /// The token is renewed — the new one is bound to the certificate the transport presents
    /// now, after a rotation — and the request sent once more.
    ///
    /// When the new token does not match either (the token endpoint and the resource's host
    /// see different certificates), the request fails with
    /// ``CourierError/Kind/invalidConfiguration``, and the token is never sent.
    ///
    /// Never inlined: requests that carry no bound token do not pay for its frame.
    @inline(never)
    func resend(
        _ request: HTTPRequest,
        refused mismatch: ClientCertificateMismatch,
        for sent: BrokeredToken,
        from broker: TokenBroker,
        body: RequestBody?,
        context: MiddlewareContext,
        next: Next
    ) async throws -> Response {
        context.logger.notice(
            "the \(broker.level) token is bound to a client certificate the connection to \(mismatch.host) does not present: renewing it"
        )
        let renewed = try await broker.tokenRejected(sent)
        var retry = context
        retry.attempt += 1
        do {
            return try await send(request, with: renewed, from: broker, body: body, context: retry, next: next)
        } catch let again as ClientCertificateMismatch {
            let presented = again.presented == nil ? "no client certificate" : "another client certificate"
            throw CourierError(
                kind: .invalidConfiguration,
                message: "the \(broker.level) token is bound to the client certificate its token request presented, "
                    + "and the transport presents \(presented) to \(again.host); a certificate-bound token goes only "
                    + "over connections presenting its certificate, so give both hosts the same one",
                host: again.host
            )
            .with(level: broker.level)
        }
    }
}
