// The C floor: libcurl's multi interface driven directly, the least work any libcurl-based
// transport can do per request. Same flags and the same RESULT line as the Swift clients.
//
// --concurrency easy handles are created once and reused for every request (keep-alive,
// connection reuse); HTTPS negotiates HTTP/2 by ALPN and multiplexes (CURLPIPE_MULTIPLEX,
// CURLOPT_PIPEWAIT). The body is counted and discarded: no buffering, no copies.
// --mode courier-options adds, per request, what Courier asks of libcurl (see below).
// --mode buffered keeps each body in memory, as a buffered client must (see below).
// One thread: curl_multi_perform, then completions, then curl_multi_poll.
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

typedef struct {
    CURL *easy;
    unsigned long long start;
    long long bytes;
    struct curl_slist *headers;
    int configured;
    char error[CURL_ERROR_SIZE];
    char *buffer;
    size_t capacity;
} Slot;

// --mode buffered: each body is copied into memory, sized from Content-Length when the first
// bytes arrive. The memory stays with the slot for its next body, so this is the best case of
// any client that returns bodies in memory: one copy of each byte and no fresh pages (a client
// that hands the memory to its caller needs new memory for the next body). What keeping a body
// costs at all beyond the floor, which discards it.
static int buffered = 0;

// --mode courier-options: every request does what Courier's CurlTransfer asks of libcurl
// (the same options, a header callback, a header list, ten getinfo calls at the end), in C.
// Like CurlEasyHandle, a handle keeps its options and header list from request to request of
// the same kind: the first request sets everything, later ones the URL, the callback data and
// the timeouts. Courier's CPU per request minus this client's is the Swift-side overhead;
// this client's minus the plain floor's is the price of those libcurl options.
static int courier_options = 0;
static const char *ca_file = NULL;
static const char *target_url = NULL;
static const char *user_agent = "User-Agent: Courier/0.1.0 (Linux; x86_64) libcurl/7.88.1";

typedef struct {
    long long completed, errors, bytes;
    double seconds;
    unsigned long long *latencies;
    long long latency_count;
    long http_version;
    char first_error[256];
} Phase;

static unsigned long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static size_t on_body(char *data, size_t size, size_t count, void *user) {
    (void)data;
    ((Slot *)user)->bytes += (long long)(size * count);
    return size * count;
}

static size_t on_body_buffered(char *data, size_t size, size_t count, void *user) {
    Slot *slot = user;
    size_t n = size * count, used = (size_t)slot->bytes;
    if (used + n > slot->capacity) {
        curl_off_t length = -1;
        curl_easy_getinfo(slot->easy, CURLINFO_CONTENT_LENGTH_DOWNLOAD_T, &length);
        size_t want = length > 0 && (size_t)length >= used + n ? (size_t)length : (used + n) * 2;
        char *grown = realloc(slot->buffer, want);
        if (!grown) return 0;
        slot->buffer = grown;
        slot->capacity = want;
    }
    memcpy(slot->buffer + used, data, n);
    slot->bytes += (long long)n;
    return n;
}

static void usage(const char *message) {
    fprintf(stderr, "error: %s\n", message);
    exit(64);
}

static int compare_u64(const void *a, const void *b) {
    unsigned long long x = *(const unsigned long long *)a, y = *(const unsigned long long *)b;
    return x < y ? -1 : x > y;
}

static size_t on_header(char *data, size_t size, size_t count, void *user) {
    (void)data;
    (void)user;
    return size * count;
}

static void configure_basic(Slot *slot) {
    CURL *easy = slot->easy;
    curl_easy_setopt(easy, CURLOPT_URL, target_url);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, buffered ? on_body_buffered : on_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, slot);
    curl_easy_setopt(easy, CURLOPT_PRIVATE, slot);
    curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(easy, CURLOPT_PIPEWAIT, 1L);
    if (ca_file) curl_easy_setopt(easy, CURLOPT_CAINFO, ca_file);
}

// The options CurlTransfer.configure sets for a GET with the default configuration.
static void configure_like_courier(Slot *slot) {
    CURL *easy = slot->easy;
    curl_easy_setopt(easy, CURLOPT_URL, target_url);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, slot);
    curl_easy_setopt(easy, CURLOPT_HEADERDATA, slot);
    curl_easy_setopt(easy, CURLOPT_CONNECTTIMEOUT_MS, 10000L);
    curl_easy_setopt(easy, CURLOPT_TIMEOUT_MS, 60000L);
    slot->error[0] = 0;
    if (slot->configured) return;
    slot->configured = 1;
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_ERRORBUFFER, slot->error);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(easy, CURLOPT_HEADERFUNCTION, on_header);
    curl_easy_setopt(easy, CURLOPT_PRIVATE, slot);
    curl_easy_setopt(easy, CURLOPT_ACCEPT_ENCODING, "");
    curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(easy, CURLOPT_PIPEWAIT, 1L);
    curl_easy_setopt(easy, CURLOPT_SSLVERSION, (long)CURL_SSLVERSION_TLSv1_2);
    if (ca_file) {
        curl_easy_setopt(easy, CURLOPT_CAINFO, ca_file);
        curl_easy_setopt(easy, CURLOPT_CAPATH, NULL);
    }
    curl_easy_setopt(easy, CURLOPT_FOLLOWLOCATION, 1L);
    curl_easy_setopt(easy, CURLOPT_MAXREDIRS, 5L);
    curl_easy_setopt(easy, CURLOPT_REDIR_PROTOCOLS_STR, strncmp(target_url, "https", 5) == 0 ? "https" : "http,https");
    slot->headers = curl_slist_append(NULL, user_agent);
    slot->headers = curl_slist_append(slot->headers, "Expect:");
    curl_easy_setopt(easy, CURLOPT_HTTPHEADER, slot->headers);
}

// The getinfo calls of CurlTransfer.metrics().
static void read_metrics(CURL *easy) {
    curl_off_t t;
    long l;
    curl_easy_getinfo(easy, CURLINFO_NAMELOOKUP_TIME_T, &t);
    curl_easy_getinfo(easy, CURLINFO_CONNECT_TIME_T, &t);
    curl_easy_getinfo(easy, CURLINFO_APPCONNECT_TIME_T, &t);
    curl_easy_getinfo(easy, CURLINFO_STARTTRANSFER_TIME_T, &t);
    curl_easy_getinfo(easy, CURLINFO_TOTAL_TIME_T, &t);
    curl_easy_getinfo(easy, CURLINFO_SIZE_UPLOAD_T, &t);
    curl_easy_getinfo(easy, CURLINFO_SIZE_DOWNLOAD_T, &t);
    curl_easy_getinfo(easy, CURLINFO_HTTP_VERSION, &l);
    curl_easy_getinfo(easy, CURLINFO_NUM_CONNECTS, &l);
    curl_easy_getinfo(easy, CURLINFO_REDIRECT_COUNT, &l);
}

static void start(CURLM *multi, Slot *slot) {
    if (courier_options) configure_like_courier(slot);
    slot->bytes = 0;
    slot->start = now_ns();
    curl_multi_add_handle(multi, slot->easy);
}

// Runs one phase: keeps `concurrency` requests in flight until `total` were issued or
// `seconds` passed, then waits for the ones in flight.
static void run_phase(CURLM *multi, Slot *slots, int concurrency, long long total, double seconds,
                      long long expect, Phase *phase, int record) {
    memset(phase, 0, sizeof *phase);
    if (total <= 0 || seconds <= 0) return;
    if (record) phase->latencies = malloc(sizeof(unsigned long long) * (size_t)total);
    unsigned long long begin = now_ns();
    unsigned long long deadline = begin + (unsigned long long)(seconds * 1e9);
    long long issued = 0;
    int in_flight = 0;
    for (int i = 0; i < concurrency && issued < total; i++) {
        start(multi, &slots[i]);
        issued++;
        in_flight++;
    }
    while (in_flight > 0) {
        int running = 0;
        curl_multi_perform(multi, &running);
        CURLMsg *message;
        int queued;
        while ((message = curl_multi_info_read(multi, &queued))) {
            if (message->msg != CURLMSG_DONE) continue;
            CURL *easy = message->easy_handle;
            CURLcode result = message->data.result;
            Slot *slot = NULL;
            curl_easy_getinfo(easy, CURLINFO_PRIVATE, (char **)&slot);
            unsigned long long end = now_ns();
            long status = 0;
            curl_easy_getinfo(easy, CURLINFO_RESPONSE_CODE, &status);
            curl_easy_getinfo(easy, CURLINFO_HTTP_VERSION, &phase->http_version);
            if (courier_options) read_metrics(easy);
            curl_multi_remove_handle(multi, easy);
            in_flight--;
            phase->completed++;
            phase->bytes += slot->bytes;
            if (result != CURLE_OK || status != 200 || (expect >= 0 && slot->bytes != expect)) {
                phase->errors++;
                if (!phase->first_error[0])
                    snprintf(phase->first_error, sizeof phase->first_error, "curl %d (%s), status %ld, %lld bytes",
                             (int)result, curl_easy_strerror(result), status, slot->bytes);
            }
            if (record) phase->latencies[phase->latency_count++] = end - slot->start;
            if (issued < total && end < deadline) {
                start(multi, slot);
                issued++;
                in_flight++;
            }
        }
        if (in_flight > 0) curl_multi_poll(multi, NULL, 0, 1000, NULL);
    }
    phase->seconds = (double)(now_ns() - begin) / 1e9;
}

static long long micros(struct timeval tv) { return (long long)tv.tv_sec * 1000000 + tv.tv_usec; }

int main(int argc, char **argv) {
    const char *url = NULL, *ca = NULL, *mode = "send";
    int concurrency = 1, connections = 1;
    long long requests = 1000, warmup_requests = 100, expect = -1;
    double seconds = 2, warmup_seconds = 0.5;
    for (int i = 1; i < argc; i++) {
        const char *flag = argv[i];
        if (i + 1 >= argc) usage("missing value");
        const char *value = argv[++i];
        if (!strcmp(flag, "--url")) url = value;
        else if (!strcmp(flag, "--concurrency")) concurrency = atoi(value);
        else if (!strcmp(flag, "--connections")) connections = atoi(value);
        else if (!strcmp(flag, "--requests")) requests = atoll(value);
        else if (!strcmp(flag, "--seconds")) seconds = atof(value);
        else if (!strcmp(flag, "--warmup-requests")) warmup_requests = atoll(value);
        else if (!strcmp(flag, "--warmup-seconds")) warmup_seconds = atof(value);
        else if (!strcmp(flag, "--expect-bytes")) expect = atoll(value);
        else if (!strcmp(flag, "--ca")) ca = value;
        else if (!strcmp(flag, "--mode")) mode = value;
        else usage("unknown flag");
    }
    if (!url || concurrency < 1) usage("--url and --concurrency are required");
    target_url = url;
    ca_file = ca;
    courier_options = strcmp(mode, "courier-options") == 0;
    buffered = strcmp(mode, "buffered") == 0;

    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURLM *multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)connections);
    /* As Courier's transport: idle connections stay cached between requests, and one HTTP/2
       connection carries up to 1,000 streams (libcurl's defaults: 4 idle per transfer in
       flight, 100 streams). */
    curl_multi_setopt(multi, CURLMOPT_MAXCONNECTS, (long)(connections * 32 > 64 ? connections * 32 : 64));
    curl_multi_setopt(multi, CURLMOPT_MAX_CONCURRENT_STREAMS, 1000L);
    Slot *slots = calloc((size_t)concurrency, sizeof(Slot));
    for (int i = 0; i < concurrency; i++) {
        slots[i].easy = curl_easy_init();
        configure_basic(&slots[i]);
    }

    Phase warm, measured;
    run_phase(multi, slots, concurrency, warmup_requests, warmup_seconds, expect, &warm, 0);
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    run_phase(multi, slots, concurrency, requests, seconds, expect, &measured, 1);
    getrusage(RUSAGE_SELF, &after);

    qsort(measured.latencies, (size_t)measured.latency_count, sizeof(unsigned long long), compare_u64);
    double p50 = 0, p99 = 0;
    if (measured.latency_count > 0) {
        p50 = (double)measured.latencies[(long long)(measured.latency_count * 0.5)] / 1000;
        p99 = (double)measured.latencies[(long long)(measured.latency_count * 0.99)] / 1000;
    }
    const char *version = measured.http_version == CURL_HTTP_VERSION_2_0 ? "HTTP/2"
                          : measured.http_version == CURL_HTTP_VERSION_1_1 ? "HTTP/1.1"
                          : measured.http_version == CURL_HTTP_VERSION_1_0 ? "HTTP/1.0" : "n/a";
    printf("RESULT {\"client\":\"curl\",\"mode\":\"%s\",\"concurrency\":%d,\"requests\":%lld,\"errors\":%lld,"
           "\"bytes\":%lld,\"seconds\":%f,\"user_us\":%lld,\"sys_us\":%lld,\"maxrss_kib\":%ld,"
           "\"p50_us\":%f,\"p99_us\":%f,\"http_version\":\"%s\"",
           mode, concurrency, measured.completed, measured.errors, measured.bytes, measured.seconds,
           micros(after.ru_utime) - micros(before.ru_utime), micros(after.ru_stime) - micros(before.ru_stime),
           after.ru_maxrss, p50, p99, version);
    if (measured.first_error[0]) {
        for (char *c = measured.first_error; *c; c++) if (*c == '"' || *c == '\\') *c = '\'';
        printf(",\"first_error\":\"%s\"", measured.first_error);
    }
    printf("}\n");
    fflush(stdout);

    for (int i = 0; i < concurrency; i++) {
        curl_easy_cleanup(slots[i].easy);
        curl_slist_free_all(slots[i].headers);
        free(slots[i].buffer);
    }
    curl_multi_cleanup(multi);
    free(slots);
    free(measured.latencies);
    curl_global_cleanup();
    return 0;
}
