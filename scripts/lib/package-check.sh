#!/usr/bin/env bash
# Runs inside a fresh Debian root where scripts/test-package installed the package: what a
# user does after `apt-get install ./crosspoint_*.deb`, with nothing of the build in reach (no
# Swift, no compiler, no repository). Only Debian's pipewire tools, dbus and the package.
#
#   package-check.sh installed VERSION   enable the setup, start PipeWire and WirePlumber, play
#                                         through the node, change it with the command, save a
#                                         preset, ask `crosspoint serve`, play into the virtual
#                                         device of a second setup (crosspoint-mono) and record
#                                         the stand-in interface; leaves the daemons running
#   package-check.sh upgraded VERSION    (after installing a newer package over it) restart
#                                         PipeWire: the node comes back with its state, the
#                                         preset is there; leaves the daemons running
#   package-check.sh removed             (after apt-get remove) the daemon still runs; restarted,
#                                         it comes up without the node and plays
#
# Recordings go to /tmp/check/*.wav (mono float): the caller measures them on the host, which
# has sox. The input, /tmp/check/in.wav, is the caller's too.
set -euo pipefail
phase=$1 version=${2:-}
export HOME=/root XDG_RUNTIME_DIR=/tmp/runtime XDG_CONFIG_HOME=/root/.config XDG_STATE_HOME=/root/.local/state
export DBUS_SESSION_BUS_ADDRESS=unix:path=/tmp/runtime/bus
out=/tmp/check
mkdir -p "$out" "$XDG_RUNTIME_DIR"
chmod 0700 "$XDG_RUNTIME_DIR"

step() { echo "-- $phase: $*" >&2; }
fail() { echo "package-check: failed ($phase): $*" >&2; exit 1; }
# Runs COMMAND... every 0.1 s until it succeeds, for at most SECONDS: wait_until SECONDS COMMAND...
wait_until() {
    local tries=$(($1 * 10))
    shift
    until "$@"; do
        ((--tries > 0)) || return 1
        sleep 0.1
    done
}
# A grep at the end of a pipe reads all its input (no -q): with pipefail, a -q that stops at
# the first match leaves the writer a SIGPIPE, and the pipe fails now and then though the text
# matched (CI, 2026-11-27: "module.version is not 0.1.0: module.version = "0.1.0"").
has_port() { pw-link "$1" 2>/dev/null | grep -x "$2" >/dev/null; }
node_listed() { crosspoint list 2>/dev/null | grep -w "$1" >/dev/null; }
session_ready() {
    [ "$(pw-cli ls Client 2>/dev/null | grep -c 'application.name = "WirePlumber')" -ge 2 ]
}

start_daemons() {
    [ -s /tmp/bus.pid ] && kill -0 "$(cat /tmp/bus.pid)" 2>/dev/null \
        || dbus-daemon --session --fork --print-pid --address="$DBUS_SESSION_BUS_ADDRESS" >/tmp/bus.pid
    # PIPEWIRE_DEBUG (the caller's, if set) decides what the log says.
    setsid pipewire </dev/null >>"$out/pipewire.log" 2>&1 &
    echo $! >/tmp/pipewire.pid
    wait_until 10 pw-cli info 0 >/dev/null 2>&1 || fail "pipewire did not answer (log: $(tail -n 5 "$out/pipewire.log"))"
    setsid wireplumber </dev/null >>"$out/wireplumber.log" 2>&1 &
    echo $! >/tmp/wireplumber.pid
    wait_until 15 session_ready || fail "wireplumber did not come up"
}

stop_daemon() {
    local pid
    pid=$(cat "/tmp/$1.pid" 2>/dev/null) || return 0
    kill "$pid" 2>/dev/null || true
    wait_until 5 eval "! kill -0 $pid 2>/dev/null" || kill -9 "$pid" 2>/dev/null || true
}

# Links OUTPUT to INPUT; a link that is there already is fine (the node re-makes the links
# it remembers when a player of the same name comes back).
link() {
    local error
    error=$(pw-link "$1" "$2" 2>&1) || [[ $error == *"File exists"* ]] || fail "pw-link $1 $2: $error"
}

# Whether OUTPUT is linked to INPUT.
linked() { pw-link -l 2>/dev/null | grep -A8 -xF "$1" | grep -F -- "|-> $2" >/dev/null; }

# Links OUTPUT INPUT OUTPUT INPUT ... in one batch: one pw-cli, already connected, asks for
# them all within milliseconds (a pw-link each took long enough on a busy machine for a
# player to play its left channel alone). Links there already are fine (see link).
link_all() {
    local -a pairs=("$@") commands=()
    local i from to
    all_linked() { for ((i = 0; i + 1 < ${#pairs[@]}; i += 2)); do linked "${pairs[i]}" "${pairs[i+1]}" || return 1; done; }
    for ((i = 0; i + 1 < ${#pairs[@]}; i += 2)); do
        from=${pairs[i]} to=${pairs[i+1]}
        commands+=("create-link ${from%%:*} ${from#*:} ${to%%:*} ${to#*:} { object.linger = true }")
    done
    # pw-cli gets `quit` once the links are there (at the end of its input 0.3.65's spins). It
    # runs at the players' priority: CI runs this test at SCHED_IDLE beside the suites, where the
    # links were once not there after the 10 s they were waited for, the node's ports there (CI,
    # 2026-11-27, pw-cli's output not kept then: now in $out/link-all.log, shown on failure).
    { printf '%s\n' "${commands[@]}"; wait_until 20 all_linked; echo quit; } |
        timeout 40 "${audio_priority[@]}" pw-cli >"$out/link-all.log" 2>&1
    all_linked || fail "not linked: $* (pw-cli: $(tail -n 5 "$out/link-all.log"); pw-link -l: $(pw-link -l 2>&1 | head -n 20))"
}

# A null sink with one MONO channel stands in for a device.
make_sink() {
    pw-cli create-node adapter '{ factory.name=support.null-audio-sink node.name=check-sink
        media.class=Audio/Sink object.linger=true audio.position=[ MONO ] }' >/dev/null
    wait_until 10 has_port -i check-sink:playback_MONO || fail "the null sink has no port"
}

# pw-cat and pw-record fill and drain their buffers on their main thread: CI runs this test at
# SCHED_IDLE beside the suites, where an idle player starves and leaves gaps in what it plays.
# They run at SCHED_FIFO 40 where that is allowed (as the suites' Sandbox.start runs them).
if chrt -f 40 true 2>/dev/null; then audio_priority=(chrt -f 40); else audio_priority=(); fi

# Plays $out/in.wav (stereo) into SOURCE_PORTS' nodes and records check-sink into $out/NAME.wav:
# play_and_record NAME LEFT_TARGET RIGHT_TARGET
play_and_record() {
    local name=$1 left=$2 right=$3 recorder player
    "${audio_priority[@]}" pw-record --target check-sink -P '{ stream.capture.sink = true }' --channels 1 --channel-map MONO \
        --format f32 "$out/$name.wav" &
    recorder=$!
    sleep 0.5
    "${audio_priority[@]}" pw-cat --playback -P '{ node.autoconnect = false node.name = check-player }' "$out/in.wav" &
    player=$!
    wait_until 10 has_port -o check-player:output_FL || fail "the player has no ports"
    link_all check-player:output_FL "$left" check-player:output_FR "$right"
    wait "$player"
    sleep 0.3
    kill -INT "$recorder"
    wait "$recorder" || true
    [ -s "$out/$name.wav" ] || fail "nothing recorded into $name.wav"
}

case $phase in
installed)
    step "the package's files and version"
    for tool in swift swiftc gcc cc clang ld; do
        ! command -v "$tool" >/dev/null || fail "$tool is installed: the root must have no toolchain"
    done
    [[ $(crosspoint --version) == "crosspoint $version (libpipewire "* ]] || fail "crosspoint --version says '$(crosspoint --version)'"

    step "crosspoint setup: list, enable (and nothing enabled by the install itself)"
    crosspoint setup list | tee "$out/setup-list.txt"
    grep -q '^crosspoint  *not enabled' "$out/setup-list.txt" || fail "the setup is enabled before anyone enabled it"
    [ ! -e /etc/pipewire/pipewire.conf.d/crosspoint.conf ] || fail "installing enabled a drop-in"
    crosspoint setup enable crosspoint | tee "$out/setup-enable.txt"
    grep -q 'systemctl --user restart pipewire' "$out/setup-enable.txt" || fail "enable does not say how to restart PipeWire"
    [ -f "$XDG_CONFIG_HOME/pipewire/pipewire.conf.d/crosspoint.conf" ] || fail "enable wrote no drop-in"

    step "PipeWire loads the module from its module directory through the enabled drop-in"
    start_daemons
    wait_until 10 node_listed crosspoint || fail "no crosspoint node (pipewire log: $(grep -i crosspoint "$out/pipewire.log" | tail -n 3))"
    module=$(pw-cli ls Module | awk '/^\tid /{ id = $2 } /module.name = "libpipewire-module-crosspoint"/ { sub(",", "", id); print id }')
    [ -n "$module" ] || fail "no libpipewire-module-crosspoint module object"
    pw-cli info "$module" | grep "module.version = \"$version\"" >/dev/null || fail "module.version is not $version: $(pw-cli info "$module" | grep version)"
    wait_until 10 has_port -i crosspoint:in_FR || fail "the node has no input ports"

    step "audio through the node as shipped (the average of left and right)"
    make_sink
    link crosspoint:out_MONO check-sink:playback_MONO
    play_and_record shipped crosspoint:in_FL crosspoint:in_FR

    step "crosspoint show, set: left only"
    crosspoint show crosspoint >"$out/show.txt"
    grep -q 'FL' "$out/show.txt" || fail "show printed no matrix: $(cat "$out/show.txt")"
    crosspoint set crosspoint FL MONO 1
    crosspoint set crosspoint FR MONO -inf
    play_and_record left-only crosspoint:in_FL crosspoint:in_FR

    step "a preset saved where crosspoint serve keeps them"
    mkdir -p "$XDG_CONFIG_HOME/crosspoint/presets"
    crosspoint save crosspoint "$XDG_CONFIG_HOME/crosspoint/presets/left-only.json"

    step "crosspoint serve answers"
    crosspoint serve --port 7399 >"$out/serve.log" 2>&1 &
    serve=$!
    # GET PATH over bash's /dev/tcp (the root has no curl), with the token the server printed in
    # its URL (asked on loopback too); the answer in $out/serve-answer.txt.
    answer() {
        local token
        token=$(grep -o '?token=[0-9A-Za-z]*' "$out/serve.log" 2>/dev/null | head -n 1 | cut -d= -f2)
        [ -n "$token" ] || return 1
        { exec 3<>/dev/tcp/127.0.0.1/7399; } 2>/dev/null || return 1
        printf 'GET %s HTTP/1.1\r\nHost: 127.0.0.1:7399\r\nAuthorization: Bearer %s\r\nConnection: close\r\n\r\n' "$1" "$token" >&3
        timeout 5 cat <&3 >"$out/serve-answer.txt" || true
        exec 3<&-
        grep -q '^HTTP/1.1 200' "$out/serve-answer.txt"
    }
    wait_until 10 answer /api/status || fail "crosspoint serve did not answer: $(cat "$out/serve.log")"
    grep -q "\"version\": *\"$version\"" "$out/serve-answer.txt" || fail "/api/status: $(cat "$out/serve-answer.txt")"
    answer /api/nodes && grep -q '"name": *"crosspoint"' "$out/serve-answer.txt" || fail "/api/nodes: $(cat "$out/serve-answer.txt")"
    answer / && grep -qi '<title>' "$out/serve-answer.txt" || fail "no page at /"
    kill "$serve"
    wait "$serve" || true

    step "a setup's virtual device: a tone played into 'Mono output' is heard on the interface, both sides in both ears"
    crosspoint setup enable crosspoint-mono >/dev/null
    stop_daemon wireplumber
    stop_daemon pipewire
    start_daemons
    wait_until 10 node_listed mono || fail "no mono node after enabling crosspoint-mono"
    pw-cli create-node adapter '{ factory.name=support.null-audio-sink node.name=check-interface
        media.class=Audio/Sink object.linger=true audio.position=[ FL FR ] priority.session=1009 priority.driver=1009 }' >/dev/null
    wait_until 10 has_port -i check-interface:playback_FR || fail "the stand-in interface has no ports"
    wait_until 10 has_port -i mono-output:playback_FR || fail "the setup's device mono-output has no ports"
    linked_to_interface() { pw-link -l 2>/dev/null | grep -A1 '^mono:out_FR' | grep 'check-interface:playback_FR' >/dev/null; }
    wait_until 10 linked_to_interface || fail "the mono node's outputs do not reach the interface: $(pw-link -l | grep -A1 '^mono:')"
    "${audio_priority[@]}" pw-record --target check-interface -P '{ stream.capture.sink = true }' --channels 2 --channel-map FL,FR \
        --format f32 "$out/mono-device.wav" &
    recorder=$!
    sleep 0.5
    "${audio_priority[@]}" pw-cat --playback --target mono-output "$out/in.wav"
    sleep 0.3
    kill -INT "$recorder"
    wait "$recorder" || true
    [ -s "$out/mono-device.wav" ] || fail "nothing recorded into mono-device.wav"
    crosspoint setup disable crosspoint-mono >/dev/null   # gone at the next restart (upgraded)
    ;;
upgraded)
    step "the newer package is in place; the daemon still runs the module it had loaded"
    [ "$(dpkg-query -W -f '${Version}' crosspoint)" = "$version" ] || fail "dpkg says $(dpkg-query -W -f '${Version}' crosspoint)"
    node_listed crosspoint || fail "the node went away during the upgrade"
    stop_daemon wireplumber
    stop_daemon pipewire
    step "PipeWire restarted: the node restores its state, the preset is there"
    start_daemons
    wait_until 10 node_listed crosspoint || fail "no crosspoint node after the upgrade"
    wait_until 10 has_port -i crosspoint:in_FR || fail "the node has no input ports"
    make_sink
    link crosspoint:out_MONO check-sink:playback_MONO
    play_and_record upgraded crosspoint:in_FL crosspoint:in_FR
    [ -f "$XDG_CONFIG_HOME/crosspoint/presets/left-only.json" ] || fail "the preset is gone"
    crosspoint load crosspoint "$XDG_CONFIG_HOME/crosspoint/presets/left-only.json" >/dev/null || fail "the preset does not load"

    step "a setup enabled for the whole machine (the purge removes it)"
    crosspoint setup enable --system crosspoint >/dev/null
    crosspoint setup list --system | grep '^crosspoint  *enabled' >/dev/null || fail "setup list --system: $(crosspoint setup list --system)"
    ;;
removed)
    step "the daemon survives the package's removal"
    kill -0 "$(cat /tmp/pipewire.pid)" 2>/dev/null || fail "pipewire died when the package was removed"
    pw-cli info 0 >/dev/null || fail "pipewire does not answer"
    ! command -v crosspoint >/dev/null || fail "the command is still installed"
    stop_daemon wireplumber
    stop_daemon pipewire
    step "restarted with the user's drop-in still there: up, without the node, and playing"
    : >"$out/pipewire.log"
    PIPEWIRE_DEBUG=3 start_daemons   # info: where an optional (nofail) module's failure is logged
    ! pw-cli ls Node | grep 'node.name = "crosspoint"' >/dev/null || fail "a crosspoint node exists without the package"
    grep -q 'could not load optional module "libpipewire-module-crosspoint"' "$out/pipewire.log" \
        || fail "the daemon did not say it could not load the module: $(grep -i crosspoint "$out/pipewire.log" | head -n 3)"
    make_sink
    play_and_record removed check-sink:playback_MONO check-sink:playback_MONO
    stop_daemon wireplumber
    stop_daemon pipewire
    ;;
*) fail "unknown phase '$phase'" ;;
esac
step "done"
