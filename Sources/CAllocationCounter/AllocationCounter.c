// Interposes the C allocator in the test executable and counts calls per thread.
//
// Symbols defined in the executable come first in the dynamic linker's search order, so
// glibc, libswiftCore and Foundation all call these. Each forwards to glibc's own
// implementation through the `__libc_*` aliases glibc exports for exactly this purpose.

#include "CAllocationCounter.h"

#include <errno.h>
#include <stddef.h>
#include <stdint.h>

extern void *__libc_malloc(size_t size);
extern void *__libc_calloc(size_t count, size_t size);
extern void *__libc_realloc(void *pointer, size_t size);
extern void *__libc_memalign(size_t alignment, size_t size);
extern void *__libc_valloc(size_t size);
extern void *__libc_pvalloc(size_t size);
extern void __libc_free(void *pointer);

// initial-exec: the flag lives in the static TLS block, so reading it never allocates
// (a dynamic TLS access could call malloc, which would recurse).
static __thread int counting __attribute__((tls_model("initial-exec")));
static __thread long allocations __attribute__((tls_model("initial-exec")));
static __thread long frees __attribute__((tls_model("initial-exec")));
static __thread int trap_on_allocation __attribute__((tls_model("initial-exec")));
static volatile int entered;

#define EXPORT __attribute__((visibility("default"), used))

static inline void note_allocation(void) {
    if (!entered) entered = 1;  // written once, not on every call from every thread
    if (counting) {
        allocations += 1;
        if (trap_on_allocation) __builtin_trap();
    }
}

void crosspoint_alloc_counting_begin(void) {
    allocations = 0;
    frees = 0;
    counting = 1;
}

long crosspoint_alloc_counting_end(void) {
    counting = 0;
    return allocations;
}

long crosspoint_alloc_counting_frees(void) { return frees; }

int crosspoint_alloc_counter_is_active(void) { return entered; }

void crosspoint_alloc_counting_trap(int enabled) { trap_on_allocation = enabled; }

EXPORT void *malloc(size_t size) {
    note_allocation();
    return __libc_malloc(size);
}

EXPORT void *calloc(size_t count, size_t size) {
    note_allocation();
    return __libc_calloc(count, size);
}

EXPORT void *realloc(void *pointer, size_t size) {
    note_allocation();
    return __libc_realloc(pointer, size);
}

EXPORT void *aligned_alloc(size_t alignment, size_t size) {
    note_allocation();
    return __libc_memalign(alignment, size);
}

EXPORT void *memalign(size_t alignment, size_t size) {
    note_allocation();
    return __libc_memalign(alignment, size);
}

EXPORT void *valloc(size_t size) {
    note_allocation();
    return __libc_valloc(size);
}

EXPORT void *pvalloc(size_t size) {
    note_allocation();
    return __libc_pvalloc(size);
}

EXPORT int posix_memalign(void **result, size_t alignment, size_t size) {
    note_allocation();
    if (alignment % sizeof(void *) != 0 || (alignment & (alignment - 1)) != 0) return EINVAL;
    void *pointer = __libc_memalign(alignment, size);
    if (pointer == NULL && size != 0) return ENOMEM;
    *result = pointer;
    return 0;
}

EXPORT void free(void *pointer) {
    if (pointer != NULL && counting) {
        frees += 1;
        if (trap_on_allocation) __builtin_trap();
    }
    __libc_free(pointer);
}
