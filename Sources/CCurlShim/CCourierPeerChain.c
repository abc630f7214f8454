// See include/CCourierPeerChain.h.
#include "CCourierPeerChain.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>
#include <openssl/x509v3.h>
#include <poll.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <time.h>
#include <unistd.h>

static ccourier_peer_chain_status ccourier_fail(ccourier_peer_chain_status status, char *error, size_t size,
                                                const char *what, const char *detail) {
    snprintf(error, size, "%s%s%s", what, detail != NULL && detail[0] != 0 ? ": " : "", detail != NULL ? detail : "");
    return status;
}

/// A connected, blocking socket with send and receive timeouts, or -1 with `status` set.
static int ccourier_connect(const char *host, int port, int timeout_ms, ccourier_peer_chain_status *status,
                            char *error, size_t error_size) {
    char service[16];
    snprintf(service, sizeof service, "%d", port);
    struct addrinfo hints = {0};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    struct addrinfo *addresses = NULL;
    int resolved = getaddrinfo(host, service, &hints, &addresses);
    if (resolved != 0) {
        *status = ccourier_fail(CCOURIER_PEER_CHAIN_UNRESOLVED, error, error_size, "could not resolve the host",
                                gai_strerror(resolved));
        return -1;
    }
    int fd = -1;
    *status = CCOURIER_PEER_CHAIN_UNREACHABLE;
    int last_error = ECONNREFUSED;
    for (struct addrinfo *address = addresses; address != NULL && fd < 0; address = address->ai_next) {
        int candidate = socket(address->ai_family, address->ai_socktype | SOCK_CLOEXEC, address->ai_protocol);
        if (candidate < 0) continue;
        int flags = fcntl(candidate, F_GETFL, 0);
        fcntl(candidate, F_SETFL, flags | O_NONBLOCK);
        int connected = connect(candidate, address->ai_addr, address->ai_addrlen);
        if (connected != 0 && errno == EINPROGRESS) {
            struct pollfd poller = {.fd = candidate, .events = POLLOUT};
            int ready = poll(&poller, 1, timeout_ms);
            if (ready == 0) {
                last_error = ETIMEDOUT;
            } else {
                int so_error = 0;
                socklen_t length = sizeof so_error;
                getsockopt(candidate, SOL_SOCKET, SO_ERROR, &so_error, &length);
                if (so_error == 0) connected = 0;
                else last_error = so_error;
            }
        } else if (connected != 0) {
            last_error = errno;
        }
        if (connected == 0) {
            fcntl(candidate, F_SETFL, flags);
            struct timeval limit = {.tv_sec = timeout_ms / 1000, .tv_usec = (timeout_ms % 1000) * 1000};
            setsockopt(candidate, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
            setsockopt(candidate, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
            fd = candidate;
        } else {
            close(candidate);
        }
    }
    freeaddrinfo(addresses);
    if (fd < 0) {
        *status = last_error == ETIMEDOUT ? CCOURIER_PEER_CHAIN_TIMED_OUT : CCOURIER_PEER_CHAIN_UNREACHABLE;
        ccourier_fail(*status, error, error_size, "could not connect", strerror(last_error));
    }
    return fd;
}

static void ccourier_name(X509_NAME *name, char *buffer, size_t size) {
    buffer[0] = 0;
    BIO *bio = BIO_new(BIO_s_mem());
    if (bio == NULL) return;
    X509_NAME_print_ex(bio, name, 0, XN_FLAG_RFC2253 & ~ASN1_STRFLGS_ESC_MSB);
    int length = BIO_read(bio, buffer, (int)size - 1);
    buffer[length > 0 ? length : 0] = 0;
    BIO_free(bio);
}

static int ccourier_describe_certificate(X509 *certificate, ccourier_peer_certificate *out) {
    ccourier_name(X509_get_subject_name(certificate), out->subject, sizeof out->subject);
    ccourier_name(X509_get_issuer_name(certificate), out->issuer, sizeof out->issuer);
    struct tm expiry = {0};
    if (ASN1_TIME_to_tm(X509_get0_notAfter(certificate), &expiry) != 1) return 0;
    out->not_after = (int64_t)timegm(&expiry);
    // The digest of the whole DER SubjectPublicKeyInfo, algorithm included, as pins are defined.
    unsigned char *der = NULL;
    int der_length = i2d_X509_PUBKEY(X509_get_X509_PUBKEY(certificate), &der);
    if (der_length <= 0) return 0;
    unsigned int length = 0;
    int ok = EVP_Digest(der, (size_t)der_length, out->spki_sha256, &length, EVP_sha256(), NULL) == 1 && length == 32;
    OPENSSL_free(der);
    return ok;
}

ccourier_peer_chain_status ccourier_peer_chain(const char *host, int port, const char *ca_bundle, int timeout_ms,
                                               ccourier_peer_certificate *certificates, size_t capacity,
                                               size_t *count, char *error, size_t error_size) {
    *count = 0;
    ccourier_peer_chain_status status = CCOURIER_PEER_CHAIN_OK;
    SSL_CTX *context = SSL_CTX_new(TLS_client_method());
    if (context == NULL) return ccourier_fail(CCOURIER_PEER_CHAIN_HANDSHAKE, error, error_size, "out of memory", NULL);
    SSL_CTX_set_min_proto_version(context, TLS1_2_VERSION);
    SSL_CTX_set_verify(context, SSL_VERIFY_PEER, NULL);
    int loaded = ca_bundle != NULL ? SSL_CTX_load_verify_locations(context, ca_bundle, NULL)
                                   : SSL_CTX_set_default_verify_paths(context);
    if (loaded != 1) {
        SSL_CTX_free(context);
        ERR_clear_error();
        return ccourier_fail(CCOURIER_PEER_CHAIN_UNVERIFIED, error, error_size, "cannot load the CA bundle", ca_bundle);
    }
    int fd = ccourier_connect(host, port, timeout_ms, &status, error, error_size);
    if (fd < 0) {
        SSL_CTX_free(context);
        return status;
    }
    status = CCOURIER_PEER_CHAIN_OK;
    SSL *ssl = SSL_new(context);
    unsigned char address[16];
    int is_address = inet_pton(AF_INET, host, address) == 1 || inet_pton(AF_INET6, host, address) == 1;
    if (is_address) {
        X509_VERIFY_PARAM_set1_ip_asc(SSL_get0_param(ssl), host);
    } else {
        SSL_set_tlsext_host_name(ssl, host);
        SSL_set1_host(ssl, host);
    }
    SSL_set_fd(ssl, fd);
    errno = 0;
    if (SSL_connect(ssl) != 1) {
        long verified = SSL_get_verify_result(ssl);
        if (verified != X509_V_OK) {
            status = ccourier_fail(CCOURIER_PEER_CHAIN_UNVERIFIED, error, error_size,
                                   "the server's certificate did not verify", X509_verify_cert_error_string(verified));
        } else if (errno == EAGAIN || errno == EWOULDBLOCK) {
            status = ccourier_fail(CCOURIER_PEER_CHAIN_TIMED_OUT, error, error_size, "the TLS handshake timed out", NULL);
        } else {
            unsigned long code = ERR_peek_error();
            status = ccourier_fail(CCOURIER_PEER_CHAIN_HANDSHAKE, error, error_size, "the TLS handshake failed",
                                   code != 0 ? ERR_reason_error_string(code) : "the connection closed");
        }
    } else {
        STACK_OF(X509) *chain = SSL_get0_verified_chain(ssl);
        int length = chain != NULL ? sk_X509_num(chain) : 0;
        for (int index = 0; index < length && *count < capacity; index++) {
            if (!ccourier_describe_certificate(sk_X509_value(chain, index), &certificates[*count])) {
                status = ccourier_fail(CCOURIER_PEER_CHAIN_HANDSHAKE, error, error_size,
                                       "cannot read a certificate of the chain", NULL);
                break;
            }
            *count += 1;
        }
        SSL_shutdown(ssl);
    }
    ERR_clear_error();
    SSL_free(ssl);
    close(fd);
    SSL_CTX_free(context);
    return status;
}
