internal import CCurlShim

extension CurlTransfer {
    /// The error a transfer that libcurl ended with `code` fails with (loop thread, while the
    /// handle is attached).
    ///
    /// In order: what a callback recorded (a refused retry, a body over its limit, a failed
    /// request body); a pin mismatch or an untrusted host (CurlTransfer+TLS.swift); a proxy
    /// that refused the tunnel; otherwise libcurl's code, told apart by what had arrived.
    func error(for code: CURLcode) -> CourierError {
        if running.failure == nil, let refused = securityFailure(code) { return refused }
        var mapped =
            running.failure ?? proxyFailure(code)
            ?? CourierError(
                curlCode: code,
                detail: handle?.errorText ?? "",
                https: isHTTPS,
                inHead: !machine.hasFinalHead && running.head.statusCode > 0
            )
        if running.head.statusCode > 0 { mapped.receivedResponse = true }
        if mapped.kind == .connectTimedOut, running.deadlineComesFirst {
            // libcurl names both limits alike while connecting: the deadline fired.
            mapped = CourierError(
                kind: .timedOut,
                message: "the request's deadline passed while connecting",
                curlCode: Int(code.rawValue),
                curlDetail: mapped.curlDetail
            )
        }
        return mapped
    }

    /// A proxy that refused the tunnel (a CONNECT answered with 407, 403, 502…).
    private func proxyFailure(_ code: CURLcode) -> CourierError? {
        guard let easy else { return nil }
        var connectCode = 0
        _ = ccurl_easy_getinfo_long(easy, CURLINFO_HTTP_CONNECTCODE, &connectCode)
        guard connectCode >= 300 else { return nil }
        let reason =
            connectCode == 407
            ? "the proxy requires authentication (407)" : "the proxy refused the tunnel with status \(connectCode)"
        return CourierError(kind: .proxyFailure, message: reason, curlCode: Int(code.rawValue))
    }
}
