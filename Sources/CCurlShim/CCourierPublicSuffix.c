// See include/CCourierPublicSuffix.h. libpsl is opened with dlopen so that building Courier
// needs no libpsl headers and running it needs no libpsl: without it the answer is -1 and the
// Swift side falls back to its own rule.
#include "CCourierPublicSuffix.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stddef.h>

/// libpsl's opaque context.
typedef struct psl_ctx_st psl_ctx_t;

typedef psl_ctx_t *(*psl_latest_function)(const char *fname);
typedef const psl_ctx_t *(*psl_builtin_function)(void);
typedef int (*psl_is_public_suffix_function)(const psl_ctx_t *psl, const char *domain);

static pthread_once_t courier_psl_once = PTHREAD_ONCE_INIT;
/// The loaded list and its lookup, set once by courier_psl_load; NULL when unavailable.
static const psl_ctx_t *courier_psl_context = NULL;
static psl_is_public_suffix_function courier_psl_is_public_suffix = NULL;

/// Opens libpsl and loads the newest list: the system's file, else the built-in one. The
/// handle stays open for the life of the process, as the context points into it.
static void courier_psl_load(void) {
    void *library = dlopen("libpsl.so.5", RTLD_NOW | RTLD_LOCAL);
    if (library == NULL) return;
    psl_latest_function latest = (psl_latest_function)dlsym(library, "psl_latest");
    psl_builtin_function builtin = (psl_builtin_function)dlsym(library, "psl_builtin");
    psl_is_public_suffix_function lookup = (psl_is_public_suffix_function)dlsym(library, "psl_is_public_suffix");
    if (lookup == NULL) return;
    const psl_ctx_t *context = latest != NULL ? latest(NULL) : NULL;
    if (context == NULL && builtin != NULL) context = builtin();
    if (context == NULL) return;
    courier_psl_context = context;
    courier_psl_is_public_suffix = lookup;
}

int courier_is_public_suffix(const char *domain) {
    pthread_once(&courier_psl_once, courier_psl_load);
    if (courier_psl_context == NULL || courier_psl_is_public_suffix == NULL) return -1;
    return courier_psl_is_public_suffix(courier_psl_context, domain) ? 1 : 0;
}
