// The C floor for server-sent events: libcurl's multi interface driven directly, each response
// body read as a text/event-stream and its events counted the way any SSE client must.
// Same flags and the same RESULT line as the other clients, plus the events it counted.
//
// Every request GETs the event stream at --url (the harness serves a file of N events of 1 KiB
// data each); --concurrency streams are read at once, each on its own easy handle, created once
// and reused (keep-alive; HTTP/2 by ALPN over HTTPS, multiplexed). The parser is what the
// event-stream format asks of a client that does not keep the data: lines end with LF, CRLF
// or CR (a CR and the LF after it may arrive in different reads); a blank line ends a block;
// a block counts as an event when it had a `data` field (`data` alone or `data:` followed by
// anything); a leading UTF-8 byte order mark is skipped; comment lines (`:` first) and other
// fields are skipped; an unfinished block at the end of the stream is no event.
// `--expect-events N` makes a stream with another count an error; `--expect-bytes` as usual.
// One thread: curl_multi_perform, then completions, then curl_multi_poll.
#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>

// Where the parser is in the stream, kept across reads.
typedef struct {
    long long events;
    size_t line_length;  // bytes of the current line so far
    char field[5];       // its first bytes (enough to tell `data` and `data:`)
    int after_cr;        // the last byte was a CR: an LF next is part of the same line end
    int block_has_data;  // the block so far had a data field
    int at_start;        // nothing read yet (a byte order mark may come)
    int bom_seen;        // bytes of a byte order mark read at the start
} Parser;

typedef struct {
    CURL *easy;
    unsigned long long start;
    long long bytes;
    Parser parser;
} Slot;

typedef struct {
    long long completed, errors, bytes, events;
    double seconds;
    unsigned long long *latencies;
    long long latency_count;
    long http_version;
    char first_error[256];
} Phase;

static const char *target_url = NULL;
static const char *ca_file = NULL;

static unsigned long long now_ns(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (unsigned long long)ts.tv_sec * 1000000000ull + (unsigned long long)ts.tv_nsec;
}

static void parser_reset(Parser *p) {
    memset(p, 0, sizeof *p);
    p->at_start = 1;
}

// A line ended: a blank one dispatches the block, a `data` field marks it as an event.
static void end_line(Parser *p) {
    if (p->line_length == 0) {
        if (p->block_has_data) p->events++;
        p->block_has_data = 0;
    } else if (p->line_length >= 4 && memcmp(p->field, "data", 4) == 0 &&
               (p->line_length == 4 || p->field[4] == ':')) {
        p->block_has_data = 1;
    }
    p->line_length = 0;
}

static void parse(Parser *p, const unsigned char *data, size_t count) {
    size_t i = 0;
    static const unsigned char bom[3] = {0xEF, 0xBB, 0xBF};
    while (p->at_start && i < count) {
        if (data[i] != bom[p->bom_seen]) {
            // Not a byte order mark after all: the bytes taken so far belong to the first line.
            for (int k = 0; k < p->bom_seen; k++) {
                if (p->line_length < sizeof p->field) p->field[p->line_length] = (char)bom[k];
                p->line_length++;
            }
            p->at_start = 0;
            break;
        }
        i++;
        if (++p->bom_seen == 3) p->at_start = 0;
    }
    while (i < count) {
        unsigned char byte = data[i];
        if (byte == '\n') {
            if (p->after_cr) {
                p->after_cr = 0;  // the LF of a CRLF: the line ended at the CR
            } else {
                end_line(p);
            }
            i++;
            continue;
        }
        p->after_cr = 0;
        if (byte == '\r') {
            end_line(p);
            p->after_cr = 1;
            i++;
            continue;
        }
        // Inside a line: note its first bytes, then skip to the next line end.
        while (p->line_length < sizeof p->field && i < count && data[i] != '\n' && data[i] != '\r') {
            p->field[p->line_length++] = (char)data[i++];
        }
        size_t rest = i;
        while (rest < count && data[rest] != '\n' && data[rest] != '\r') rest++;
        p->line_length += rest - i;
        i = rest;
    }
}

static size_t on_body(char *data, size_t size, size_t count, void *user) {
    Slot *slot = user;
    size_t n = size * count;
    slot->bytes += (long long)n;
    parse(&slot->parser, (const unsigned char *)data, n);
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

static void configure(Slot *slot) {
    CURL *easy = slot->easy;
    curl_easy_setopt(easy, CURLOPT_URL, target_url);
    curl_easy_setopt(easy, CURLOPT_NOSIGNAL, 1L);
    curl_easy_setopt(easy, CURLOPT_WRITEFUNCTION, on_body);
    curl_easy_setopt(easy, CURLOPT_WRITEDATA, slot);
    curl_easy_setopt(easy, CURLOPT_PRIVATE, slot);
    curl_easy_setopt(easy, CURLOPT_HTTP_VERSION, (long)CURL_HTTP_VERSION_2TLS);
    curl_easy_setopt(easy, CURLOPT_PIPEWAIT, 1L);
    if (ca_file) curl_easy_setopt(easy, CURLOPT_CAINFO, ca_file);
}

static void start(CURLM *multi, Slot *slot) {
    slot->bytes = 0;
    parser_reset(&slot->parser);
    slot->start = now_ns();
    curl_multi_add_handle(multi, slot->easy);
}

// Runs one phase: keeps `concurrency` streams open until `total` were started or `seconds`
// passed, then waits for the ones still open.
static void run_phase(CURLM *multi, Slot *slots, int concurrency, long long total, double seconds,
                      long long expect_bytes, long long expect_events, Phase *phase, int record) {
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
            curl_multi_remove_handle(multi, easy);
            in_flight--;
            phase->completed++;
            phase->bytes += slot->bytes;
            phase->events += slot->parser.events;
            if (result != CURLE_OK || status != 200 || (expect_bytes >= 0 && slot->bytes != expect_bytes) ||
                (expect_events >= 0 && slot->parser.events != expect_events)) {
                phase->errors++;
                if (!phase->first_error[0])
                    snprintf(phase->first_error, sizeof phase->first_error,
                             "curl %d (%s), status %ld, %lld bytes, %lld events", (int)result,
                             curl_easy_strerror(result), status, slot->bytes, slot->parser.events);
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
    long long requests = 1000, warmup_requests = 10, expect_bytes = -1, expect_events = -1;
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
        else if (!strcmp(flag, "--expect-bytes")) expect_bytes = atoll(value);
        else if (!strcmp(flag, "--expect-events")) expect_events = atoll(value);
        else if (!strcmp(flag, "--ca")) ca = value;
        else if (!strcmp(flag, "--mode")) mode = value;
        else usage("unknown flag");
    }
    if (!url || concurrency < 1) usage("--url and --concurrency are required");
    target_url = url;
    ca_file = ca;

    curl_global_init(CURL_GLOBAL_DEFAULT);
    CURLM *multi = curl_multi_init();
    curl_multi_setopt(multi, CURLMOPT_PIPELINING, (long)CURLPIPE_MULTIPLEX);
    curl_multi_setopt(multi, CURLMOPT_MAX_HOST_CONNECTIONS, (long)connections);
    Slot *slots = calloc((size_t)concurrency, sizeof(Slot));
    for (int i = 0; i < concurrency; i++) {
        slots[i].easy = curl_easy_init();
        configure(&slots[i]);
    }

    Phase warm, measured;
    run_phase(multi, slots, concurrency, warmup_requests, warmup_seconds, expect_bytes, expect_events, &warm, 0);
    struct rusage before, after;
    getrusage(RUSAGE_SELF, &before);
    run_phase(multi, slots, concurrency, requests, seconds, expect_bytes, expect_events, &measured, 1);
    getrusage(RUSAGE_SELF, &after);

    qsort(measured.latencies, (size_t)measured.latency_count, sizeof(unsigned long long), compare_u64);
    double p50 = 0, p99 = 0;
    if (measured.latency_count > 0) {
        p50 = (double)measured.latencies[(long long)(measured.latency_count * 0.5)] / 1000;
        p99 = (double)measured.latencies[(long long)(measured.latency_count * 0.99)] / 1000;
    }
    long long cpu = micros(after.ru_utime) - micros(before.ru_utime) + micros(after.ru_stime) - micros(before.ru_stime);
    const char *version = measured.http_version == CURL_HTTP_VERSION_2_0 ? "HTTP/2"
                          : measured.http_version == CURL_HTTP_VERSION_1_1 ? "HTTP/1.1"
                          : measured.http_version == CURL_HTTP_VERSION_1_0 ? "HTTP/1.0" : "n/a";
    printf("RESULT {\"client\":\"curl-sse\",\"mode\":\"%s\",\"concurrency\":%d,\"requests\":%lld,\"errors\":%lld,"
           "\"bytes\":%lld,\"seconds\":%f,\"user_us\":%lld,\"sys_us\":%lld,\"maxrss_kib\":%ld,"
           "\"p50_us\":%f,\"p99_us\":%f,\"http_version\":\"%s\",\"events\":%lld,\"events_per_second\":%f,"
           "\"cpu_us_per_event\":%f",
           mode, concurrency, measured.completed, measured.errors, measured.bytes, measured.seconds,
           micros(after.ru_utime) - micros(before.ru_utime), micros(after.ru_stime) - micros(before.ru_stime),
           after.ru_maxrss, p50, p99, version, measured.events,
           measured.seconds > 0 ? (double)measured.events / measured.seconds : 0,
           measured.events > 0 ? (double)cpu / (double)measured.events : 0);
    if (measured.first_error[0]) {
        for (char *c = measured.first_error; *c; c++) if (*c == '"' || *c == '\\') *c = '\'';
        printf(",\"first_error\":\"%s\"", measured.first_error);
    }
    printf("}\n");
    fflush(stdout);

    for (int i = 0; i < concurrency; i++) curl_easy_cleanup(slots[i].easy);
    curl_multi_cleanup(multi);
    free(slots);
    free(measured.latencies);
    curl_global_cleanup();
    return 0;
}
