import HTTPTypes
import Logging

extension BearerTokenMiddleware {
    /// Sends `request` with a token bound to a DPoP key (RFC 9449 §7): `Authorization: DPoP
    /// <token>` and a proof of that key made for this one send — its method, its URL, the
    /// token's hash and the origin's latest nonce.
    ///
    /// - A 401 `DPoP error="use_dpop_nonce"` with a `DPoP-Nonce` is answered once, with a new
    ///   proof carrying the nonce, when the body can be sent again; a second one goes to the
    ///   caller. The nonce of any response from the origin is remembered for the next proof.
    /// - A 401 that asks for a new token (`DPoP error="invalid_token"`, or no error) renews
    ///   the token once, as for bearer tokens, and resends with a proof for the new token.
    ///   `invalid_dpop_proof` renews nothing: it goes to the caller.
    /// - A response that came through a redirect was sent without the proof and the token
    ///   (a hop never carries a proof made for another URL): its 401 renews nothing.
    /// - A token bound to a key the client does not hold is never sent.
    ///
    /// Never inlined: bearer requests do not pay for its frame.
    @inline(never)
    func sendProven(
        _ request: HTTPRequest,
        with sent: BrokeredToken,
        from broker: TokenBroker,
        body: RequestBody?,
        context: MiddlewareContext,
        next: Next
    ) async throws -> Response {
        let nonces = broker.endpoint.nonces
        guard let origin = DPoPProof.origin(of: request) else {
            throw CourierError.invalidURL("a request with a DPoP-bound token needs an absolute URL")
        }
        let target = DPoPProof.targetURI(of: request, at: origin)
        func authorize(_ token: BrokeredToken, nonce: String?) throws -> HTTPRequest {
            var authorized = request
            authorized.headerFields[.authorization] = token.authorizationValue
            let key: DPoPKey
            switch broker.binding(of: token.token) {
            case .key(let bound): key = bound
            case .bearer: return authorized  // renewed into a bearer token, which the client accepts
            case .unusable: throw Self.unusable(token, by: broker)
            }
            authorized.headerFields[.dpop] = try DPoPProof.make(
                key: key,
                method: request.method,
                targetURI: target,
                accessToken: token.token.accessToken,
                nonce: nonce
            )
            return authorized
        }
        var current = sent
        var attempt = context
        var response = try await next(
            try authorize(current, nonce: nonces.nonce(for: origin)),
            body,
            attempt.presenting(certificateOf: current)
        )
        let replayable = body?.isReplayable ?? true
        var answeredNonce = false
        var renewed = false
        while response.status.code == 401, replayable, response.isFromOrigin(of: request),
            response.metrics?.redirectChain.isEmpty ?? true
        {
            let fields = response.headerFields
            if !answeredNonce, AuthenticationChallenge.asksForDPoPNonce(fields),
                nonces.remember(from: fields, origin: origin) != nil
            {
                answeredNonce = true
                attempt.logger.debug("401 use_dpop_nonce: sending again with the server's nonce")
            } else if !renewed, AuthenticationChallenge.asksForNewToken(fields) {
                renewed = true
                answeredNonce = false
                current = try await broker.tokenRejected(current)
                attempt.logger.debug(
                    "401 for \(broker.level) token v\(sent.version); resending with v\(current.version)"
                )
            } else {
                return response
            }
            attempt.attempt += 1
            response = try await next(
                try authorize(current, nonce: nonces.nonce(for: origin)),
                body,
                attempt.presenting(certificateOf: current)
            )
        }
        if response.isFromOrigin(of: request) { nonces.remember(from: response.headerFields, origin: origin) }
        return response
    }
}
