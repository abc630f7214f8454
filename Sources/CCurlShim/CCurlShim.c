#include "CCurlShim.h"

CURLcode ccurl_easy_setopt_long(CURL *handle, CURLoption option, long value) {
    return curl_easy_setopt(handle, option, value);
}
CURLcode ccurl_easy_setopt_off_t(CURL *handle, CURLoption option, int64_t value) {
    return curl_easy_setopt(handle, option, (curl_off_t)value);
}
CURLcode ccurl_easy_setopt_string(CURL *handle, CURLoption option, const char *value) {
    return curl_easy_setopt(handle, option, value);
}
CURLcode ccurl_easy_setopt_ptr(CURL *handle, CURLoption option, void *value) {
    return curl_easy_setopt(handle, option, value);
}
CURLcode ccurl_easy_setopt_slist(CURL *handle, CURLoption option, struct curl_slist *value) {
    return curl_easy_setopt(handle, option, value);
}
CURLcode ccurl_easy_setopt_write_function(CURL *handle, ccurl_data_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_WRITEFUNCTION, callback);
}
CURLcode ccurl_easy_setopt_header_function(CURL *handle, ccurl_data_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_HEADERFUNCTION, callback);
}
CURLcode ccurl_easy_setopt_read_function(CURL *handle, ccurl_data_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_READFUNCTION, callback);
}
CURLcode ccurl_easy_setopt_xferinfo_function(CURL *handle, ccurl_xferinfo_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_XFERINFOFUNCTION, callback);
}
CURLcode ccurl_easy_setopt_prereq_function(CURL *handle, ccurl_prereq_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_PREREQFUNCTION, callback);
}
CURLcode ccurl_easy_setopt_seek_function(CURL *handle, ccurl_seek_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_SEEKFUNCTION, callback);
}
CURLcode ccurl_easy_getinfo_long(CURL *handle, CURLINFO info, long *value) {
    return curl_easy_getinfo(handle, info, value);
}
CURLcode ccurl_easy_getinfo_off_t(CURL *handle, CURLINFO info, int64_t *value) {
    curl_off_t v = 0;
    CURLcode rc = curl_easy_getinfo(handle, info, &v);
    *value = (int64_t)v;
    return rc;
}
CURLcode ccurl_easy_getinfo_string(CURL *handle, CURLINFO info, const char **value) {
    return curl_easy_getinfo(handle, info, value);
}
CURLcode ccurl_easy_getinfo_ptr(CURL *handle, CURLINFO info, void **value) {
    return curl_easy_getinfo(handle, info, value);
}
CURLMcode ccurl_multi_setopt_long(CURLM *multi, CURLMoption option, long value) {
    return curl_multi_setopt(multi, option, value);
}
long ccurl_writefunc_pause(void) { return CURL_WRITEFUNC_PAUSE; }
long ccurl_readfunc_pause(void) { return CURL_READFUNC_PAUSE; }
long ccurl_readfunc_abort(void) { return CURL_READFUNC_ABORT; }

const char *ccurl_accepted_encodings(void) {
    curl_version_info_data *info = curl_version_info(CURLVERSION_NOW);
    int features = info ? info->features : 0;
    int zlib = (features & CURL_VERSION_LIBZ) != 0, brotli = (features & CURL_VERSION_BROTLI) != 0,
        zstd = (features & CURL_VERSION_ZSTD) != 0;
    /* libcurl's own order: deflate and gzip (zlib), br, zstd. */
    static const char *const lists[8] = {
        "identity", "zstd", "br", "br, zstd",
        "deflate, gzip", "deflate, gzip, zstd", "deflate, gzip, br", "deflate, gzip, br, zstd",
    };
    return lists[(zlib << 2) | (brotli << 1) | zstd];
}

const char *ccurl_version(void) { curl_version_info_data *info = curl_version_info(CURLVERSION_NOW); return info ? info->version : NULL; }
int ccurl_prereqfunc_ok(void) { return CURL_PREREQFUNC_OK; }
int ccurl_prereqfunc_abort(void) { return CURL_PREREQFUNC_ABORT; }
int ccurl_trailerfunc_ok(void) { return CURL_TRAILERFUNC_OK; }
int ccurl_trailerfunc_abort(void) { return CURL_TRAILERFUNC_ABORT; }

CURLcode ccurl_easy_setopt_trailer_function(CURL *handle, ccurl_trailer_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_TRAILERFUNCTION, callback);
}
CURLcode ccurl_easy_setopt_debug_function(CURL *handle, ccurl_debug_callback callback) {
    return curl_easy_setopt(handle, CURLOPT_DEBUGFUNCTION, callback);
}
int ccurl_seekfunc_ok(void) { return CURL_SEEKFUNC_OK; }
int ccurl_seekfunc_cantseek(void) { return CURL_SEEKFUNC_CANTSEEK; }
