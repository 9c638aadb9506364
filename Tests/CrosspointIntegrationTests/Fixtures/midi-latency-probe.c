/* How many cycles a MIDI change takes to reach a Crosspoint node's audio, and whether it glides
 * (MIDIControlTests). Two pw_filter nodes in this process, in the same graph as the node:
 *
 *   xp-probe-source: "out" (audio, 0.5 constant) -> the node's in_AUX0
 *                    "midi" (MIDI) -> the node's midi_in; at graph position START it sends a note on
 *                    (channel 1, note 60: the drop-in's momentary mute of output FL)
 *   xp-probe-sink:   "in" (audio) <- the node's out_FL
 *
 * Both read the graph's clock (spa_io_position: the same frame position for every node of a
 * cycle), so the sink can say in which cycle after the note's the output first moved, and how
 * big the largest step a sample was while it fell (a ramp glides; a jump clicks). The step is
 * per frame of the graph's clock: a cycle the sink missed (an xrun of a loaded machine at
 * quantum 64: the sink's process is not called, the clock moves on) is a gap of that many
 * frames between two samples, not a click; `gaps` counts them. `cycles` counts the cycles the
 * sink ran between the note and the change, not those it missed (`missed`).
 * The node applies a note on the daemon's main loop, an ordinary thread: on a loaded machine
 * it waits for that thread's turn. So the probe also measures the turn: as the note goes, it
 * wakes its own main loop, which sends a core sync on a connection of its own; `sync_ms` is the
 * time from the note to the daemon's answer (the daemon's main loop read the note's event no
 * later than it answered: the event was pending first), an upper bound of the wait.
 * Prints one line, `sent=FRAME heard=FRAME sample=INDEX quantum=FRAMES cycles=N max_step=X
 * fell_to=Y gaps=N missed=N sync_ms=T`, then exits; `xp-probe: timeout` after 20 s without.
 *
 * Built by the test with the toolchain's clang: cc -o probe midi-latency-probe.c $(pkg-config
 * --cflags --libs libpipewire-0.3) -lm. PipeWire 1.4 reads only UMP on a MIDI port: the note is
 * written as UMP there (argv[1] = "ump"), as MIDI 1.0 bytes on 0.3. */
#include <math.h>
#include <stdatomic.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include <pipewire/pipewire.h>
#include <pipewire/filter.h>
#include <spa/control/control.h>
#include <spa/pod/builder.h>

#define LEVEL 0.5f

struct probe {
	struct pw_main_loop *loop;
	struct pw_filter *source, *sink;
	void *out, *midi, *in;
	int ump;
	/* source: the position the note goes at (the first cycle past `start`), and when it went */
	uint64_t start;
	_Atomic int64_t sent;
	/* sink */
	int64_t heard, sample, quantum;
	float last, max_step, lowest;
	int64_t last_frame, gaps, missed;
	int64_t falling_until;
	_Atomic int done;
	/* the daemon's main loop: a sync sent as the note went, and when it was answered */
	struct pw_context *context;
	struct pw_core *core;
	struct spa_hook core_listener;
	struct spa_source *wake;
	_Atomic int64_t sent_ns;
	int sync_seq;
	int64_t answered_ns;
};

static int64_t monotonic_ns(void)
{
	struct timespec t;
	clock_gettime(CLOCK_MONOTONIC, &t);
	return (int64_t)t.tv_sec * 1000000000 + t.tv_nsec;
}

static void source_process(void *userdata, struct spa_io_position *position)
{
	struct probe *p = userdata;
	uint32_t n = position->clock.duration;
	uint64_t now = position->clock.position;
	float *out = pw_filter_get_dsp_buffer(p->out, n);
	if (out)
		for (uint32_t i = 0; i < n; i++) out[i] = LEVEL;
	struct pw_buffer *b = pw_filter_dequeue_buffer(p->midi);
	if (b == NULL)
		return;
	struct spa_data *d = &b->buffer->datas[0];
	if (d->data != NULL) {
		struct spa_pod_builder builder;
		struct spa_pod_frame frame;
		spa_pod_builder_init(&builder, d->data, d->maxsize);
		spa_pod_builder_push_sequence(&builder, &frame, 0);
		if (p->start == 0)
			p->start = now + 48000; /* a second after the first cycle: everything is linked */
		if (atomic_load(&p->sent) < 0 && now >= p->start) {
			if (p->ump) {
				uint32_t word = 0x20000000u | 0x90u << 16 | 60u << 8 | 100u;
				spa_pod_builder_control(&builder, 0, 4 /* SPA_CONTROL_UMP */);
				spa_pod_builder_bytes(&builder, &word, sizeof(word));
			} else {
				uint8_t bytes[3] = { 0x90, 60, 100 };
				spa_pod_builder_control(&builder, 0, SPA_CONTROL_Midi);
				spa_pod_builder_bytes(&builder, bytes, 3);
			}
			atomic_store(&p->sent_ns, monotonic_ns());
			atomic_store(&p->sent, (int64_t)now);
			pw_loop_signal_event(pw_main_loop_get_loop(p->loop), p->wake);
		}
		spa_pod_builder_pop(&builder, &frame);
		d->chunk->offset = 0;
		d->chunk->stride = 1;
		d->chunk->size = builder.state.offset;
	}
	pw_filter_queue_buffer(p->midi, b);
}

static void sink_process(void *userdata, struct spa_io_position *position)
{
	struct probe *p = userdata;
	uint32_t n = position->clock.duration;
	int64_t now = (int64_t)position->clock.position;
	float *in = pw_filter_get_dsp_buffer(p->in, n);
	int64_t sent = atomic_load(&p->sent);
	if (in == NULL || sent < 0 || atomic_load(&p->done))
		return;
	if (p->last_frame >= 0 && now != p->last_frame + 1) {
		if (p->heard >= 0)
			p->gaps++;
		else
			p->missed += (now - p->last_frame - 1) / n;
	}
	for (uint32_t i = 0; i < n; i++) {
		float x = in[i];
		int64_t frame = now + (int64_t)i;
		if (p->heard < 0 && now >= sent && x < LEVEL - 0.001f) {
			p->heard = now;
			p->sample = i;
			p->quantum = n;
			p->falling_until = now + 48000 / 10; /* watch the fall for 100 ms */
		}
		if (p->heard >= 0) {
			int64_t apart = p->last_frame >= 0 && frame > p->last_frame ? frame - p->last_frame : 1;
			float step = fabsf(x - p->last) / (float)apart;
			if (step > p->max_step) p->max_step = step;
			if (x < p->lowest) p->lowest = x;
		}
		p->last = x;
		p->last_frame = frame;
	}
	if (p->heard >= 0 && now >= p->falling_until)
		atomic_store(&p->done, 1);
}

static const struct pw_filter_events source_events = { PW_VERSION_FILTER_EVENTS, .process = source_process };
static const struct pw_filter_events sink_events = { PW_VERSION_FILTER_EVENTS, .process = sink_process };

/* main loop: the note went; ask the daemon's main loop for its turn */
static void woken(void *userdata, uint64_t count)
{
	struct probe *p = userdata;
	if (p->sync_seq == 0)
		p->sync_seq = pw_core_sync(p->core, PW_ID_CORE, 0);
}

static void core_done(void *userdata, uint32_t id, int seq)
{
	struct probe *p = userdata;
	if (id == PW_ID_CORE && p->sync_seq != 0 && seq == p->sync_seq && p->answered_ns == 0)
		p->answered_ns = monotonic_ns();
}

static const struct pw_core_events core_events = { PW_VERSION_CORE_EVENTS, .done = core_done };

static void tick(void *userdata, uint64_t expirations)
{
	struct probe *p = userdata;
	static int ticks;
	if (atomic_load(&p->done) && p->answered_ns != 0) {
		int64_t sent = atomic_load(&p->sent);
		printf("sent=%lld heard=%lld sample=%lld quantum=%lld cycles=%lld max_step=%.6f fell_to=%.6f gaps=%lld missed=%lld sync_ms=%.3f\n",
		       (long long)sent, (long long)p->heard, (long long)p->sample, (long long)p->quantum,
		       (long long)((p->heard - sent) / (p->quantum > 0 ? p->quantum : 1) - p->missed), p->max_step, p->lowest,
		       (long long)p->gaps, (long long)p->missed, (double)(p->answered_ns - atomic_load(&p->sent_ns)) / 1e6);
		pw_main_loop_quit(p->loop);
	} else if (++ticks > 400) {
		printf("xp-probe: timeout\n");
		pw_main_loop_quit(p->loop);
	}
}

static void *port(struct pw_filter *f, enum spa_direction dir, const char *name, const char *format)
{
	return pw_filter_add_port(f, dir, PW_FILTER_PORT_FLAG_MAP_BUFFERS, 0,
		pw_properties_new(PW_KEY_PORT_NAME, name, PW_KEY_FORMAT_DSP, format, NULL), NULL, 0);
}

int main(int argc, char *argv[])
{
	struct probe p = { .sent = -1, .heard = -1, .lowest = 1.0f, .last = LEVEL, .last_frame = -1 };
	p.ump = argc > 1 && strcmp(argv[1], "ump") == 0;
	pw_init(&argc, &argv);
	p.loop = pw_main_loop_new(NULL);
	struct pw_loop *loop = pw_main_loop_get_loop(p.loop);
	p.wake = pw_loop_add_event(loop, woken, &p);
	p.context = pw_context_new(loop, NULL, 0);
	p.core = p.context ? pw_context_connect(p.context, NULL, 0) : NULL;
	if (p.core == NULL) {
		fprintf(stderr, "xp-probe: cannot connect\n");
		return 1;
	}
	pw_core_add_listener(p.core, &p.core_listener, &core_events, &p);
	p.source = pw_filter_new_simple(loop, "xp-probe-source",
		pw_properties_new(PW_KEY_MEDIA_TYPE, "Audio", PW_KEY_MEDIA_CATEGORY, "Filter", PW_KEY_MEDIA_ROLE, "DSP",
				  PW_KEY_NODE_AUTOCONNECT, "false", NULL), &source_events, &p);
	p.sink = pw_filter_new_simple(loop, "xp-probe-sink",
		pw_properties_new(PW_KEY_MEDIA_TYPE, "Audio", PW_KEY_MEDIA_CATEGORY, "Filter", PW_KEY_MEDIA_ROLE, "DSP",
				  PW_KEY_NODE_AUTOCONNECT, "false", NULL), &sink_events, &p);
	p.out = port(p.source, PW_DIRECTION_OUTPUT, "out", "32 bit float mono audio");
	p.midi = port(p.source, PW_DIRECTION_OUTPUT, "midi", p.ump ? "32 bit raw UMP" : "8 bit raw midi");
	p.in = port(p.sink, PW_DIRECTION_INPUT, "in", "32 bit float mono audio");
	if (pw_filter_connect(p.source, PW_FILTER_FLAG_RT_PROCESS, NULL, 0) < 0 ||
	    pw_filter_connect(p.sink, PW_FILTER_FLAG_RT_PROCESS, NULL, 0) < 0) {
		fprintf(stderr, "xp-probe: cannot connect\n");
		return 1;
	}
	struct spa_source *timer = pw_loop_add_timer(loop, tick, &p);
	struct timespec value = { 0, 50 * 1000 * 1000 }, interval = { 0, 50 * 1000 * 1000 };
	pw_loop_update_timer(loop, timer, &value, &interval, false);
	pw_main_loop_run(p.loop);
	pw_filter_destroy(p.source);
	pw_filter_destroy(p.sink);
	pw_core_disconnect(p.core);
	pw_context_destroy(p.context);
	pw_main_loop_destroy(p.loop);
	pw_deinit();
	return 0;
}
