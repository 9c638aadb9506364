// The parts of libpipewire-0.3 and libspa-0.2 that Crosspoint uses.
#pragma once
#include <pipewire/pipewire.h>
#include <pipewire/filter.h>
#include <pipewire/impl-module.h>
#include <pipewire/extensions/metadata.h>
#include <spa/pod/builder.h>
#include <spa/pod/parser.h>
#include <spa/pod/iter.h>
#include <spa/param/props.h>
#include <spa/param/param.h>
#include <spa/param/audio/raw.h>
#include <spa/utils/json.h>
#include <spa/utils/result.h>
#include <spa/utils/defs.h>
