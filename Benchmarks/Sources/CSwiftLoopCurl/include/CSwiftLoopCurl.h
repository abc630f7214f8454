// Typed wrappers over libcurl's variadic calls, which Swift cannot call, for the bare Swift
// loop client. Nothing else: the loop, the callbacks and the bookkeeping are Swift.
#pragma once
#include <curl/curl.h>

static inline CURLcode swiftloop_setopt_long(CURL *easy, CURLoption option, long value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode swiftloop_setopt_pointer(CURL *easy, CURLoption option, const void *value) {
    return curl_easy_setopt(easy, option, value);
}
static inline CURLcode swiftloop_setopt_write(CURL *easy, size_t (*callback)(char *, size_t, size_t, void *)) {
    return curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, callback);
}
static inline CURLcode swiftloop_getinfo_long(CURL *easy, CURLINFO info, long *value) {
    return curl_easy_getinfo(easy, info, value);
}
static inline CURLcode swiftloop_getinfo_pointer(CURL *easy, CURLINFO info, void **value) {
    return curl_easy_getinfo(easy, info, value);
}
static inline CURLMcode swiftloop_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}
