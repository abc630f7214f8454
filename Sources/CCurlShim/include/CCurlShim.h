// Thin, typed, non-variadic wrappers around libcurl's variadic entry points.
// No policy lives here: every function forwards exactly one call.
#ifndef CCURLSHIM_H
#define CCURLSHIM_H

#include <curl/curl.h>
#include <stddef.h>
#include <stdint.h>

#pragma clang assume_nonnull begin

// MARK: easy options
CURLcode ccurl_easy_setopt_long(CURL *handle, CURLoption option, long value);
CURLcode ccurl_easy_setopt_off_t(CURL *handle, CURLoption option, int64_t value);
CURLcode ccurl_easy_setopt_string(CURL *handle, CURLoption option, const char *_Nullable value);
CURLcode ccurl_easy_setopt_ptr(CURL *handle, CURLoption option, void *_Nullable value);
CURLcode ccurl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *_Nullable value);

typedef size_t (*ccurl_data_callback)(char *_Nullable buffer, size_t size, size_t count, void *_Nullable userdata);
typedef int (*ccurl_xferinfo_callback)(void *_Nullable userdata, int64_t dltotal, int64_t dlnow, int64_t ultotal, int64_t ulnow);

CURLcode ccurl_easy_setopt_write_function(CURL *handle, ccurl_data_callback _Nullable callback);
CURLcode ccurl_easy_setopt_header_function(CURL *handle, ccurl_data_callback _Nullable callback);
CURLcode ccurl_easy_setopt_read_function(CURL *handle, ccurl_data_callback _Nullable callback);
CURLcode ccurl_easy_setopt_xferinfo_function(CURL *handle, ccurl_xferinfo_callback _Nullable callback);

typedef int (*ccurl_prereq_callback)(void *_Nullable userdata, char *_Nullable primary_ip, char *_Nullable local_ip, int primary_port, int local_port);
typedef int (*ccurl_seek_callback)(void *_Nullable userdata, int64_t offset, int origin);

CURLcode ccurl_easy_setopt_prereq_function(CURL *handle, ccurl_prereq_callback _Nullable callback);
CURLcode ccurl_easy_setopt_seek_function(CURL *handle, ccurl_seek_callback _Nullable callback);

/// The trailer callback (`CURLOPT_TRAILERFUNCTION`): appends the request's trailer fields to `*list`.
typedef int (*ccurl_trailer_callback)(struct curl_slist *_Nullable *_Nonnull list, void *_Nullable userdata);
CURLcode ccurl_easy_setopt_trailer_function(CURL *handle, ccurl_trailer_callback _Nullable callback);
int ccurl_trailerfunc_ok(void);
int ccurl_trailerfunc_abort(void);

/// The debug callback (`CURLOPT_DEBUGFUNCTION`), which libcurl calls only with `CURLOPT_VERBOSE`.
typedef int (*ccurl_debug_callback)(CURL *_Nullable handle, curl_infotype type, char *_Nullable data, size_t size, void *_Nullable userdata);
CURLcode ccurl_easy_setopt_debug_function(CURL *handle, ccurl_debug_callback _Nullable callback);

// MARK: easy info
CURLcode ccurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value);
CURLcode ccurl_easy_getinfo_off_t(CURL *handle, CURLINFO info, int64_t *value);
CURLcode ccurl_easy_getinfo_string(CURL *handle, CURLINFO info, const char *_Nullable *_Nonnull value);
CURLcode ccurl_easy_getinfo_ptr(CURL *handle, CURLINFO info, void *_Nullable *_Nonnull value);

// MARK: multi options
CURLMcode ccurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value);

// MARK: constants Swift cannot import (macros with casts)
const char *_Nullable ccurl_version(void);
/// The codings this libcurl decodes, as `CURLOPT_ACCEPT_ENCODING ""` names them in the
/// `Accept-Encoding` field it sends: "deflate, gzip, br, zstd" with every decoder, "identity"
/// with none.
const char *_Nonnull ccurl_accepted_encodings(void);
long ccurl_writefunc_pause(void);
long ccurl_readfunc_pause(void);
long ccurl_readfunc_abort(void);
int ccurl_prereqfunc_ok(void);
int ccurl_prereqfunc_abort(void);
int ccurl_seekfunc_ok(void);
int ccurl_seekfunc_cantseek(void);

#pragma clang assume_nonnull end

#endif

// The TLS trust hook (pins, pinned CA stores, client certificates).
#include "CCourierTLS.h"
#include "CCourierPeerChain.h"
#include "CCourierPublicSuffix.h"
