// Counts heap allocations of the process it is preloaded into
// (LD_PRELOAD), for Scripts/bench: allocations per forwarded packet. Every
// malloc, calloc, realloc and aligned allocation adds one to a counter; a
// thread writes the total to $MALLOC_COUNT_FILE every 100 ms, and a
// destructor writes it once more when the process exits normally (exit or
// return from main), so the allocations of its last 100 ms are not lost.
// glibc's __libc_* entry points do the work, so no dlsym bootstrapping is
// needed.
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

static const char *count_path;
/* The process the reporter runs in: a child forked without exec has no
   reporter thread and must not write its own count over its parent's. */
static pid_t owner;
/* Serializes the reporter's writes with the exit write: both write the
   same temporary file, and a reporter write renamed after the exit write
   would replace the final count with an older one. */
static pthread_mutex_t write_lock = PTHREAD_MUTEX_INITIALIZER;
static int finished;

/* Written beside the file and renamed over it: a reader never sees the
   file truncated and not yet written (the bench read an empty count once
   and failed). */
static void write_count(void) {
    static char temporary[4096];
    snprintf(temporary, sizeof temporary, "%s.tmp", count_path);
    FILE *f = fopen(temporary, "w");
    if (!f) return;
    fprintf(f, "%lu\n", atomic_load(&allocations));
    fclose(f);
    rename(temporary, count_path);
}

static void *reporter(void *unused) {
    (void)unused;
    for (;;) {
        pthread_mutex_lock(&write_lock);
        if (!finished) write_count();
        pthread_mutex_unlock(&write_lock);
        usleep(100000);
    }
    return NULL;
}

__attribute__((constructor)) static void start(void) {
    count_path = getenv("MALLOC_COUNT_FILE");
    if (!count_path) return;
    owner = getpid();
    pthread_t t;
    pthread_create(&t, NULL, reporter, NULL);
    pthread_detach(t);
}

/* Runs at exit() after the program's own atexit handlers; the reporter
   thread may still be running, so the lock keeps it from writing after. */
__attribute__((destructor)) static void stop(void) {
    if (!count_path || getpid() != owner) return;
    pthread_mutex_lock(&write_lock);
    write_count();
    finished = 1;
    pthread_mutex_unlock(&write_lock);
}
