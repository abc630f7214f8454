/* Logs every swift_task_alloc and swift_task_dealloc a program makes from outside the Swift
 * concurrency runtime: size, caller and address, and at exit the process's memory map, so that
 * task_alloc_live.py can name each caller. A request's async frames live in its task's allocator
 * (slabs of about 1 KB), so this shows which frames a suspended request keeps.
 *
 *   gcc -O2 -shared -fPIC task_alloc_shim.c -o /tmp/task_alloc_shim.so -ldl
 *   TA_LOG=/tmp/ta.log LD_PRELOAD=/tmp/task_alloc_shim.so .build/release/CourierLoadClient \
 *       --url http://127.0.0.1:PORT/bytes/1k --concurrency 1 --connections 1 --requests 4 \
 *       --seconds 2 --warmup-requests 1 --warmup-seconds 0.1 --expect-bytes 1024 --mode send
 *   python3 task_alloc_live.py /tmp/ta.log "closure #1 in CurlTransport"
 *
 * The runtime's own allocations (a cancellation handler's record, a continuation's) are calls
 * inside libswift_Concurrency and are not seen. */
#define _GNU_SOURCE
#include <dlfcn.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>

static void *(*real_alloc)(size_t);
static void (*real_dealloc)(void *);
static FILE *out;

void *swift_task_alloc(size_t size) {
    if (!real_alloc) real_alloc = (void *(*)(size_t))dlsym(RTLD_NEXT, "swift_task_alloc");
    void *pointer = real_alloc(size);
    if (!out) {
        const char *path = getenv("TA_LOG");
        out = fopen(path ? path : "/tmp/ta.log", "w");
    }
    if (out) fprintf(out, "A %zu %p %p\n", size, __builtin_return_address(0), pointer);
    return pointer;
}

void swift_task_dealloc(void *pointer) {
    if (!real_dealloc) real_dealloc = (void (*)(void *))dlsym(RTLD_NEXT, "swift_task_dealloc");
    if (out) fprintf(out, "D %p %p\n", pointer, __builtin_return_address(0));
    real_dealloc(pointer);
}

__attribute__((destructor)) static void dump_maps(void) {
    if (!out) return;
    FILE *maps = fopen("/proc/self/maps", "r");
    char line[512];
    while (maps && fgets(line, sizeof line, maps)) fprintf(out, "M %s", line);
    if (maps) fclose(maps);
    fclose(out);
}
