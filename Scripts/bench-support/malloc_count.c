// Counts heap allocations of the process it is preloaded into
// (LD_PRELOAD), for Scripts/bench: allocations per forwarded packet. Every
// malloc, calloc, realloc and aligned allocation adds one to a counter; a
// thread writes the total to $MALLOC_COUNT_FILE every 100 ms. glibc's
// __libc_* entry points do the work, so no dlsym bootstrapping is needed.
#define _GNU_SOURCE
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

extern void *__libc_malloc(size_t);
extern void *__libc_calloc(size_t, size_t);
extern void *__libc_realloc(void *, size_t);
extern void *__libc_memalign(size_t, size_t);

static atomic_ulong allocations;

static inline void count(void) { atomic_fetch_add_explicit(&allocations, 1, memory_order_relaxed); }

void *malloc(size_t n) { count(); return __libc_malloc(n); }
void *calloc(size_t a, size_t b) { count(); return __libc_calloc(a, b); }
void *realloc(void *p, size_t n) { count(); return __libc_realloc(p, n); }
void *memalign(size_t a, size_t n) { count(); return __libc_memalign(a, n); }
void *aligned_alloc(size_t a, size_t n) { count(); return __libc_memalign(a, n); }
int posix_memalign(void **out, size_t a, size_t n) {
    count();
    void *p = __libc_memalign(a, n);
    if (!p) return 12; /* ENOMEM */
    *out = p;
    return 0;
}

static void *reporter(void *path) {
    /* Written beside the file and renamed over it: a reader never sees
       the file truncated and not yet written (the bench read an empty
       count once and failed). */
    static char temporary[4096];
    snprintf(temporary, sizeof temporary, "%s.tmp", (const char *)path);
    for (;;) {
        FILE *f = fopen(temporary, "w");
        if (f) {
            fprintf(f, "%lu\n", atomic_load(&allocations));
            fclose(f);
            rename(temporary, (const char *)path);
        }
        usleep(100000);
    }
    return NULL;
}

__attribute__((constructor)) static void start(void) {
    const char *path = getenv("MALLOC_COUNT_FILE");
    if (!path) return;
    pthread_t t;
    pthread_create(&t, NULL, reporter, (void *)path);
    pthread_detach(t);
}
