// TLS mechanism for Courier's trust policies: an OpenSSL certificate-verify hook that
// matches SPKI SHA-256 pins against every certificate of the VERIFIED chain, pinned CA
// stores, and client certificates, installed through CURLOPT_SSL_CTX_FUNCTION.
//
// This header does not include OpenSSL: every OpenSSL object is an opaque pointer, so
// Swift never parses OpenSSL's headers. Which policy applies to which host is decided in
// Swift (Sources/Courier/Security); the C code here only carries a policy out.
#ifndef CCOURIER_TLS_H
#define CCOURIER_TLS_H

#include <curl/curl.h>
#include <stddef.h>
#include <stdint.h>

#pragma clang assume_nonnull begin

/// The length of an SPKI SHA-256 digest.
#define CCOURIER_PIN_LENGTH 32

/// A compiled trust policy: pins, an optional pinned CA store, an optional client
/// certificate, or — marked explicitly — the transfer's CA store without pins. Immutable
/// once built; freed with `ccourier_tls_policy_free`.
typedef struct ccourier_tls_policy ccourier_tls_policy;

// MARK: backend

/// Whether libcurl's TLS backend is OpenSSL with the same major version as the OpenSSL
/// this shim is linked against: only then can the SSL_CTX that libcurl hands to the
/// CURLOPT_SSL_CTX_FUNCTION callback be used. Writes libcurl's `ssl_version` string (or
/// NULL) and the linked OpenSSL's version text.
int ccourier_tls_backend_is_openssl(const char *_Nullable *_Nonnull curl_backend,
                                    const char *_Nullable *_Nonnull linked_openssl);

/// X509_V_ERR_APPLICATION_VERIFICATION: the verify result the hook leaves when it refuses
/// a verified chain (no pin matched, or the host has no policy).
long ccourier_tls_application_verification_error(void);

// MARK: policies

/// Writes the SHA-256 digest of the policy's client certificate (its DER encoding: the
/// `x5t#S256` a certificate-bound token carries) to `digest` (32 bytes). Returns 1, or 0
/// when the policy has no client certificate.
int ccourier_tls_policy_client_sha256(const ccourier_tls_policy *policy, uint8_t *digest);

/// A new, empty policy (no pins, no CA store, no client certificate), or NULL when out of memory.
ccourier_tls_policy *_Nullable ccourier_tls_policy_create(void);
/// Frees a policy and the OpenSSL objects it holds.
void ccourier_tls_policy_free(ccourier_tls_policy *_Nullable policy);
/// Adds an SPKI SHA-256 pin (32 bytes). Returns 0 when out of memory.
int ccourier_tls_policy_add_pin(ccourier_tls_policy *policy, const uint8_t *digest);
/// Lets a policy without pins and without a CA bundle accept a chain that verifies against
/// the transfer's CA store (the system's, or libcurl's CURLOPT_CAINFO). Without this call
/// such a policy refuses every chain, so an empty policy never trusts by accident.
void ccourier_tls_policy_accept_system_roots(ccourier_tls_policy *policy);
/// Makes a policy with pins report a verified chain that matches none of its pins and let
/// the connection proceed, instead of refusing it (pin audit mode). The chain must still
/// verify, against the policy's pinned roots or the transfer's CA store; host name
/// verification is unaffected.
void ccourier_tls_policy_audit_pins(ccourier_tls_policy *policy);
/// The end of the client certificate's validity, in seconds since 1970, written to
/// `seconds`. Returns 0 when the policy has no client certificate.
int ccourier_tls_policy_client_not_after(const ccourier_tls_policy *policy, int64_t *seconds);
/// Loads a PEM bundle as the only trusted roots of the policy. Returns 0 and writes a
/// reason into `error` on failure (unreadable file, no certificate in it).
int ccourier_tls_policy_set_ca_bundle(ccourier_tls_policy *policy, const char *path,
                                      char *error, size_t error_size);
/// Loads a PEM client certificate (optionally followed by its chain) and its PEM private
/// key, decrypting the key with `password` when given. Returns 0 and writes a reason into
/// `error` on failure (unreadable file, wrong password, key not matching the certificate).
int ccourier_tls_policy_set_client_certificate(ccourier_tls_policy *policy, const char *certificate_path,
                                               const char *key_path, const char *_Nullable password,
                                               char *error, size_t error_size);

/// Loads a PKCS#12 file (certificate, private key and optional chain), decrypting it with
/// `password` (NULL or empty for none). Returns 0 and writes a reason into `error` on
/// failure (unreadable or damaged file, wrong password, no certificate or key in it).
int ccourier_tls_policy_set_client_pkcs12(ccourier_tls_policy *policy, const char *path,
                                          const char *_Nullable password, char *error, size_t error_size);

/// Applies `policy` to the SSL_CTX libcurl is setting up for a new connection: installs
/// the client certificate, requires peer verification, and installs the verify hook, which
/// verifies against the policy's pinned roots (when it has some; the SSL_CTX's own store
/// stays libcurl's) and then matches the pins; a system-roots policy needs the verified
/// chain only. With a NULL policy, or an empty one not marked system-roots, the hook
/// refuses every chain (fail closed). Returns 1 on success, 0 when OpenSSL refused.
int ccourier_tls_apply(void *ssl_ctx, const ccourier_tls_policy *_Nullable policy);

/// Called in the handshake of a connection whose verified chain matches none of the
/// policy's pins, with the connection's host and port, the policy's index (as given to
/// `ccourier_tls_apply_to_connection`), the SPKI SHA-256 digests of the verified chain
/// (leaf first, `count` digests of 32 bytes), and whether the policy audits pins (the
/// connection then proceeds) or enforces them (it is refused).
typedef void (*ccourier_pin_mismatch_callback)(void *_Nullable context, const char *host, long port,
                                               long policy_index, const uint8_t *digests, size_t count,
                                               int audited);

/// `ccourier_tls_apply` for one connection to `host` and `port`: the same checks, and a
/// chain that verifies but matches no pin is handed to `callback` (when given) before it is
/// refused, or, for a policy that audits pins, accepted. The connection's details are kept
/// with the SSL_CTX and freed with it. The connection owns one reference to `context`, which
/// must keep `policy` alive: `release` is called with it when the SSL_CTX is freed, or at once
/// when this call fails. Returns 1 on success, 0 when out of memory or when OpenSSL refused.
int ccourier_tls_apply_to_connection(void *ssl_ctx, const ccourier_tls_policy *policy, const char *host,
                                     long port, long policy_index,
                                     ccourier_pin_mismatch_callback _Nullable callback, void *_Nullable context,
                                     void (*_Nullable release)(void *_Nullable context));

// MARK: connection partitions

/// The OpenSSL cipher list (TLS 1.2 and below) a new SSL_CTX gets by default, as
/// configured for this process (`DEFAULT` when that keyword names the same ciphers in the
/// same order, else the ciphers' names), followed by `:!COURIER-TRUST-<generation>`: a name OpenSSL
/// does not know and ignores. Given as CURLOPT_SSL_CIPHER_LIST, it leaves the ciphers as
/// they are and makes libcurl keep connections and TLS sessions of different trust
/// generations apart (libcurl reuses a connection or a session only when the cipher lists
/// match). Writes at most `size` bytes including the NUL; returns 0 when the text does not
/// fit or when the default list is empty.
int ccourier_tls_generation_cipher_list(uint64_t generation, char *buffer, size_t size);

// MARK: pins from certificate files

/// Computes base64-free SPKI SHA-256 digests of the certificates in a PEM file (every
/// certificate, in file order) or a DER file (one certificate). Writes up to `capacity`
/// digests of 32 bytes each to `digests` and their count to `count`. Returns 0 and writes a
/// reason into `error` when the file cannot be read or holds no certificate.
int ccourier_spki_sha256_from_file(const char *path, uint8_t *digests, size_t capacity, size_t *count,
                                   char *error, size_t error_size);

// MARK: libcurl

typedef CURLcode (*ccurl_ssl_ctx_callback)(CURL *_Nullable handle, void *_Nullable ssl_ctx, void *_Nullable userdata);

/// CURLOPT_SSL_CTX_FUNCTION, typed.
CURLcode ccurl_easy_setopt_ssl_ctx_function(CURL *handle, ccurl_ssl_ctx_callback _Nullable callback);

#pragma clang assume_nonnull end

#endif
