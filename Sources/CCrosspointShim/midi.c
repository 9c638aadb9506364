// MIDI ports: the events of a cycle, read and written as spa_pod_sequence buffers with
// pw_filter_dequeue_buffer / pw_filter_queue_buffer (pw_filter_get_dsp_buffer is for audio: it
// ignores the chunk's offset and size and sets an audio stride). The sequence walk, the pod
// checks and the builder are inline functions and macros Swift cannot call. Real-time safe:
// no allocation, no lock, no log; every size read from the buffer is checked against it.
#include "CCrosspointShim.h"

#include <spa/control/control.h>
#include <spa/pod/iter.h>
#include <spa/pod/builder.h>

// SPA_CONTROL_UMP (PipeWire 1.4 and later); the 0.3 headers this may be built with lack it.
#define CPSHIM_CONTROL_UMP 4

// The number of 32-bit words of a UMP message of type `mt` (the UMP specification's table).
static uint32_t ump_words(uint32_t mt)
{
    static const uint8_t words[16] = { 1, 1, 1, 2, 2, 4, 1, 1, 2, 2, 2, 3, 3, 4, 4, 4 };
    return words[mt & 0xf];
}

// Hands `func` the MIDI 1.0 bytes of the UMP words in `body`: MIDI 1.0 channel voice messages
// (type 2) as they are, MIDI 2.0 channel voice messages (type 4) turned into MIDI 1.0 (notes,
// controllers and pitch bend; the rest is dropped).
static uint32_t read_ump(const uint32_t *body, uint32_t count, cpshim_midi_event_func func, void *data)
{
    uint32_t events = 0;
    for (uint32_t i = 0; i < count;) {
        uint32_t w = body[i], mt = w >> 28, n = ump_words(mt);
        if (n > count - i)
            break;
        uint8_t bytes[3];
        uint32_t size = 0;
        if (mt == 2) {
            bytes[0] = (w >> 16) & 0xff;
            bytes[1] = (w >> 8) & 0x7f;
            bytes[2] = w & 0x7f;
            size = ((bytes[0] & 0xf0) == 0xc0 || (bytes[0] & 0xf0) == 0xd0) ? 2 : 3;
        } else if (mt == 4) {
            uint32_t w1 = body[i + 1], status = (w >> 16) & 0xff;
            bytes[0] = status;
            bytes[1] = (w >> 8) & 0x7f;
            switch (status & 0xf0) {
            case 0x80: bytes[2] = 0; size = 3; break;
            case 0x90: bytes[2] = (w1 >> 25) ? (w1 >> 25) : 1; size = 3; break;
            case 0xb0: bytes[2] = w1 >> 25; size = 3; break;
            case 0xe0: bytes[1] = (w1 >> 18) & 0x7f; bytes[2] = w1 >> 25; size = 3; break;
            default: break;
            }
        }
        if (size > 0 && (bytes[0] & 0x80)) {
            func(data, bytes, size);
            events++;
        }
        i += n;
    }
    return events;
}

uint32_t cpshim_midi_read(void *port, cpshim_midi_event_func func, void *data)
{
    struct pw_buffer *b = pw_filter_dequeue_buffer(port);
    if (b == NULL)
        return 0;
    uint32_t events = 0;
    struct spa_buffer *buf = b->buffer;
    if (buf != NULL && buf->n_datas > 0 && buf->datas[0].data != NULL && buf->datas[0].chunk != NULL) {
        struct spa_data *d = &buf->datas[0];
        struct spa_pod *pod = spa_pod_from_data(d->data, d->maxsize, d->chunk->offset, d->chunk->size);
        if (pod != NULL && spa_pod_is_sequence(pod)) {
            struct spa_pod_control *c;
            SPA_POD_SEQUENCE_FOREACH((struct spa_pod_sequence *)pod, c) {
                const uint8_t *body = SPA_POD_BODY(&c->value);
                uint32_t size = SPA_POD_BODY_SIZE(&c->value);
                if (c->type == SPA_CONTROL_Midi) {
                    if (size > 0) {
                        func(data, body, size);
                        events++;
                    }
                } else if (c->type == CPSHIM_CONTROL_UMP) {
                    events += read_ump((const uint32_t *)body, size / 4, func, data);
                }
            }
        }
    }
    pw_filter_queue_buffer(port, b);
    return events;
}

int32_t cpshim_midi_write(void *port, const uint32_t *messages, uint32_t count, bool ump)
{
    struct pw_buffer *b = pw_filter_dequeue_buffer(port);
    if (b == NULL)
        return -1;
    struct spa_buffer *buf = b->buffer;
    int32_t written = 0;
    if (buf != NULL && buf->n_datas > 0 && buf->datas[0].data != NULL && buf->datas[0].chunk != NULL) {
        struct spa_data *d = &buf->datas[0];
        struct spa_pod_builder builder;
        struct spa_pod_frame frame;
        spa_pod_builder_init(&builder, d->data, d->maxsize);
        if (spa_pod_builder_push_sequence(&builder, &frame, 0) == 0) {
            // Each event: the control's offset and type (8 bytes), the value's pod header (8) and
            // its body rounded up to 8; the sequence's end needs nothing more. Stop while there is
            // room for one more, so the sequence is never cut.
            for (; (uint32_t)written < count; written++) {
                if ((uint64_t)builder.state.offset + 24 > d->maxsize)
                    break;
                uint32_t m = messages[written];
                if (ump) {
                    uint32_t word = 0x20000000u | (m & 0xffffffu);
                    spa_pod_builder_control(&builder, 0, CPSHIM_CONTROL_UMP);
                    spa_pod_builder_bytes(&builder, &word, sizeof(word));
                } else {
                    uint8_t bytes[3] = { (m >> 16) & 0xff, (m >> 8) & 0x7f, m & 0x7f };
                    spa_pod_builder_control(&builder, 0, SPA_CONTROL_Midi);
                    spa_pod_builder_bytes(&builder, bytes, 3);
                }
            }
            spa_pod_builder_pop(&builder, &frame);
        }
        d->chunk->offset = 0;
        d->chunk->stride = 1;
        d->chunk->flags = 0;
        d->chunk->size = builder.state.offset <= d->maxsize ? builder.state.offset : 0;
    }
    pw_filter_queue_buffer(port, b);
    return written;
}

struct spa_source *cpshim_loop_add_event(struct pw_loop *loop, spa_source_event_func_t func, void *data)
{
    return pw_loop_add_event(loop, func, data);
}

int cpshim_loop_signal_event(struct pw_loop *loop, struct spa_source *source)
{
    return pw_loop_signal_event(loop, source);
}
