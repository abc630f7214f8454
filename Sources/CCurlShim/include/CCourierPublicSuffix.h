// The public suffix list, through the libpsl that libcurl already links, loaded at run time.
//
// Courier adds no build dependency for it: the shared library is opened with dlopen the first
// time a cookie's Domain attribute is checked, and the list is the system's (psl_latest), or
// libpsl's built-in copy when the system has none.
#ifndef CCOURIER_PUBLIC_SUFFIX_H
#define CCOURIER_PUBLIC_SUFFIX_H

#pragma clang assume_nonnull begin

/// Whether `domain` (lower case, no leading or trailing dot) is a public suffix such as
/// "com", "co.uk" or "github.io": 1 when it is, 0 when it is not, -1 when libpsl or its list
/// could not be loaded. Thread-safe; the library is loaded once.
int courier_is_public_suffix(const char *domain);

#pragma clang assume_nonnull end

#endif
