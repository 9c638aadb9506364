// The kernels' versions and the choice between them. See CCrosspointKernel.h.

#include "CCrosspointKernel.h"

#include <stddef.h>
#include <stdlib.h>
#include <string.h>

// No contraction of a * b + c into a fused multiply-add behind the code's back: the versions
// say which they do (see kernel_body.h).
#pragma clang fp contract(off)

// Silence to read, and somewhere to write the outputs of a tile nobody listens to.
static const float xp_zeros[XP_MAX_FRAMES];
static float xp_sink[XP_MAX_FRAMES];

// Inputs a tile reads per frame chunk, at most: 64 KiB, in L2 beside the outputs.
#define XP_CHUNK_FLOATS 16384

void xp_resolve(const float **resolved, int32_t inputs, const float *const *ins, int32_t input_count,
                int32_t offset)
{
    for (int32_t i = 0; i < inputs; i++) {
        const float *in = i < input_count ? ins[i] : NULL;
        resolved[i] = in ? in + offset : xp_zeros;
    }
}

typedef void (*xp_run_fn)(const xp_program *, const float *const *, int, float *const *, int, int);
typedef void (*xp_column_fn)(float *, const float *const *, const int32_t *, const float *, int, int);
typedef void (*xp_ramp_tile_fn)(int, float *const *, const float *const *, const int32_t *, const float *const *,
                                const float *const *, int, int, int);

struct xp_version {
    const char *name;
    int runs;
    xp_run_fn run;
    xp_column_fn column;
    xp_ramp_tile_fn ramp_tile;
};

#if defined(__x86_64__)

#include <cpuid.h>

#define XP_NAME(x) xp_baseline_##x
#define XP_W 4
#define XP_FMA 0
#define XP_ACC 8
#include "kernel_body.h"
#undef XP_NAME
#undef XP_W
#undef XP_FMA
#undef XP_ACC

#pragma clang attribute push(__attribute__((target("avx2,fma"))), apply_to = function)
#define XP_NAME(x) xp_avx2_##x
#define XP_W 8
#define XP_FMA 1
#define XP_ACC 8
#include "kernel_body.h"
#undef XP_NAME
#undef XP_W
#undef XP_FMA
#undef XP_ACC
#pragma clang attribute pop

#pragma clang attribute push(__attribute__((target("avx512f,avx2,fma"))), apply_to = function)
#define XP_NAME(x) xp_avx512_##x
#define XP_W 16
#define XP_FMA 1
#define XP_ACC 16
#include "kernel_body.h"
#undef XP_NAME
#undef XP_W
#undef XP_FMA
#undef XP_ACC
#pragma clang attribute pop

static struct xp_version xp_versions[] = {
    {"baseline", 1, xp_baseline_run, xp_baseline_column, xp_baseline_ramp_tile},
    {"avx2", 0, xp_avx2_run, xp_avx2_column, xp_avx2_ramp_tile},
    {"avx512", 0, xp_avx512_run, xp_avx512_column, xp_avx512_ramp_tile},
};

// What the CPU has and the kernel lets programs use (the OS saves the registers: XGETBV).
static void xp_detect(void)
{
    unsigned a, b, c, d;
    if (!__get_cpuid(1, &a, &b, &c, &d)) return;
    int fma = (c >> 12) & 1, osxsave = (c >> 27) & 1, avx = (c >> 28) & 1;
    if (!osxsave || !avx) return;
    unsigned lo, hi;
    __asm__ volatile("xgetbv" : "=a"(lo), "=d"(hi) : "c"(0));
    int ymm = (lo & 0x6) == 0x6, zmm = (lo & 0xe6) == 0xe6;
    if (!ymm || !__get_cpuid_count(7, 0, &a, &b, &c, &d)) return;
    int avx2 = (b >> 5) & 1, avx512f = (b >> 16) & 1;
    xp_versions[1].runs = avx2 && fma;
    xp_versions[2].runs = avx2 && fma && avx512f && zmm;
}

#else

// Other CPUs: one version, built for the target's baseline (NEON on aarch64, which has a
// fused multiply-add; plain arithmetic where the target has none).
#define XP_NAME(x) xp_generic_##x
#define XP_W 4
#if defined(__aarch64__) || defined(__FMA__)
#define XP_FMA 1
#else
#define XP_FMA 0
#endif
#define XP_ACC 8
#include "kernel_body.h"
#undef XP_NAME
#undef XP_W
#undef XP_FMA
#undef XP_ACC

static struct xp_version xp_versions[] = {
    {"generic", 1, xp_generic_run, xp_generic_column, xp_generic_ramp_tile},
};

static void xp_detect(void) {}

#endif

#define XP_VERSIONS ((int32_t)(sizeof xp_versions / sizeof xp_versions[0]))

static int32_t xp_default;

// Chosen once, when the library is loaded (before any render thread exists).
__attribute__((constructor)) static void xp_choose(void)
{
    xp_detect();
    xp_default = 0;
    for (int32_t k = 0; k < XP_VERSIONS; k++)
        if (xp_versions[k].runs) xp_default = k;
    const char *wanted = getenv("CROSSPOINT_KERNEL");
    if (wanted)
        for (int32_t k = 0; k < XP_VERSIONS; k++)
            if (xp_versions[k].runs && strcmp(wanted, xp_versions[k].name) == 0) xp_default = k;
}

static inline const struct xp_version *xp_version(int32_t kernel)
{
    return kernel >= 0 && kernel < XP_VERSIONS && xp_versions[kernel].runs ? &xp_versions[kernel]
                                                                            : &xp_versions[xp_default];
}

int32_t xp_kernel_default(void) { return xp_default; }

const char *xp_kernel_name(int32_t kernel)
{
    return kernel >= 0 && kernel < XP_VERSIONS ? xp_versions[kernel].name : NULL;
}

int xp_kernel_runs(int32_t kernel) { return kernel >= 0 && kernel < XP_VERSIONS && xp_versions[kernel].runs; }

void xp_run(const xp_program *program, const float *const *ins, int32_t input_count, float *const *outs,
            int32_t output_count, int32_t frames)
{
    if (frames <= 0) return;
    if (frames > XP_MAX_FRAMES) frames = XP_MAX_FRAMES;
    xp_run_fn run = program->run ? (xp_run_fn)program->run : xp_version(program->kernel)->run;
    run(program, ins, input_count, outs, output_count, frames);
}

void xp_bind(xp_program *program)
{
    program->run = (const void *)xp_version(program->kernel)->run;
}

void xp_mix_column(int32_t kernel, float *out, const float *const *resolved, const int32_t *source,
                   const float *gain, int32_t count, int32_t frames)
{
    if (frames <= 0) return;
    if (frames > XP_MAX_FRAMES) frames = XP_MAX_FRAMES;
    xp_version(kernel)->column(out, resolved, source, gain, count, frames);
}

void xp_ramp_tile(int32_t kernel, int32_t width, float *const *outs, const float *const *resolved, const int32_t *source,
                  const float *const *from, const float *const *step, int32_t count, int32_t frames, int32_t position)
{
    if (frames <= 0 || width <= 0) return;
    if (frames > XP_MAX_FRAMES) frames = XP_MAX_FRAMES;
    if (width > XP_TILE_WIDTH) width = XP_TILE_WIDTH;
    xp_version(kernel)->ramp_tile(width, outs, resolved, source, from, step, count, frames, position);
}
