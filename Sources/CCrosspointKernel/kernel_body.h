// One version of the kernels, included by kernel.c once per instruction set with:
//   XP_NAME(x)  this version's name for x
//   XP_W        floats per vector
//   XP_FMA      1: a fused multiply-add; 0: a multiply, then an add
//   XP_ACC      accumulator vectors a tile keeps in registers
// The vectors are clang's vector extensions: inside a function built for AVX2 or AVX-512 they
// become ymm or zmm registers, in the baseline version pairs or quartets of SSE registers.

typedef float XP_NAME(vec) __attribute__((vector_size(XP_W * sizeof(float))));
#define VEC XP_NAME(vec)

static inline __attribute__((always_inline)) VEC XP_NAME(load)(const float *p)
{
    VEC v;
    __builtin_memcpy(&v, p, sizeof v);
    return v;
}

static inline __attribute__((always_inline)) void XP_NAME(store)(float *p, VEC v)
{
    __builtin_memcpy(p, &v, sizeof v);
}

static inline __attribute__((always_inline)) VEC XP_NAME(splat)(float g)
{
    VEC v;
    for (int i = 0; i < XP_W; i++) v[i] = g;
    return v;
}

#if XP_FMA
#define MADDV(g, x, y) __builtin_elementwise_fma((g), (x), (y))
#define MADDS(g, x, y) __builtin_fmaf((g), (x), (y))
#else
#define MADDV(g, x, y) ((g) * (x) + (y))
#define MADDS(g, x, y) ((g) * (x) + (y))
#endif

// T outputs x V vectors of frames, frames [n, end) in steps of V * XP_W (T * V <= XP_ACC
// accumulators: enough to hide the latency of the multiply-adds, few enough to stay in
// registers beside the V inputs and the gain). `out[t]` is output t.
static inline __attribute__((always_inline)) int XP_NAME(tile_vectors)(
    const int T, const int V, float *const *out, const float *const *resolved, const int32_t *source,
    const float *gain, int count, int n, int end)
{
    for (; n + V * XP_W <= end; n += V * XP_W) {
        VEC acc[XP_TILE_WIDTH][XP_ACC], x[XP_ACC];
        const float *p = resolved[source[0]] + n;
        for (int v = 0; v < V; v++) x[v] = XP_NAME(load)(p + v * XP_W);
        for (int t = 0; t < T; t++) {
            VEC g = XP_NAME(splat)(gain[t]);
            for (int v = 0; v < V; v++) acc[t][v] = g * x[v];
        }
        for (int k = 1; k < count; k++) {
            p = resolved[source[k]] + n;
            for (int v = 0; v < V; v++) x[v] = XP_NAME(load)(p + v * XP_W);
            const float *gk = gain + k * T;
            for (int t = 0; t < T; t++) {
                VEC g = XP_NAME(splat)(gk[t]);
                for (int v = 0; v < V; v++) acc[t][v] = MADDV(g, x[v], acc[t][v]);
            }
        }
        for (int t = 0; t < T; t++)
            for (int v = 0; v < V; v++) XP_NAME(store)(out[t] + n + v * XP_W, acc[t][v]);
    }
    return n;
}

// The same, one frame at a time.
static inline __attribute__((always_inline)) void XP_NAME(tile_scalars)(
    const int T, float *const *out, const float *const *resolved, const int32_t *source, const float *gain,
    int count, int n, int end)
{
    for (; n < end; n++) {
        float acc[XP_TILE_WIDTH];
        float x = resolved[source[0]][n];
        for (int t = 0; t < T; t++) acc[t] = gain[t] * x;
        for (int k = 1; k < count; k++) {
            x = resolved[source[k]][n];
            for (int t = 0; t < T; t++) acc[t] = MADDS(gain[k * T + t], x, acc[t]);
        }
        for (int t = 0; t < T; t++) out[t][n] = acc[t];
    }
}

// T outputs, frames [n, end): wide blocks, then single vectors, then single frames.
static inline __attribute__((always_inline)) void XP_NAME(tile_t)(
    const int T, float *const *out, const float *const *resolved, const int32_t *source, const float *gain,
    int count, int n, int end)
{
    n = XP_NAME(tile_vectors)(T, XP_ACC / T, out, resolved, source, gain, count, n, end);
    n = XP_NAME(tile_vectors)(T, 1, out, resolved, source, gain, count, n, end);
    XP_NAME(tile_scalars)(T, out, resolved, source, gain, count, n, end);
}

static void XP_NAME(tile)(int width, float *const *out, const float *const *resolved, const int32_t *source,
                          const float *gain, int count, int n, int end)
{
    switch (width) {
    case 1: XP_NAME(tile_t)(1, out, resolved, source, gain, count, n, end); break;
    case 2: XP_NAME(tile_t)(2, out, resolved, source, gain, count, n, end); break;
    case 3: XP_NAME(tile_t)(3, out, resolved, source, gain, count, n, end); break;
    default: XP_NAME(tile_t)(4, out, resolved, source, gain, count, n, end); break;
    }
}

// Frames [0, whole) of a copy, whole a multiple of 4 * XP_W: four vectors at a time.
static inline __attribute__((always_inline)) void XP_NAME(copy_blocks)(float *out, const float *in, int whole)
{
    for (int n = 0; n < whole; n += 4 * XP_W) {
        VEC a = XP_NAME(load)(in + n), b = XP_NAME(load)(in + n + XP_W);
        VEC c = XP_NAME(load)(in + n + 2 * XP_W), d = XP_NAME(load)(in + n + 3 * XP_W);
        XP_NAME(store)(out + n, a);
        XP_NAME(store)(out + n + XP_W, b);
        XP_NAME(store)(out + n + 2 * XP_W, c);
        XP_NAME(store)(out + n + 3 * XP_W, d);
    }
}

static inline __attribute__((always_inline)) void XP_NAME(copy)(float *out, const float *in, int frames)
{
    // Long copies are glibc's (its widest loop, or the CPU's string copy, which writes whole
    // cache lines without reading them first); short ones are inline, where a call and
    // memcpy's size dispatch would cost more than the copy.
    if (frames >= 512) {
        __builtin_memcpy(out, in, (size_t)frames * sizeof(float));
        return;
    }
    int n = frames - frames % (4 * XP_W);
    XP_NAME(copy_blocks)(out, in, n);
    for (; n + XP_W <= frames; n += XP_W) XP_NAME(store)(out + n, XP_NAME(load)(in + n));
    for (; n < frames; n++) out[n] = in[n];
}

static inline __attribute__((always_inline)) void XP_NAME(clear)(float *out, int frames)
{
    VEC zero = XP_NAME(splat)(0);
    int n = 0;
    for (; n + XP_W <= frames; n += XP_W) XP_NAME(store)(out + n, zero);
    for (; n < frames; n++) out[n] = 0;
}

static void XP_NAME(column)(float *out, const float *const *resolved, const int32_t *source, const float *gain,
                            int count, int frames)
{
    if (count <= 0) {
        XP_NAME(clear)(out, frames);
        return;
    }
    float *outs[1] = {out};
    XP_NAME(tile_t)(1, outs, resolved, source, gain, count, 0, frames);
}

// T outputs along linear ramps of the same sources and position: out[t][n] = sum over k of
// (from[t][k] + step[t][k] * (position + 1 + n)) * resolved[source[k]][n], frames [n, end) in
// steps of V vectors. Written as two sums over the sources, a = sum first * x and b = sum step
// * x (first[t * count + k] the gain at the block's first frame), so that out = a + n * b: the
// gains are constant over the block, as a steady tile's are (two multiply-adds an output and
// source, nothing recomputed per chunk), one load a source and vector serves the T outputs,
// and each output is written once. A frame's arithmetic is the same whatever V and T (the
// sums in the sources' order, then one multiply-add), so an output stays bit-identical beside
// any other ramping with it.
static inline __attribute__((always_inline)) int XP_NAME(ramp_vectors)(
    const int T, const int V, float *const *out, const float *const *resolved, const int32_t *source,
    const float *first, const float *const *step, int count, int n, int end)
{
    VEC lane;
    for (int l = 0; l < XP_W; l++) lane[l] = (float)l;
    for (; n + V * XP_W <= end; n += V * XP_W) {
        VEC a[XP_TILE_WIDTH][XP_ACC], b[XP_TILE_WIDTH][XP_ACC], x[XP_ACC];
        for (int t = 0; t < T; t++)
            for (int v = 0; v < V; v++) a[t][v] = b[t][v] = XP_NAME(splat)(0);
        for (int k = 0; k < count; k++) {
            const float *p = resolved[source[k]] + n;
            for (int v = 0; v < V; v++) x[v] = XP_NAME(load)(p + v * XP_W);
            for (int t = 0; t < T; t++) {
                VEC g = XP_NAME(splat)(first[t * count + k]), st = XP_NAME(splat)(step[t][k]);
                for (int v = 0; v < V; v++) {
                    a[t][v] = MADDV(g, x[v], a[t][v]);
                    b[t][v] = MADDV(st, x[v], b[t][v]);
                }
            }
        }
        for (int t = 0; t < T; t++)
            for (int v = 0; v < V; v++) {
                VEC i = lane + XP_NAME(splat)((float)(n + v * XP_W));
                XP_NAME(store)(out[t] + n + v * XP_W, MADDV(i, b[t][v], a[t][v]));
            }
    }
    return n;
}

// T outputs along their ramps: wide chunks (as many vectors as the registers hold for T),
// then single vectors, then single frames.
static inline __attribute__((always_inline)) void XP_NAME(ramp_t)(
    const int T, float *const *out, const float *const *resolved, const int32_t *source, const float *const *from,
    const float *const *step, int count, int frames, int position)
{
    // Each gain at the block's first frame (on the stack: at most XP_TILE_WIDTH x the inputs).
    float first[T * count];
    const float at = (float)(position + 1);
    for (int t = 0; t < T; t++)
        for (int k = 0; k < count; k++) first[t * count + k] = MADDS(step[t][k], at, from[t][k]);
    const int wide = XP_ACC / (2 * T) > 0 ? XP_ACC / (2 * T) : 1;
    int n = XP_NAME(ramp_vectors)(T, wide, out, resolved, source, first, step, count, 0, frames);
    n = XP_NAME(ramp_vectors)(T, 1, out, resolved, source, first, step, count, n, frames);
    for (; n < frames; n++) {
        for (int t = 0; t < T; t++) {
            float a = 0, b = 0;
            for (int k = 0; k < count; k++) {
                const float x = resolved[source[k]][n];
                a = MADDS(first[t * count + k], x, a);
                b = MADDS(step[t][k], x, b);
            }
            out[t][n] = MADDS((float)n, b, a);
        }
    }
}

static void XP_NAME(ramp_tile)(int width, float *const *out, const float *const *resolved, const int32_t *source,
                               const float *const *from, const float *const *step, int count, int frames, int position)
{
    if (count <= 0) {
        for (int t = 0; t < width; t++) XP_NAME(clear)(out[t], frames);
        return;
    }
    switch (width) {
    case 1: XP_NAME(ramp_t)(1, out, resolved, source, from, step, count, frames, position); break;
    case 2: XP_NAME(ramp_t)(2, out, resolved, source, from, step, count, frames, position); break;
    case 3: XP_NAME(ramp_t)(3, out, resolved, source, from, step, count, frames, position); break;
    default: XP_NAME(ramp_t)(4, out, resolved, source, from, step, count, frames, position); break;
    }
}

// The copies, when the caller handed every input and output the program names and the
// block is whole wide vectors: no bounds checks, no tails (routings are mostly this).
static inline __attribute__((always_inline)) int XP_NAME(copies_fast)(
    const xp_program *p, const float *const *ins, int input_count, float *const *outs, int output_count, int frames)
{
    if (input_count < p->inputs || output_count < p->outputs || frames % (4 * XP_W) != 0 || frames >= 512) return 0;
    for (int c = 0; c < p->copies; c++) {
        float *out = outs[p->copy_out[c]];
        const float *in = ins[p->copy_in[c]];
        if (!out) continue;
        if (in) XP_NAME(copy_blocks)(out, in, frames);
        else XP_NAME(clear)(out, frames);
    }
    return 1;
}

static void XP_NAME(run)(const xp_program *p, const float *const *ins, int input_count, float *const *outs,
                         int output_count, int frames)
{
    if (!XP_NAME(copies_fast)(p, ins, input_count, outs, output_count, frames)) {
        for (int c = 0; c < p->copies; c++) {
            int j = p->copy_out[c], i = p->copy_in[c];
            float *out = j < output_count ? outs[j] : NULL;
            if (!out) continue;
            const float *in = i < input_count ? ins[i] : NULL;
            if (in) XP_NAME(copy)(out, in, frames);
            else XP_NAME(clear)(out, frames);
        }
    }
    for (int c = 0; c < p->clears; c++) {
        int j = p->clear_out[c];
        float *out = j < output_count ? outs[j] : NULL;
        if (out) XP_NAME(clear)(out, frames);
    }
    if (p->tiles == 0) return;
    xp_resolve(p->resolved, p->inputs, ins, input_count, 0);
    // Frames in chunks. Packed: a chunk of every input the tiles read fills the panel (in L1),
    // contiguous. Otherwise chunks keep the inputs in L2 while every tile reads them. Either
    // way only the last chunk has tails.
    int chunk = frames;
    if (p->pack) {
        // Whole wide blocks of a four-output tile: (XP_ACC / 4) * XP_W frames, at most 64.
        const int block = (XP_ACC / 4) * XP_W;
        chunk = 8192 / p->inputs;
        chunk -= chunk % block;
        if (chunk < block) chunk = block;
    } else if ((long)p->inputs * frames > XP_CHUNK_FLOATS) {
        chunk = XP_CHUNK_FLOATS / p->inputs;
        chunk -= chunk % (8 * XP_W);
        if (chunk < 8 * XP_W) chunk = 8 * XP_W;
    }
    for (int start = 0; start < frames; start += chunk) {
        int end = frames - start < chunk ? frames : start + chunk;
        const float *const *source = p->resolved;
        int from = start, to = end, shift = 0;
        if (p->pack) {
            for (int k = 0; k < p->packed_count; k++) {
                int i = p->packed_in[k];
                float *row = p->panel + (size_t)i * chunk;
                XP_NAME(copy)(row, p->resolved[i] + start, end - start);
                p->packed[i] = row;
            }
            source = p->packed;
            from = 0;
            to = end - start;
            shift = start;
        }
        for (int t = 0; t < p->tiles; t++) {
            int width = p->tile_width[t];
            float *out[XP_TILE_WIDTH];
            int listened = 0;
            for (int w = 0; w < width; w++) {
                int j = p->tile_out[t * XP_TILE_WIDTH + w];
                float *o = j < output_count ? outs[j] : NULL;
                if (o) listened = 1;
                out[w] = (o ? o : xp_sink) + shift;
            }
            if (!listened) continue;
            int first = p->tile_start[t];
            XP_NAME(tile)(width, out, source, p->tile_source + first, p->tile_gain + p->tile_gain_start[t],
                          p->tile_start[t + 1] - first, from, to);
        }
    }
}

#undef VEC
#undef MADDV
#undef MADDS
