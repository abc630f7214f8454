// Reading a server's verified certificate chain: a TLS handshake of its own, with OpenSSL,
// that verifies the chain and the host name and hands back each certificate's subject,
// issuer, expiry and SPKI SHA-256 digest. Nothing is sent after the handshake.
#ifndef CCOURIER_PEER_CHAIN_H
#define CCOURIER_PEER_CHAIN_H

#include <stddef.h>
#include <stdint.h>

#pragma clang assume_nonnull begin

/// One certificate of a verified chain.
typedef struct ccourier_peer_certificate {
    char subject[512];       // RFC 2253, truncated if longer
    char issuer[512];        // RFC 2253, truncated if longer
    int64_t not_after;       // seconds since 1970, UTC
    uint8_t spki_sha256[32]; // SHA-256 of the DER SubjectPublicKeyInfo
} ccourier_peer_certificate;

/// What `ccourier_peer_chain` ended with.
typedef enum ccourier_peer_chain_status {
    CCOURIER_PEER_CHAIN_OK = 0,
    CCOURIER_PEER_CHAIN_UNRESOLVED = 1,    // the host name did not resolve
    CCOURIER_PEER_CHAIN_UNREACHABLE = 2,   // no address accepted a TCP connection
    CCOURIER_PEER_CHAIN_TIMED_OUT = 3,     // connecting or the handshake took too long
    CCOURIER_PEER_CHAIN_HANDSHAKE = 4,     // the TLS handshake failed for another reason
    CCOURIER_PEER_CHAIN_UNVERIFIED = 5,    // the chain or the host name did not verify
} ccourier_peer_chain_status;

/// Connects to `host`:`port`, completes a TLS (≥ 1.2) handshake with SNI, verifies the chain
/// against `ca_bundle` (a PEM file; NULL for OpenSSL's default paths) and the certificate
/// against `host` (a name or an IP address), and writes up to `capacity` certificates of the
/// verified chain, leaf first, with their number in `count`. Blocks for at most about
/// `timeout_ms` per step. On failure writes a reason into `error`.
ccourier_peer_chain_status ccourier_peer_chain(const char *host, int port, const char *_Nullable ca_bundle,
                                               int timeout_ms, ccourier_peer_certificate *certificates,
                                               size_t capacity, size_t *count, char *error, size_t error_size);

#pragma clang assume_nonnull end

#endif
