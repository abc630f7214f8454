// See include/CCourierTLS.h. Mechanism only: the Swift side decides which policy applies
// to which host (Sources/Courier/Security) and hands a compiled policy to these functions.
#include "CCourierTLS.h"

#include <openssl/crypto.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/pem.h>
#include <openssl/pkcs12.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509_vfy.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

struct ccourier_tls_policy {
    uint8_t *pins;                  // pin_count * CCOURIER_PIN_LENGTH bytes
    size_t pin_count;
    X509_STORE *store;              // the pinned roots, or NULL for the transfer's CA store
    int accepts_system_roots;       // set explicitly: no pins and no store verify like any client
    X509 *client_certificate;       // with client_key, or both NULL
    EVP_PKEY *client_key;
    STACK_OF(X509) *client_chain;   // may be NULL
    int audits_pins;                // a chain matching no pin is reported and accepted
};

/// One connection's verify context: its policy, where it goes, and who hears of a chain
/// that matches no pin. Kept in the SSL_CTX's ex_data and freed with it.
typedef struct ccourier_tls_connection {
    const ccourier_tls_policy *policy;
    char *host;
    long port;
    long policy_index;
    ccourier_pin_mismatch_callback callback;
    void *context;
    void (*release)(void *context);  // drops the connection's reference to `context`
} ccourier_tls_connection;

// MARK: errors

/// Writes the OpenSSL error queue's first reason after `what`, and empties the queue so
/// that libcurl never sees a stale error on this thread.
static void ccourier_describe(char *error, size_t error_size, const char *what, const char *path) {
    unsigned long code = ERR_get_error();
    char reason[256] = "";
    if (code != 0) ERR_error_string_n(code, reason, sizeof reason);
    if (error != NULL && error_size > 0) {
        if (reason[0] != '\0') {
            snprintf(error, error_size, "%s %s: %s", what, path, reason);
        } else {
            snprintf(error, error_size, "%s %s", what, path);
        }
    }
    ERR_clear_error();
}

// MARK: backend

int ccourier_tls_backend_is_openssl(const char **curl_backend, const char **linked_openssl) {
    *linked_openssl = OpenSSL_version(OPENSSL_VERSION);
    curl_version_info_data *info = curl_version_info(CURLVERSION_NOW);
    *curl_backend = info != NULL ? info->ssl_version : NULL;
    if (info == NULL || info->ssl_version == NULL || (info->features & CURL_VERSION_SSL) == 0) return 0;
    // A multi-SSL build lists inactive backends in parentheses: the active one comes first.
    const char *prefix = "OpenSSL/";
    if (strncmp(info->ssl_version, prefix, strlen(prefix)) != 0) return 0;
    unsigned long major = strtoul(info->ssl_version + strlen(prefix), NULL, 10);
    return major == OPENSSL_VERSION_MAJOR && major == OPENSSL_version_major();
}

long ccourier_tls_application_verification_error(void) {
    return X509_V_ERR_APPLICATION_VERIFICATION;
}

// MARK: SPKI digests

/// SHA-256 of the DER SubjectPublicKeyInfo of `certificate`.
static int ccourier_spki_sha256(X509 *certificate, uint8_t *digest) {
    unsigned char *der = NULL;
    int length = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(certificate), &der);
    if (length <= 0) return 0;
    unsigned int written = 0;
    int ok = EVP_Digest(der, (size_t)length, digest, &written, EVP_sha256(), NULL);
    OPENSSL_free(der);
    return ok == 1 && written == CCOURIER_PIN_LENGTH;
}

static int ccourier_matches_pin(const ccourier_tls_policy *policy, X509 *certificate) {
    uint8_t digest[CCOURIER_PIN_LENGTH];
    if (!ccourier_spki_sha256(certificate, digest)) return 0;
    for (size_t index = 0; index < policy->pin_count; index++) {
        if (memcmp(policy->pins + index * CCOURIER_PIN_LENGTH, digest, CCOURIER_PIN_LENGTH) == 0) return 1;
    }
    return 0;
}

// MARK: the verify hook

/// Verifies the peer's chain against the policy's pinned roots alone, in a context of its
/// own: the SSL_CTX's store is libcurl's (the transfer's CA bundle, shared through
/// libcurl's CA cache), so it is neither replaced nor added to. The verification
/// parameters (purpose, depth, security level, flags) are those libssl set up for the
/// handshake. The result — error or verified chain — is copied back to `store_ctx`.
static int ccourier_verify_with_pinned_roots(X509_STORE_CTX *store_ctx, X509_STORE *roots) {
    X509_STORE_CTX *own = X509_STORE_CTX_new();
    if (own == NULL ||
        !X509_STORE_CTX_init(own, roots, X509_STORE_CTX_get0_cert(store_ctx), X509_STORE_CTX_get0_untrusted(store_ctx)) ||
        !X509_VERIFY_PARAM_set1(X509_STORE_CTX_get0_param(own), X509_STORE_CTX_get0_param(store_ctx))) {
        X509_STORE_CTX_free(own);
        X509_STORE_CTX_set_error(store_ctx, X509_V_ERR_OUT_OF_MEM);
        return 0;
    }
    int verified = X509_verify_cert(own);
    if (verified > 0) {
        X509_STORE_CTX_set0_verified_chain(store_ctx, X509_STORE_CTX_get1_chain(own));
        X509_STORE_CTX_set_error(store_ctx, X509_V_OK);
    } else {
        X509_STORE_CTX_set_error(store_ctx, X509_STORE_CTX_get_error(own));
        X509_STORE_CTX_set_error_depth(store_ctx, X509_STORE_CTX_get_error_depth(own));
        verified = 0;
    }
    X509_STORE_CTX_free(own);
    return verified;
}

/// The most chain certificates whose digests a mismatch report carries.
#define CCOURIER_REPORTED_CHAIN 16

/// Hands the verified chain's digests to the connection's callback.
static void ccourier_report_mismatch(const ccourier_tls_connection *connection, X509_STORE_CTX *store_ctx) {
    if (connection == NULL || connection->callback == NULL) return;
    uint8_t digests[CCOURIER_REPORTED_CHAIN * CCOURIER_PIN_LENGTH];
    size_t count = 0;
    STACK_OF(X509) *chain = X509_STORE_CTX_get0_chain(store_ctx);
    int length = chain != NULL ? sk_X509_num(chain) : 0;
    for (int index = 0; index < length && count < CCOURIER_REPORTED_CHAIN; index++) {
        if (ccourier_spki_sha256(sk_X509_value(chain, index), digests + count * CCOURIER_PIN_LENGTH)) count += 1;
    }
    connection->callback(connection->context, connection->host, connection->port, connection->policy_index,
                         digests, count, connection->policy->audits_pins);
}

/// Replaces OpenSSL's chain verification for one handshake: the chain must verify as
/// usual — against the policy's pinned roots when it has some, otherwise against
/// libcurl's store — and then, when the policy has pins, one certificate of the VERIFIED
/// chain (leaf, intermediate or root) must match one of them. A policy with neither pins
/// nor pinned roots accepts the verified chain only when it was marked with
/// `ccourier_tls_policy_accept_system_roots`. A NULL policy refuses every chain. A chain
/// that verifies but matches no pin is reported to the connection's callback (when there
/// is a connection) and accepted when the policy audits pins. Host name verification is
/// libcurl's, after the handshake, for every policy.
static int ccourier_verify_policy(X509_STORE_CTX *store_ctx, const ccourier_tls_policy *policy,
                                  const ccourier_tls_connection *connection) {
    if (policy == NULL ||
        (policy->pin_count == 0 && policy->store == NULL && !policy->accepts_system_roots)) {
        X509_STORE_CTX_set_error(store_ctx, X509_V_ERR_APPLICATION_VERIFICATION);
        return 0;
    }
    int verified = policy->store != NULL ? ccourier_verify_with_pinned_roots(store_ctx, policy->store)
                                         : X509_verify_cert(store_ctx);
    if (verified <= 0 || policy->pin_count == 0) return verified;
    STACK_OF(X509) *chain = X509_STORE_CTX_get0_chain(store_ctx);
    int count = chain != NULL ? sk_X509_num(chain) : 0;
    for (int index = 0; index < count; index++) {
        if (ccourier_matches_pin(policy, sk_X509_value(chain, index))) return 1;
    }
    ccourier_report_mismatch(connection, store_ctx);
    if (policy->audits_pins) return 1;
    X509_STORE_CTX_set_error(store_ctx, X509_V_ERR_APPLICATION_VERIFICATION);
    return 0;
}

/// The verify hook of `ccourier_tls_apply`: its argument is the policy.
static int ccourier_verify(X509_STORE_CTX *store_ctx, void *argument) {
    return ccourier_verify_policy(store_ctx, argument, NULL);
}

/// The verify hook of `ccourier_tls_apply_to_connection`: its argument is the connection.
static int ccourier_verify_connection(X509_STORE_CTX *store_ctx, void *argument) {
    const ccourier_tls_connection *connection = argument;
    return ccourier_verify_policy(store_ctx, connection->policy, connection);
}

/// Installs the client certificate and requires peer verification with `verify` (argument
/// `argument`) as the chain check. Returns 1 on success, 0 when OpenSSL refused.
static int ccourier_install(SSL_CTX *context, const ccourier_tls_policy *policy,
                            int (*verify)(X509_STORE_CTX *, void *), void *argument) {
    // The SSL_CTX's certificate store is libcurl's and must stay so: libcurl fills and
    // caches it after this callback. Pinned roots are used in the verify hook instead.
    if (policy != NULL && policy->client_certificate != NULL && policy->client_key != NULL) {
        if (SSL_CTX_use_cert_and_key(context, policy->client_certificate, policy->client_key, policy->client_chain, 1) !=
            1) {
            ERR_clear_error();
            return 0;
        }
    }
    // Abort the handshake itself on a refused chain (libcurl would otherwise finish it and
    // check the verify result afterwards; no request byte is sent either way).
    SSL_CTX_set_verify(context, SSL_VERIFY_PEER, SSL_CTX_get_verify_callback(context));
    SSL_CTX_set_cert_verify_callback(context, verify, argument);
    return 1;
}

int ccourier_tls_apply(void *ssl_ctx, const ccourier_tls_policy *policy) {
    return ccourier_install(ssl_ctx, policy, ccourier_verify, (void *)policy);
}

// MARK: per-connection context

static int ccourier_connection_index = -1;
static pthread_once_t ccourier_connection_once = PTHREAD_ONCE_INIT;

static void ccourier_connection_free(void *parent, void *pointer, CRYPTO_EX_DATA *data, int index, long argl,
                                     void *argp) {
    (void)parent, (void)data, (void)index, (void)argl, (void)argp;
    ccourier_tls_connection *connection = pointer;
    if (connection == NULL) return;
    free(connection->host);
    if (connection->release != NULL) connection->release(connection->context);
    free(connection);
}

static void ccourier_connection_register(void) {
    ccourier_connection_index =
        SSL_CTX_get_ex_new_index(0, NULL, NULL, NULL, ccourier_connection_free);
}

int ccourier_tls_apply_to_connection(void *ssl_ctx, const ccourier_tls_policy *policy, const char *host,
                                     long port, long policy_index, ccourier_pin_mismatch_callback callback,
                                     void *context, void (*release)(void *context)) {
    pthread_once(&ccourier_connection_once, ccourier_connection_register);
    ccourier_tls_connection *connection = ccourier_connection_index < 0 ? NULL : calloc(1, sizeof(ccourier_tls_connection));
    char *name = connection != NULL ? strdup(host) : NULL;
    if (connection == NULL || name == NULL) {
        free(connection);
        if (release != NULL) release(context);
        return 0;
    }
    *connection = (ccourier_tls_connection){policy, name, port, policy_index, callback, context, release};
    // The SSL_CTX is the connection's own (libcurl makes one per connection): it owns the
    // context from here on and frees it when the connection ends.
    if (!SSL_CTX_set_ex_data(ssl_ctx, ccourier_connection_index, connection)) {
        ccourier_connection_free(NULL, connection, NULL, 0, 0, NULL);
        ERR_clear_error();
        return 0;
    }
    return ccourier_install(ssl_ctx, policy, ccourier_verify_connection, connection);
}

// MARK: connection partitions

static char *ccourier_default_ciphers = NULL;
static pthread_once_t ccourier_default_ciphers_once = PTHREAD_ONCE_INIT;

/// The TLS 1.2-and-below ciphers of `context`, by name, in order, joined with ':'; NULL when
/// there are none or memory ran out. The caller frees it.
static char *ccourier_cipher_names(SSL_CTX *context) {
    STACK_OF(SSL_CIPHER) *ciphers = context != NULL ? SSL_CTX_get_ciphers(context) : NULL;
    size_t capacity = 1, length = 0;
    int count = ciphers != NULL ? sk_SSL_CIPHER_num(ciphers) : 0;
    for (int index = 0; index < count; index++) {
        capacity += strlen(SSL_CIPHER_get_name(sk_SSL_CIPHER_value(ciphers, index))) + 1;
    }
    char *list = calloc(capacity, 1);
    for (int index = 0; list != NULL && index < count; index++) {
        const SSL_CIPHER *cipher = sk_SSL_CIPHER_value(ciphers, index);
        // TLS 1.3 suites are configured apart (CURLOPT_TLS13_CIPHERS) and are not cipher-list names.
        if (strcmp(SSL_CIPHER_get_version(cipher), "TLSv1.3") == 0) continue;
        const char *name = SSL_CIPHER_get_name(cipher);
        if (length > 0) list[length++] = ':';
        memcpy(list + length, name, strlen(name));
        length += strlen(name);
    }
    if (list != NULL && length == 0) {
        free(list);
        list = NULL;
    }
    return list;
}

/// Reads the TLS 1.2-and-below cipher list a new client SSL_CTX gets. When OpenSSL's
/// `DEFAULT` names exactly those ciphers in the same order (no system configuration changed
/// them), the list is `DEFAULT`: libcurl compares the list, byte by byte without regard to
/// case, for every connection it considers reusing, and `DEFAULT` is a few bytes where the
/// names are about a kilobyte.
static void ccourier_read_default_ciphers(void) {
    SSL_CTX *context = SSL_CTX_new(TLS_client_method());
    char *list = ccourier_cipher_names(context);
    SSL_CTX_free(context);
    SSL_CTX *keyword = list != NULL ? SSL_CTX_new(TLS_client_method()) : NULL;
    if (keyword != NULL && SSL_CTX_set_cipher_list(keyword, "DEFAULT") == 1) {
        char *named = ccourier_cipher_names(keyword);
        if (named != NULL && strcmp(named, list) == 0) {
            char *short_list = strdup("DEFAULT");
            if (short_list != NULL) {
                free(list);
                list = short_list;
            }
        }
        free(named);
    }
    SSL_CTX_free(keyword);
    ERR_clear_error();
    ccourier_default_ciphers = list;
}

int ccourier_tls_generation_cipher_list(uint64_t generation, char *buffer, size_t size) {
    pthread_once(&ccourier_default_ciphers_once, ccourier_read_default_ciphers);
    if (ccourier_default_ciphers == NULL) return 0;
    int written = snprintf(buffer, size, "%s:!COURIER-TRUST-%llu", ccourier_default_ciphers,
                           (unsigned long long)generation);
    return written > 0 && (size_t)written < size;
}

// MARK: policies

ccourier_tls_policy *ccourier_tls_policy_create(void) {
    return calloc(1, sizeof(ccourier_tls_policy));
}

void ccourier_tls_policy_free(ccourier_tls_policy *policy) {
    if (policy == NULL) return;
    free(policy->pins);
    X509_STORE_free(policy->store);
    X509_free(policy->client_certificate);
    EVP_PKEY_free(policy->client_key);
    sk_X509_pop_free(policy->client_chain, X509_free);
    free(policy);
}

int ccourier_tls_policy_add_pin(ccourier_tls_policy *policy, const uint8_t *digest) {
    uint8_t *pins = realloc(policy->pins, (policy->pin_count + 1) * CCOURIER_PIN_LENGTH);
    if (pins == NULL) return 0;
    memcpy(pins + policy->pin_count * CCOURIER_PIN_LENGTH, digest, CCOURIER_PIN_LENGTH);
    policy->pins = pins;
    policy->pin_count += 1;
    return 1;
}

void ccourier_tls_policy_accept_system_roots(ccourier_tls_policy *policy) {
    policy->accepts_system_roots = 1;
}

void ccourier_tls_policy_audit_pins(ccourier_tls_policy *policy) {
    policy->audits_pins = 1;
}

int ccourier_tls_policy_client_not_after(const ccourier_tls_policy *policy, int64_t *seconds) {
    if (policy->client_certificate == NULL) return 0;
    const ASN1_TIME *not_after = X509_get0_notAfter(policy->client_certificate);
    ASN1_TIME *epoch = ASN1_TIME_set(NULL, 0);
    int days = 0, rest = 0;
    int ok = epoch != NULL && not_after != NULL && ASN1_TIME_diff(&days, &rest, epoch, not_after) == 1;
    ASN1_TIME_free(epoch);
    ERR_clear_error();
    if (!ok) return 0;
    *seconds = (int64_t)days * 86400 + rest;
    return 1;
}

int ccourier_tls_policy_client_sha256(const ccourier_tls_policy *policy, uint8_t *digest) {
    if (policy->client_certificate == NULL) return 0;
    unsigned int length = 0;
    int ok = X509_digest(policy->client_certificate, EVP_sha256(), digest, &length) == 1 && length == 32;
    ERR_clear_error();
    return ok;
}

int ccourier_tls_policy_set_ca_bundle(ccourier_tls_policy *policy, const char *path, char *error,
                                      size_t error_size) {
    X509_STORE *store = X509_STORE_new();
    if (store == NULL) {
        ccourier_describe(error, error_size, "cannot allocate a certificate store for", path);
        return 0;
    }
    X509_LOOKUP *lookup = X509_STORE_add_lookup(store, X509_LOOKUP_file());
    int loaded = lookup != NULL ? X509_load_cert_crl_file(lookup, path, X509_FILETYPE_PEM) : 0;
    if (loaded <= 0) {
        ccourier_describe(error, error_size, "cannot load a CA certificate from", path);
        X509_STORE_free(store);
        return 0;
    }
    // As libcurl does for its own store: a CA of the bundle may be an intermediate.
    X509_STORE_set_flags(store, X509_V_FLAG_PARTIAL_CHAIN | X509_V_FLAG_TRUSTED_FIRST);
    X509_STORE_free(policy->store);
    policy->store = store;
    ERR_clear_error();
    return 1;
}

/// Supplies the key's password; with none, refuses (OpenSSL would otherwise prompt on the terminal).
static int ccourier_password(char *buffer, int size, int writing, void *userdata) {
    (void)writing;
    const char *password = userdata;
    if (password == NULL || size <= 0) return 0;
    size_t length = strlen(password);
    if (length > (size_t)size) return 0;
    memcpy(buffer, password, length);
    return (int)length;
}

int ccourier_tls_policy_set_client_certificate(ccourier_tls_policy *policy, const char *certificate_path,
                                               const char *key_path, const char *password, char *error,
                                               size_t error_size) {
    BIO *bio = BIO_new_file(certificate_path, "r");
    X509 *certificate = bio != NULL ? PEM_read_bio_X509(bio, NULL, ccourier_password, NULL) : NULL;
    if (certificate == NULL) {
        ccourier_describe(error, error_size, "cannot read a PEM client certificate from", certificate_path);
        BIO_free(bio);
        return 0;
    }
    STACK_OF(X509) *chain = sk_X509_new_null();
    X509 *extra;
    while (chain != NULL && (extra = PEM_read_bio_X509(bio, NULL, ccourier_password, NULL)) != NULL) {
        if (!sk_X509_push(chain, extra)) X509_free(extra);
    }
    BIO_free(bio);
    ERR_clear_error();  // the end of the file ends the loop with an error

    BIO *key_bio = BIO_new_file(key_path, "r");
    EVP_PKEY *key = key_bio != NULL ? PEM_read_bio_PrivateKey(key_bio, NULL, ccourier_password, (void *)password) : NULL;
    BIO_free(key_bio);
    if (key == NULL) {
        ccourier_describe(error, error_size,
                          password != NULL ? "cannot read or decrypt the PEM private key (is the password right?)"
                                           : "cannot read the PEM private key (is it encrypted? give its password)",
                          key_path);
        X509_free(certificate);
        sk_X509_pop_free(chain, X509_free);
        return 0;
    }
    if (X509_check_private_key(certificate, key) != 1) {
        ccourier_describe(error, error_size, "the private key does not belong to the client certificate", certificate_path);
        X509_free(certificate);
        EVP_PKEY_free(key);
        sk_X509_pop_free(chain, X509_free);
        return 0;
    }
    X509_free(policy->client_certificate);
    EVP_PKEY_free(policy->client_key);
    sk_X509_pop_free(policy->client_chain, X509_free);
    policy->client_certificate = certificate;
    policy->client_key = key;
    policy->client_chain = chain;
    ERR_clear_error();
    return 1;
}

int ccourier_tls_policy_set_client_pkcs12(ccourier_tls_policy *policy, const char *path, const char *password,
                                          char *error, size_t error_size) {
    BIO *bio = BIO_new_file(path, "rb");
    PKCS12 *p12 = bio != NULL ? d2i_PKCS12_bio(bio, NULL) : NULL;
    BIO_free(bio);
    if (p12 == NULL) {
        ccourier_describe(error, error_size, "cannot read a PKCS#12 file (missing, unreadable or damaged)", path);
        ERR_clear_error();
        return 0;
    }
    if (PKCS12_verify_mac(p12, password, password != NULL ? -1 : 0) != 1 &&
        !(password != NULL && password[0] == 0 && PKCS12_verify_mac(p12, NULL, 0) == 1)) {
        ccourier_describe(error, error_size,
                          password != NULL ? "the PKCS#12 password does not match (or the file is damaged)"
                                           : "the PKCS#12 file is protected by a password; give it",
                          path);
        PKCS12_free(p12);
        ERR_clear_error();
        return 0;
    }
    X509 *certificate = NULL;
    EVP_PKEY *key = NULL;
    STACK_OF(X509) *chain = NULL;
    int parsed = PKCS12_parse(p12, password, &key, &certificate, &chain);
    PKCS12_free(p12);
    if (parsed != 1 || certificate == NULL || key == NULL) {
        ccourier_describe(error, error_size,
                          parsed != 1 ? "cannot decrypt the PKCS#12 file (is the password right?)"
                                      : "the PKCS#12 file holds no certificate with its private key",
                          path);
        X509_free(certificate);
        EVP_PKEY_free(key);
        sk_X509_pop_free(chain, X509_free);
        ERR_clear_error();
        return 0;
    }
    if (X509_check_private_key(certificate, key) != 1) {
        ccourier_describe(error, error_size, "the private key of the PKCS#12 file does not belong to its certificate",
                          path);
        X509_free(certificate);
        EVP_PKEY_free(key);
        sk_X509_pop_free(chain, X509_free);
        ERR_clear_error();
        return 0;
    }
    X509_free(policy->client_certificate);
    EVP_PKEY_free(policy->client_key);
    sk_X509_pop_free(policy->client_chain, X509_free);
    policy->client_certificate = certificate;
    policy->client_key = key;
    policy->client_chain = chain;
    ERR_clear_error();
    return 1;
}

// MARK: pins from files

int ccourier_spki_sha256_from_file(const char *path, uint8_t *digests, size_t capacity, size_t *count, char *error,
                                   size_t error_size) {
    *count = 0;
    BIO *bio = BIO_new_file(path, "rb");
    if (bio == NULL) {
        ccourier_describe(error, error_size, "cannot open", path);
        return 0;
    }
    X509 *certificate;
    while (*count < capacity && (certificate = PEM_read_bio_X509(bio, NULL, ccourier_password, NULL)) != NULL) {
        int ok = ccourier_spki_sha256(certificate, digests + *count * CCOURIER_PIN_LENGTH);
        X509_free(certificate);
        if (!ok) {
            ccourier_describe(error, error_size, "cannot hash the public key of a certificate in", path);
            BIO_free(bio);
            return 0;
        }
        *count += 1;
    }
    ERR_clear_error();
    if (*count == 0) {
        // Not PEM: try one DER certificate.
        (void)BIO_reset(bio);
        certificate = d2i_X509_bio(bio, NULL);
        if (certificate != NULL) {
            int ok = ccourier_spki_sha256(certificate, digests);
            X509_free(certificate);
            if (ok) *count = 1;
        }
    }
    BIO_free(bio);
    if (*count == 0) {
        ccourier_describe(error, error_size, "no PEM or DER certificate in", path);
        return 0;
    }
    ERR_clear_error();
    return 1;
}

// MARK: libcurl

CURLcode ccurl_easy_setopt_ssl_ctx_function(CURL *handle, ccurl_ssl_ctx_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_SSL_CTX_FUNCTION, callback);
}
