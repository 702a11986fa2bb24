#ifndef SWIFTLET_CHIREDIS_SHIM_H
#define SWIFTLET_CHIREDIS_SHIM_H

#include <hiredis/hiredis.h>
#include <stddef.h>

/* hiredis 0.14's reader allocates what the server announces: an array of
 * any element count (`*N`), nesting up to 9 levels. Replies come from our
 * own Redis, but every count from the wire is bounded by what we allow
 * (DESIGN.md): these reply-object functions refuse an array longer than
 * `maxElements` (the reader then fails with REDIS_ERR_OOM, and the caller
 * drops the connection) and otherwise build hiredis's own reply objects
 * with its default functions. Bulk lengths are bounded by the caller, which
 * never feeds the reader more than its limit of unread bytes. */
typedef struct swiftlet_redis_limits {
    redisReplyObjectFunctions functions;
    redisReplyObjectFunctions base;
    int max_elements;
    int refused;
} swiftlet_redis_limits;

static inline swiftlet_redis_limits *swiftlet_redis_limits_of(const redisReadTask *task) {
    return (swiftlet_redis_limits *)task->privdata;
}

static inline void *swiftlet_redis_create_string(const redisReadTask *task, char *str, size_t len) {
    return swiftlet_redis_limits_of(task)->base.createString(task, str, len);
}

static inline void *swiftlet_redis_create_array(const redisReadTask *task, int elements) {
    swiftlet_redis_limits *limits = swiftlet_redis_limits_of(task);
    if (elements > limits->max_elements) {
        limits->refused = 1;
        return NULL;
    }
    return limits->base.createArray(task, elements);
}

static inline void *swiftlet_redis_create_integer(const redisReadTask *task, long long value) {
    return swiftlet_redis_limits_of(task)->base.createInteger(task, value);
}

static inline void *swiftlet_redis_create_nil(const redisReadTask *task) {
    return swiftlet_redis_limits_of(task)->base.createNil(task);
}

/* A reader whose arrays are bounded by `limits->max_elements`. `limits`
 * must outlive the reader. NULL when out of memory. */
static inline redisReader *swiftlet_redis_reader_create(swiftlet_redis_limits *limits) {
    redisReader *probe = redisReaderCreate();
    if (probe == NULL) return NULL;
    /* The default functions: a static table inside hiredis. */
    limits->base = *probe->fn;
    redisReaderFree(probe);
    limits->functions.createString = swiftlet_redis_create_string;
    limits->functions.createArray = swiftlet_redis_create_array;
    limits->functions.createInteger = swiftlet_redis_create_integer;
    limits->functions.createNil = swiftlet_redis_create_nil;
    limits->functions.freeObject = limits->base.freeObject;
    limits->refused = 0;
    redisReader *reader = redisReaderCreateWithFunctions(&limits->functions);
    if (reader != NULL) reader->privdata = limits;
    return reader;
}

#endif
