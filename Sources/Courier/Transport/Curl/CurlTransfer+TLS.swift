internal import CCurlShim

extension CurlTransfer {
    /// Applies the TLS policy to an HTTPS transfer (or one through a proxy).
    ///
    /// Peer and host name verification stay on: libcurl verifies both by default and
    /// nothing here turns them off.
    func configureTLS(_ easy: UnsafeMutableRawPointer, transport: CurlTransport.Configuration) throws {
        let version = transport.minimumTLSVersion == .v1_3 ? CURL_SSLVERSION_TLSv1_3 : CURL_SSLVERSION_TLSv1_2
        try set(easy, CURLOPT_SSLVERSION, Int(version))
        if let bundle = transport.trustedCertificateBundlePath {
            try set(easy, CURLOPT_CAINFO, bundle)
            try set(easy, CURLOPT_CAPATH, nil)
        }
    }
}
