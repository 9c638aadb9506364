/* The control for scripts/stress-churn --control: a stock pw_filter written as PipeWire's own example
 * (src/examples/audio-dsp-filter.c), 4 DSP inputs and 4 outputs, output j = input j, no Crosspoint code. */
#include <stdio.h>
#include <string.h>
#include <signal.h>
#include <pipewire/pipewire.h>
#include <pipewire/filter.h>
#define N 4
static struct pw_main_loop *loop;
static struct pw_filter *filter;
static void *ins[N], *outs[N];
static void on_process(void *data, struct spa_io_position *position)
{
	uint32_t n = position->clock.duration;
	for (int j = 0; j < N; j++) {
		float *out = pw_filter_get_dsp_buffer(outs[j], n);
		float *in = pw_filter_get_dsp_buffer(ins[j], n);
		if (out == NULL) continue;
		if (in) memcpy(out, in, n * sizeof(float)); else memset(out, 0, n * sizeof(float));
	}
}
static const struct pw_filter_events events = { PW_VERSION_FILTER_EVENTS, .process = on_process };
static void quit(void *d, int s) { pw_main_loop_quit(loop); }
int main(int argc, char *argv[])
{
	pw_init(&argc, &argv);
	loop = pw_main_loop_new(NULL);
	pw_loop_add_signal(pw_main_loop_get_loop(loop), SIGINT, quit, NULL);
	pw_loop_add_signal(pw_main_loop_get_loop(loop), SIGTERM, quit, NULL);
	filter = pw_filter_new_simple(pw_main_loop_get_loop(loop), "xp-churn",
		pw_properties_new(PW_KEY_MEDIA_TYPE, "Audio", PW_KEY_MEDIA_CATEGORY, "Filter", PW_KEY_MEDIA_ROLE, "DSP",
				  PW_KEY_NODE_NAME, "xp-churn", NULL), &events, NULL);
	char name[32];
	for (int k = 0; k < N; k++) {
		snprintf(name, sizeof name, "in_AUX%d", k);
		ins[k] = pw_filter_add_port(filter, PW_DIRECTION_INPUT, PW_FILTER_PORT_FLAG_MAP_BUFFERS, 0,
			pw_properties_new(PW_KEY_FORMAT_DSP, "32 bit float mono audio", PW_KEY_PORT_NAME, name, NULL), NULL, 0);
		snprintf(name, sizeof name, "out_AUX%d", k);
		outs[k] = pw_filter_add_port(filter, PW_DIRECTION_OUTPUT, PW_FILTER_PORT_FLAG_MAP_BUFFERS, 0,
			pw_properties_new(PW_KEY_FORMAT_DSP, "32 bit float mono audio", PW_KEY_PORT_NAME, name, NULL), NULL, 0);
	}
	if (pw_filter_connect(filter, PW_FILTER_FLAG_RT_PROCESS, NULL, 0) < 0) return 1;
	pw_main_loop_run(loop);
	pw_filter_destroy(filter);
	pw_main_loop_destroy(loop);
	pw_deinit();
	return 0;
}
