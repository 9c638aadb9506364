#ifndef CROSSPOINT_ALLOCATION_COUNTER_H
#define CROSSPOINT_ALLOCATION_COUNTER_H

/// Test support: counts heap allocations made on the calling thread.
///
/// The library defines `malloc`, `calloc`, `realloc`, `aligned_alloc`, `posix_memalign`,
/// `memalign`, `valloc`, `pvalloc` and `free` itself, forwarding each to glibc's `__libc_*`
/// entry points. Linked into the test executable, these definitions take the place of
/// glibc's for every library in the process (the Swift runtime included). They count only
/// while the calling thread has opened a window with `crosspoint_alloc_counting_begin`, so
/// tests running in parallel on other threads do not disturb the count.

#ifdef __cplusplus
extern "C" {
#endif

/// Starts counting the allocations of the calling thread, from zero.
void crosspoint_alloc_counting_begin(void);

/// Stops counting on the calling thread and returns how many allocations (`malloc`,
/// `calloc`, `realloc`, `aligned_alloc`, `posix_memalign`, `memalign`, `valloc`, `pvalloc`)
/// it made since `crosspoint_alloc_counting_begin`.
long crosspoint_alloc_counting_end(void);

/// How many times the calling thread called `free` (with a non-null pointer) in its
/// current or last window.
long crosspoint_alloc_counting_frees(void);

/// 1 when the interposed `malloc` is the one the process calls (it has been entered at
/// least once), 0 otherwise: a sanity check that the interposition took effect.
int crosspoint_alloc_counter_is_active(void);

/// A diagnostic aid: while on (non-zero) for the calling thread, an allocation or free inside
/// a counting window traps, so that the crash report's backtrace shows who allocated.
void crosspoint_alloc_counting_trap(int enabled);

#ifdef __cplusplus
}
#endif

#endif
