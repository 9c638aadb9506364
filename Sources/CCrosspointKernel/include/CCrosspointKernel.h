// The steady-state mixing kernels of Crosspoint's render path, in C because they come in one
// version per instruction set (baseline x86-64, AVX2+FMA, AVX-512; one on other CPUs), chosen
// once when the library is loaded, from the CPU's features. Swift compiles a function for one
// target only. Nothing here knows of PipeWire, allocates, locks or blocks.
//
// The arithmetic, the same in every version, every tile width and every frame position, so
// that an output renders bit-identically however it is grouped or cut into blocks:
//
//     y = g[0] * x[0];  y = madd(g[k], x[k], y)  for k = 1 ..< count, in the order given
//
// where madd is one fused multiply-add where the version has FMA, and a multiply then an add
// (each rounded) in the baseline version. A single source at gain 1 is therefore a copy.
//
// `xp_run` plays a program sorted on the control thread (RenderPlan.swift): outputs that are one
// input at gain 1 are a copy list (routings), outputs with none are cleared, the rest go in
// tiles of up to four outputs that share their inputs. A tile passes once over its inputs per
// few vectors of frames, keeping its outputs' accumulators in registers (XP_ACC vectors:
// 4 outputs x 2 vectors in the baseline and AVX2 versions, x 4 in AVX-512): sgemm's register
// tiling, with the gains packed per tile when the plan is made. On x86-64 the versions are one
// source (kernel_body.h) compiled three times under `#pragma clang attribute push(target)`, as
// PipeWire's audioconvert does with its per-CPU files.
#ifndef CCROSSPOINT_KERNEL_H
#define CCROSSPOINT_KERNEL_H

#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

/// The most outputs one tile renders in a pass over its inputs.
#define XP_TILE_WIDTH 4

/// What a render plan plays when no output is ramping: prepared on the control thread.
typedef struct xp_program {
    /// The kernel version (`xp_kernel_default()` unless a test or benchmark chose another).
    int32_t kernel;
    /// The plan's input count: `resolved` has room for one pointer per input.
    int32_t inputs;
    const float **resolved;
    /// Outputs that are one input at gain 1: output `copy_out[c]` = input `copy_in[c]`.
    int32_t copies;
    const int32_t *copy_out;
    const int32_t *copy_in;
    /// Outputs with no input: silence.
    int32_t clears;
    const int32_t *clear_out;
    /// Tiles: up to XP_TILE_WIDTH outputs that share one list of inputs. Tile t renders the
    /// outputs `tile_out[t * XP_TILE_WIDTH ..< + tile_width[t]]` from the inputs
    /// `tile_source[tile_start[t] ..< tile_start[t + 1]]`; the gain of its k-th input for its
    /// output w is `tile_gain[tile_gain_start[t] + k * tile_width[t] + w]`.
    int32_t tiles;
    const int32_t *tile_out;
    const int32_t *tile_width;
    const int32_t *tile_start;
    const int32_t *tile_gain_start;
    const int32_t *tile_source;
    const float *tile_gain;
    /// The program's output count: outputs past it are the caller's to silence.
    int32_t outputs;
    /// Whether tiles read their inputs from `panel`, a frame chunk at a time: when the tiles
    /// read each input several times and there are more inputs than L1 cache ways, inputs
    /// that lie a multiple of 4 KiB apart (PipeWire's port buffers do) would evict one another.
    /// `packed_in[0 ..< packed_count]` are the inputs the tiles read; `packed` has room for
    /// one pointer per input, `panel` for `XP_PANEL_FLOATS(inputs)` floats.
    int32_t pack;
    int32_t packed_count;
    const int32_t *packed_in;
    const float **packed;
    float *panel;
    /// The kernel version's render function, set by `xp_bind` (NULL: looked up at every call).
    /// Kept here so that a render reads no table of the library's own: a cycle that touches
    /// fewer of the library's pages waits for fewer TLB and cache misses.
    const void *run;
} xp_program;

/// The floats a panel holds: a chunk of 8192 / inputs frames (at least 64) of every input.
#define XP_PANEL_FLOATS(inputs) ((inputs) * 64 > 8192 ? (inputs) * 64 : 8192)

/// The most frames a call renders.
#define XP_MAX_FRAMES 8192

/// Renders `frames` frames (0 to XP_MAX_FRAMES) of a program. `ins[i]` (i < input_count) is
/// an input, NULL for silence; `outs[j]` (j < output_count) an output, NULL where nobody
/// listens (not written).
void xp_run(const xp_program *program, const float *const *ins, int32_t input_count,
            float *const *outs, int32_t output_count, int32_t frames);

/// Sets `program->run` from `program->kernel` (control thread, when the program is made).
void xp_bind(xp_program *program);

/// Points `resolved[i]` (i < inputs) at input i from frame `offset` on, or at silence.
void xp_resolve(const float **resolved, int32_t inputs, const float *const *ins, int32_t input_count,
                int32_t offset);

/// One output, bit for bit as in a tile: out = sum over k of gain[k] * resolved[source[k]],
/// over `frames` frames. With no source it is silence.
void xp_mix_column(int32_t kernel, float *out, const float *const *resolved, const int32_t *source,
                   const float *gain, int32_t count, int32_t frames);

/// Up to XP_TILE_WIDTH outputs along linear ramps of the same sources and position, over
/// `frames` frames: outs[t][n] = sum over k of (from[t][k] + step[t][k] * (position + 1 + n))
/// * resolved[source[k]][n]. With no source they are silence.
void xp_ramp_tile(int32_t kernel, int32_t width, float *const *outs, const float *const *resolved,
                  const int32_t *source, const float *const *from, const float *const *step, int32_t count,
                  int32_t frames, int32_t position);

/// The version chosen when the library was loaded: the best this CPU runs, or the one
/// named by the environment variable CROSSPOINT_KERNEL if this CPU runs it.
int32_t xp_kernel_default(void);
/// A version's name ("avx512", "avx2", "baseline"; "generic" on CPUs other than x86-64), or
/// NULL past the last one.
const char *xp_kernel_name(int32_t kernel);
/// Whether this CPU runs a version.
int xp_kernel_runs(int32_t kernel);

#ifdef __cplusplus
}
#endif

#endif
