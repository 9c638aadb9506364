// The C kernel on its own, for CPUs the Swift tests do not run on: scripts/test-kernel-aarch64
// builds this with the kernel for aarch64 and runs it under qemu-user (it also builds and runs
// natively). For every version the CPU runs, dense programs (tiles of 1 to 4 outputs, with and
// without the input panel), copies and silences are checked
//   - against a double-precision reference (within 1e-5 of the sum of |gain * input|),
//   - bit for bit against xp_mix_column, output by output (the arithmetic of a lone output),
//   - bit for bit against the same frames rendered in blocks of 7 (any block size, any offset).
// Exit status 0 when every check passed; each failure is printed.
#include "CCrosspointKernel.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static uint64_t state = 0x5eed;
static float uniform(void) // -1 ..< 1
{
    state = state * 6364136223846793005ULL + 1442695040888963407ULL;
    return (float)((double)(state >> 11) / 9007199254740992.0 * 2.0 - 1.0);
}

static int failures;
#define CHECK(cond, ...) do { if (!(cond)) { failures++; printf("FAIL: " __VA_ARGS__); printf("\n"); } } while (0)

// A program of n inputs and m outputs: output 0 copies input n - 1, output 1 is silent, the
// other outputs mix every input with random gains, in tiles of up to 4.
typedef struct {
    xp_program p;
    int32_t copy_out[1], copy_in[1], clear_out[1];
    int32_t *tile_out, *tile_width, *tile_start, *tile_gain_start, *tile_source, *packed_in;
    float *tile_gain, *panel, *gains; // gains[j * n + i]
    const float **resolved, **packed;
} test_program;

static void make(test_program *t, int kernel, int n, int m, int pack)
{
    memset(t, 0, sizeof *t);
    int mixed = m - 2, tiles = (mixed + 3) / 4;
    t->gains = calloc((size_t)n * m, sizeof(float));
    for (int j = 2; j < m; j++)
        for (int i = 0; i < n; i++) t->gains[j * n + i] = uniform();
    t->tile_out = calloc((size_t)tiles * XP_TILE_WIDTH + 1, sizeof(int32_t));
    t->tile_width = calloc((size_t)tiles + 1, sizeof(int32_t));
    t->tile_start = calloc((size_t)tiles + 1, sizeof(int32_t));
    t->tile_gain_start = calloc((size_t)tiles + 1, sizeof(int32_t));
    t->tile_source = calloc((size_t)tiles * n + 1, sizeof(int32_t));
    t->tile_gain = calloc((size_t)mixed * n + 1, sizeof(float));
    int g = 0;
    for (int k = 0; k < tiles; k++) {
        int width = mixed - 4 * k < 4 ? mixed - 4 * k : 4;
        t->tile_width[k] = width;
        t->tile_start[k] = k * n;
        t->tile_gain_start[k] = g;
        for (int w = 0; w < width; w++) t->tile_out[k * XP_TILE_WIDTH + w] = 2 + 4 * k + w;
        for (int i = 0; i < n; i++) {
            t->tile_source[k * n + i] = i;
            for (int w = 0; w < width; w++) t->tile_gain[g++] = t->gains[(2 + 4 * k + w) * n + i];
        }
    }
    t->tile_start[tiles] = tiles * n;
    t->copy_out[0] = 0;
    t->copy_in[0] = n - 1;
    t->clear_out[0] = 1;
    t->gains[0 * n + n - 1] = 1;
    t->resolved = calloc((size_t)n, sizeof(float *));
    t->packed = calloc((size_t)n, sizeof(float *));
    t->packed_in = calloc((size_t)n, sizeof(int32_t));
    for (int i = 0; i < n; i++) t->packed_in[i] = i;
    t->panel = calloc((size_t)XP_PANEL_FLOATS(n), sizeof(float));
    t->p = (xp_program){
        .kernel = kernel, .inputs = n, .resolved = t->resolved,
        .copies = 1, .copy_out = t->copy_out, .copy_in = t->copy_in,
        .clears = 1, .clear_out = t->clear_out,
        .tiles = tiles, .tile_out = t->tile_out, .tile_width = t->tile_width, .tile_start = t->tile_start,
        .tile_gain_start = t->tile_gain_start, .tile_source = t->tile_source, .tile_gain = t->tile_gain,
        .outputs = m, .pack = pack, .packed_count = pack ? n : 0, .packed_in = t->packed_in,
        .packed = t->packed, .panel = t->panel, .run = NULL};
    xp_bind(&t->p);
}

static void destroy(test_program *t)
{
    free(t->gains); free(t->tile_out); free(t->tile_width); free(t->tile_start); free(t->tile_gain_start);
    free(t->tile_source); free(t->tile_gain); free(t->resolved); free(t->packed); free(t->packed_in); free(t->panel);
}

static void check(int kernel, int n, int m, int pack, int frames)
{
    const char *name = xp_kernel_name(kernel);
    test_program t;
    make(&t, kernel, n, m, pack);
    float **in = calloc((size_t)n, sizeof(float *)), **out = calloc((size_t)m, sizeof(float *));
    float **blocks = calloc((size_t)m, sizeof(float *));
    for (int i = 0; i < n; i++) {
        in[i] = malloc(sizeof(float) * (size_t)frames);
        for (int f = 0; f < frames; f++) in[i][f] = uniform();
    }
    for (int j = 0; j < m; j++) {
        out[j] = malloc(sizeof(float) * (size_t)frames);
        blocks[j] = malloc(sizeof(float) * (size_t)frames);
        for (int f = 0; f < frames; f++) out[j][f] = blocks[j][f] = NAN;
    }
    xp_run(&t.p, (const float *const *)in, n, out, m, frames);

    // Against a double reference.
    for (int j = 0; j < m; j++) {
        double worst = 0;
        for (int f = 0; f < frames; f++) {
            double sum = 0, magnitude = 0;
            for (int i = 0; i < n; i++) {
                sum += (double)t.gains[j * n + i] * in[i][f];
                magnitude += fabs((double)t.gains[j * n + i] * in[i][f]);
            }
            double error = fabs(out[j][f] - sum) / (magnitude > 1e-30 ? magnitude : 1);
            if (!(error <= worst)) worst = error;  // NaN counts as worst
        }
        CHECK(worst <= 1e-5, "%s n=%d m=%d pack=%d frames=%d: output %d is %g from the reference",
              name, n, m, pack, frames, j, worst);
    }
    // Bit for bit against one output alone (the tiles' outputs; the copy is a product with 1).
    const float **resolved = calloc((size_t)n, sizeof(float *));
    xp_resolve(resolved, n, (const float *const *)in, n, 0);
    float *alone = malloc(sizeof(float) * (size_t)frames);
    for (int j = 2; j < m; j++) {
        int k = (j - 2) / 4, w = (j - 2) % 4, width = t.tile_width[k];
        float *g = malloc(sizeof(float) * (size_t)n);
        for (int i = 0; i < n; i++) g[i] = t.tile_gain[t.tile_gain_start[k] + i * width + w];
        xp_mix_column(kernel, alone, resolved, t.tile_source + k * n, g, n, frames);
        CHECK(memcmp(alone, out[j], sizeof(float) * (size_t)frames) == 0,
              "%s n=%d m=%d pack=%d frames=%d: output %d differs from the same output alone", name, n, m, pack, frames, j);
        free(g);
    }
    // Bit for bit in blocks of 7 frames.
    const float **ins_at = calloc((size_t)n, sizeof(float *));
    float **outs_at = calloc((size_t)m, sizeof(float *));
    for (int start = 0; start < frames; start += 7) {
        int count = frames - start < 7 ? frames - start : 7;
        for (int i = 0; i < n; i++) ins_at[i] = in[i] + start;
        for (int j = 0; j < m; j++) outs_at[j] = blocks[j] + start;
        xp_run(&t.p, ins_at, n, outs_at, m, count);
    }
    for (int j = 0; j < m; j++)
        CHECK(memcmp(blocks[j], out[j], sizeof(float) * (size_t)frames) == 0,
              "%s n=%d m=%d pack=%d frames=%d: output %d differs in blocks of 7", name, n, m, pack, frames, j);
    for (int i = 0; i < n; i++) free(in[i]);
    for (int j = 0; j < m; j++) { free(out[j]); free(blocks[j]); }
    free(in); free(out); free(blocks); free(resolved); free(alone); free(ins_at); free(outs_at);
    destroy(&t);
}

int main(void)
{
    int versions = 0;
    for (int kernel = 0; xp_kernel_name(kernel); kernel++) {
        if (!xp_kernel_runs(kernel)) continue;
        versions++;
        static const int shapes[][3] = {{2, 3, 0}, {2, 6, 0}, {8, 10, 0}, {5, 7, 0}, {24, 18, 1}, {40, 12, 1}};
        static const int lengths[] = {1, 7, 64, 256, 1000};
        for (size_t s = 0; s < sizeof shapes / sizeof shapes[0]; s++)
            for (size_t l = 0; l < sizeof lengths / sizeof lengths[0]; l++)
                check(kernel, shapes[s][0], shapes[s][1], shapes[s][2], lengths[l]);
        printf("%s: checked%s\n", xp_kernel_name(kernel), kernel == xp_kernel_default() ? " (the default)" : "");
    }
    if (versions == 0) { printf("FAIL: no kernel version runs here\n"); return 1; }
    printf(failures ? "%d checks failed\n" : "every check passed\n", failures);
    return failures != 0;
}
