// OpenSSL, for the TLS verify hook in CCurlShim (CCourierTLS.c). Only C code uses it:
// Swift sees OpenSSL objects as opaque pointers through CCourierTLS.h.
#include <openssl/ssl.h>
#include <openssl/x509.h>
