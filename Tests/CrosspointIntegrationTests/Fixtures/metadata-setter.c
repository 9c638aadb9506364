/* A client of the `default` metadata that is bound before it sets anything:
 * `metadata-setter KEY VALUE` binds the metadata, waits for the daemon (a round trip), prints
 * "bound", and on SIGUSR1 sets KEY of subject 0 to VALUE (type Spa:String:JSON), prints "set"
 * once the daemon has the request, and ends.
 *
 * VirtualDeviceTests uses it to make PipeWire's metadata drop a change for the clients bound
 * before (module-metadata's metadata_property): a set sent while the session manager is
 * stopped, then a bind by another client, then the session manager let go on.
 *
 *   cc -o metadata-setter metadata-setter.c $(pkg-config --cflags --libs libpipewire-0.3)
 */
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include <pipewire/pipewire.h>
#include <pipewire/extensions/metadata.h>

struct data {
	struct pw_main_loop *loop;
	struct pw_core *core;
	struct pw_registry *registry;
	struct spa_hook registry_listener;
	struct pw_metadata *metadata;
	struct spa_hook core_listener;
	int pending;
	int done;
	int signalled;
};

static void on_signal(void *user, int signal_number)
{
	struct data *d = user;
	d->signalled = 1;
	pw_main_loop_quit(d->loop);
}

static void registry_global(void *user, uint32_t id, uint32_t permissions, const char *type,
			    uint32_t version, const struct spa_dict *props)
{
	struct data *d = user;
	const char *name = props ? spa_dict_lookup(props, PW_KEY_METADATA_NAME) : NULL;
	if (d->metadata != NULL || strcmp(type, PW_TYPE_INTERFACE_Metadata) != 0 || name == NULL || strcmp(name, "default") != 0)
		return;
	d->metadata = pw_registry_bind(d->registry, id, type, PW_VERSION_METADATA, 0);
}

static const struct pw_registry_events registry_events = {
	PW_VERSION_REGISTRY_EVENTS,
	.global = registry_global,
};

static void core_done(void *user, uint32_t id, int seq)
{
	struct data *d = user;
	if (id == PW_ID_CORE && seq == d->pending) {
		d->done = 1;
		pw_main_loop_quit(d->loop);
	}
}

static const struct pw_core_events core_events = {
	PW_VERSION_CORE_EVENTS,
	.done = core_done,
};

static void roundtrip(struct data *d)
{
	d->done = 0;
	d->pending = pw_core_sync(d->core, PW_ID_CORE, d->pending);
	while (!d->done)
		pw_main_loop_run(d->loop);
}

int main(int argc, char *argv[])
{
	struct data d = { 0 };

	setvbuf(stdout, NULL, _IOLBF, 0);
	if (argc != 3) {
		fprintf(stderr, "usage: metadata-setter KEY VALUE\n");
		return 2;
	}
	pw_init(&argc, &argv);
	d.loop = pw_main_loop_new(NULL);
	pw_loop_add_signal(pw_main_loop_get_loop(d.loop), SIGUSR1, on_signal, &d);
	struct pw_context *context = pw_context_new(pw_main_loop_get_loop(d.loop), NULL, 0);
	d.core = pw_context_connect(context, NULL, 0);
	if (d.core == NULL) {
		fprintf(stderr, "metadata-setter: cannot connect\n");
		return 1;
	}
	pw_core_add_listener(d.core, &d.core_listener, &core_events, &d);
	d.registry = pw_core_get_registry(d.core, PW_VERSION_REGISTRY, 0);
	pw_registry_add_listener(d.registry, &d.registry_listener, &registry_events, &d);
	roundtrip(&d);
	if (d.metadata == NULL) {
		fprintf(stderr, "metadata-setter: no default metadata\n");
		return 1;
	}
	roundtrip(&d);
	printf("bound\n");
	while (!d.signalled)
		pw_main_loop_run(d.loop);
	pw_metadata_set_property(d.metadata, 0, argv[1], "Spa:String:JSON", argv[2]);
	/* The daemon has the request once it answers a sync sent after it; the session manager
	 * (the metadata's owner) may not have it yet. */
	roundtrip(&d);
	printf("set\n");
	pw_proxy_destroy((struct pw_proxy *)d.metadata);
	pw_core_disconnect(d.core);
	pw_context_destroy(context);
	pw_main_loop_destroy(d.loop);
	return 0;
}
