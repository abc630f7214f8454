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
