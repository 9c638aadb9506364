/* The C contenders and the test signal of scripts/bench-graph: minimal pw_filter nodes written as
 * PipeWire's own example (src/examples/audio-dsp-filter.c), N mono float DSP inputs, M outputs.
 *
 *   copy    N in, N out: out[j] = in[j], one memcpy per port (the floor of any routing)
 *   dense   N in, M out: out[j] = sum_i g[i][j] * in[i], a plain triple loop (per output, per input,
 *           per frame), the gains of bench_gain() below, the same as the other contenders'
 *   average the same loop with every gain 1/N (2x1: the 0.5, 0.5 downmix)
 *   source  M outputs of a non-silent test signal (a sum of sines, each port at another offset)
 *   sink    N inputs, read by nobody: gives the contenders' outputs a buffer (an unlinked output has none)
 *
 * Built twice from this file: with -DBENCH_MODULE as a PipeWire module (bench-node.so, loaded in the
 * daemon: `name = libpipewire-module-bench-node args = { node.name = ... bench.mode = copy
 * bench.inputs = 64 bench.outputs = 64 }`), and without it as a client program:
 *   bench-node-client NAME MODE INPUTS OUTPUTS
 */
#include <errno.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <pipewire/pipewire.h>
#include <pipewire/filter.h>
#include <spa/utils/result.h>
#ifdef BENCH_MODULE
#include <pipewire/impl.h>
#endif

#define MAX_PORTS 256
#define MAX_FRAMES 8192
#define TABLE 48000 /* one second of the test signal at 48 kHz */

enum mode { MODE_COPY, MODE_DENSE, MODE_SOURCE, MODE_SINK, MODE_AVERAGE };

struct node {
	struct pw_filter *filter;
	struct spa_hook filter_listener;
	enum mode mode;
	int n_in, n_out;
	void *in[MAX_PORTS], *out[MAX_PORTS];
	float *gain;        /* dense: n_in x n_out, row-major (row = input) */
	float *table;       /* source: the test signal */
	uint32_t position;  /* source: where the next block starts in the table */
	float zero[MAX_FRAMES];
#ifdef BENCH_MODULE
	struct pw_impl_module *module;
	struct spa_hook module_listener;
	struct pw_core *core;
	bool own_core;
#else
	struct pw_main_loop *loop;
#endif
};

/* The dense gain from input i to output j of an n-input matrix: all non-zero, from 0.1/n to 0.9/n.
 * scripts/lib/bench-graph/bench_graph.py writes the same ones for Crosspoint and filter-chain. */
static float bench_gain(int i, int j, int n)
{
	return (float)((0.1 + 0.8 * ((i * 5 + j * 3) % 11) / 10.0) / n);
}

static float *dsp_input(struct node *d, int i, uint32_t n)
{
	float *p = pw_filter_get_dsp_buffer(d->in[i], n);
	return p ? p : d->zero;
}

static void on_process(void *data, struct spa_io_position *position)
{
	struct node *d = data;
	uint32_t n = SPA_MIN((uint32_t)position->clock.duration, (uint32_t)MAX_FRAMES);
	int i, j;
	uint32_t f;

	switch (d->mode) {
	case MODE_COPY:
		for (j = 0; j < d->n_out; j++) {
			float *out = pw_filter_get_dsp_buffer(d->out[j], n);
			if (out == NULL)
				continue;
			memcpy(out, dsp_input(d, j, n), n * sizeof(float));
		}
		break;
	case MODE_DENSE:
	case MODE_AVERAGE: {
		float *in[MAX_PORTS];
		for (i = 0; i < d->n_in; i++)
			in[i] = dsp_input(d, i, n);
		for (j = 0; j < d->n_out; j++) {
			float *out = pw_filter_get_dsp_buffer(d->out[j], n);
			if (out == NULL)
				continue;
			for (f = 0; f < n; f++)
				out[f] = 0.0f;
			for (i = 0; i < d->n_in; i++) {
				float g = d->gain[i * d->n_out + j];
				for (f = 0; f < n; f++)
					out[f] += g * in[i][f];
			}
		}
		break;
	}
	case MODE_SOURCE:
		for (j = 0; j < d->n_out; j++) {
			float *out = pw_filter_get_dsp_buffer(d->out[j], n);
			uint32_t at = (d->position + (uint32_t)j * 4801u) % TABLE, done = 0;
			if (out == NULL)
				continue;
			while (done < n) {
				uint32_t chunk = SPA_MIN(n - done, TABLE - at);
				memcpy(out + done, d->table + at, chunk * sizeof(float));
				done += chunk;
				at = 0;
			}
		}
		d->position = (d->position + n) % TABLE;
		break;
	case MODE_SINK:
		break;
	}
}

static const struct pw_filter_events filter_events = {
	PW_VERSION_FILTER_EVENTS,
	.process = on_process,
};

static int parse_mode(const char *s, enum mode *m)
{
	if (s == NULL) return -EINVAL;
	if (strcmp(s, "copy") == 0) *m = MODE_COPY;
	else if (strcmp(s, "dense") == 0) *m = MODE_DENSE;
	else if (strcmp(s, "source") == 0) *m = MODE_SOURCE;
	else if (strcmp(s, "sink") == 0) *m = MODE_SINK;
	else if (strcmp(s, "average") == 0) *m = MODE_AVERAGE;
	else return -EINVAL;
	return 0;
}

/* Fills D for MODE with N_IN inputs and N_OUT outputs; creates the ports and connects the filter. */
static int setup(struct node *d, int n_in, int n_out)
{
	char name[32];
	int i, j;

	if (d->mode == MODE_SOURCE) n_in = 0;
	if (d->mode == MODE_SINK) n_out = 0;
	if (d->mode == MODE_COPY && n_out != n_in) return -EINVAL;
	if (n_in < 0 || n_out < 0 || n_in > MAX_PORTS || n_out > MAX_PORTS) return -EINVAL;
	d->n_in = n_in;
	d->n_out = n_out;
	if (d->mode == MODE_DENSE || d->mode == MODE_AVERAGE) {
		if ((d->gain = calloc((size_t)n_in * n_out, sizeof(float))) == NULL) return -errno;
		for (i = 0; i < n_in; i++)
			for (j = 0; j < n_out; j++)
				d->gain[i * n_out + j] = d->mode == MODE_DENSE ? bench_gain(i, j, n_in) : 1.0f / n_in;
	}
	if (d->mode == MODE_SOURCE) {
		if ((d->table = calloc(TABLE, sizeof(float))) == NULL) return -errno;
		/* 100, 300 and 1100 Hz, each a whole number of periods in the table: it loops seamlessly */
		for (uint32_t k = 0; k < TABLE; k++) {
			double t = (double)k / 48000.0;
			d->table[k] = (float)(0.3 * sin(2 * M_PI * 100 * t) + 0.2 * sin(2 * M_PI * 300 * t)
					+ 0.1 * sin(2 * M_PI * 1100 * t));
		}
	}
	for (i = 0; i < n_in; i++) {
		snprintf(name, sizeof name, "in_AUX%d", i);
		d->in[i] = pw_filter_add_port(d->filter, PW_DIRECTION_INPUT, PW_FILTER_PORT_FLAG_MAP_BUFFERS, 0,
			pw_properties_new(PW_KEY_FORMAT_DSP, "32 bit float mono audio", PW_KEY_PORT_NAME, name, NULL), NULL, 0);
	}
	for (j = 0; j < n_out; j++) {
		snprintf(name, sizeof name, "out_AUX%d", j);
		d->out[j] = pw_filter_add_port(d->filter, PW_DIRECTION_OUTPUT, PW_FILTER_PORT_FLAG_MAP_BUFFERS, 0,
			pw_properties_new(PW_KEY_FORMAT_DSP, "32 bit float mono audio", PW_KEY_PORT_NAME, name, NULL), NULL, 0);
	}
	return pw_filter_connect(d->filter, PW_FILTER_FLAG_RT_PROCESS, NULL, 0);
}

static struct pw_properties *node_props(const char *name)
{
	return pw_properties_new(PW_KEY_MEDIA_TYPE, "Audio", PW_KEY_MEDIA_CATEGORY, "Filter",
		PW_KEY_MEDIA_ROLE, "DSP", PW_KEY_NODE_NAME, name, NULL);
}

static void node_free(struct node *d)
{
	if (d->filter) pw_filter_destroy(d->filter);
	free(d->gain);
	free(d->table);
}

#ifdef BENCH_MODULE

static void module_destroy(void *data)
{
	struct node *d = data;
	spa_hook_remove(&d->module_listener);
	node_free(d);
	if (d->own_core && d->core) pw_core_disconnect(d->core);
	free(d);
}

static const struct pw_impl_module_events module_events = {
	PW_VERSION_IMPL_MODULE_EVENTS,
	.destroy = module_destroy,
};

SPA_EXPORT
int pipewire__module_init(struct pw_impl_module *module, const char *args)
{
	struct pw_context *context = pw_impl_module_get_context(module);
	struct pw_properties *props = pw_properties_new_string(args ? args : "");
	struct node *d;
	const char *name;
	int res;

	if (props == NULL) return -errno;
	if ((d = calloc(1, sizeof *d)) == NULL) { pw_properties_free(props); return -errno; }
	d->module = module;
	name = pw_properties_get(props, PW_KEY_NODE_NAME);
	if (name == NULL) name = "bench-node";
	if ((res = parse_mode(pw_properties_get(props, "bench.mode"), &d->mode)) < 0) {
		pw_log_error("bench-node: bench.mode must be copy, dense, average, source or sink");
		goto error;
	}
	d->core = pw_context_get_object(context, PW_TYPE_INTERFACE_Core);
	if (d->core == NULL) {
		d->core = pw_context_connect(context, NULL, 0);
		d->own_core = true;
	}
	if (d->core == NULL) { res = -errno; goto error; }
	d->filter = pw_filter_new(d->core, name, node_props(name));
	if (d->filter == NULL) { res = -errno; goto error; }
	pw_filter_add_listener(d->filter, &d->filter_listener, &filter_events, d);
	res = setup(d, pw_properties_get_int32(props, "bench.inputs", 2),
		pw_properties_get_int32(props, "bench.outputs", 2));
	if (res < 0) { pw_log_error("bench-node %s: cannot set up: %s", name, spa_strerror(res)); goto error; }
	pw_impl_module_add_listener(module, &d->module_listener, &module_events, d);
	pw_properties_free(props);
	return 0;
error:
	node_free(d);
	if (d->own_core && d->core) pw_core_disconnect(d->core);
	free(d);
	pw_properties_free(props);
	return res;
}

#else

static void quit(void *data, int signal_number)
{
	struct node *d = data;
	pw_main_loop_quit(d->loop);
}

int main(int argc, char *argv[])
{
	static struct node d;
	int res;

	if (argc != 5 || parse_mode(argv[2], &d.mode) < 0) {
		fprintf(stderr, "usage: %s NAME copy|dense|average|source|sink INPUTS OUTPUTS\n", argv[0]);
		return 2;
	}
	pw_init(&argc, &argv);
	d.loop = pw_main_loop_new(NULL);
	pw_loop_add_signal(pw_main_loop_get_loop(d.loop), SIGINT, quit, &d);
	pw_loop_add_signal(pw_main_loop_get_loop(d.loop), SIGTERM, quit, &d);
	d.filter = pw_filter_new_simple(pw_main_loop_get_loop(d.loop), argv[1], node_props(argv[1]), &filter_events, &d);
	if (d.filter == NULL || (res = setup(&d, atoi(argv[3]), atoi(argv[4]))) < 0) {
		fprintf(stderr, "%s: cannot set up the filter\n", argv[1]);
		return 1;
	}
	pw_main_loop_run(d.loop);
	node_free(&d);
	pw_main_loop_destroy(d.loop);
	pw_deinit();
	return 0;
}

#endif
