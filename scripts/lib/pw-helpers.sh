# shellcheck shell=bash
# Shell helpers for tests and demos that talk to a PipeWire daemon; source this file.
# They assume the daemon's environment is exported (`source "$SANDBOX/env"`).
# Bounded waits give up after PW_WAIT_TIMEOUT seconds (default 10).

# Run "$@" every 0.05 s until it succeeds; fail after SECS (whole) seconds. (Every 0.1 s cost
# the tests 50 ms a wait on average, thousands of waits a run; a try is a pw-cli or a pw-dump.)
pw_wait_until() {
  local deadline=$((${EPOCHREALTIME//[.,]/} + $1 * 1000000)); shift   # in microseconds
  until "$@"; do
    ((${EPOCHREALTIME//[.,]/} < deadline)) || return 1
    sleep 0.05
  done
}

# Debian's python3 (scripts/lib/packages.sh installs it): a python3 earlier on PATH may be a
# version manager's shim (pyenv's costs about 150 ms a start, and the waits below start one
# every 0.1 s).
pw_python=/usr/bin/python3
[ -x "$pw_python" ] || pw_python=python3

# Run python3 CODE over the `pw-dump` objects (`objs`, with `props(o)` and `node_ids(name)`); ARGS go to sys.argv.
pw_query() {
  local code=$1; shift
  pw-dump | "$pw_python" -c "import json, sys
objs = json.load(sys.stdin)
def props(o): return (o.get('info') or {}).get('props') or o.get('props') or {}
def node_ids(name): return [o['id'] for o in objs if o['type'] == 'PipeWire:Interface:Node' and props(o).get('node.name') == name]
$code" "$@"
}

# Print the object id of the node whose node.name is NAME; fail if there is none.
pw_node_id() {
  pw_query '
ids = node_ids(sys.argv[1])
if not ids: sys.exit(1)
print(ids[0])' "$1"
}

# Print how many ports node NAME has (only "input" or "output" ones if DIRECTION is given).
pw_port_count() {
  pw_query '
ids = node_ids(sys.argv[1])
print(sum(1 for o in objs if o["type"] == "PipeWire:Interface:Port" and props(o).get("node.id") in ids
          and sys.argv[2] in ("", o["info"]["direction"])))' "$1" "${2:-}"
}

# True if node NAME has exactly COUNT ports (only DIRECTION ones if given).
pw_has_ports() {
  [[ $(pw_port_count "$1" "${3:-}" 2>/dev/null) == "$2" ]]
}

# Wait until node NAME has exactly COUNT ports (only "input"/"output" ones if DIRECTION is given).
pw_wait_ports() {
  pw_wait_until "${PW_WAIT_TIMEOUT:-10}" pw_has_ports "$@" && return 0
  echo "pw_wait_ports: node '$1' has $(pw_port_count "$1" "${3:-}") ${3:+$3 }ports, expected $2" >&2
  return 1
}

# True if the daemon answers.
pw_daemon_ready() {
  timeout 2 pw-cli info 0 >/dev/null 2>&1
}

# True if the daemon answers and WirePlumber is connected (both its main and its export client).
# (Its "default" metadata is no reliable sign: in some runs WirePlumber 0.4.13 published it only once a node existed.)
pw_session_ready() {
  pw_daemon_ready && pw_query '
names = {props(o).get("application.name") for o in objs if o["type"] == "PipeWire:Interface:Client"}
sys.exit(not {"WirePlumber", "WirePlumber [export]"} <= names)' 2>/dev/null
}

# Create a null audio sink NAME with channel POSITIONS (e.g. "FL FR RL RR") and wait for its playback ports.
pw_null_sink() {
  local name=$1 positions
  read -ra positions <<<"$2"
  pw-cli create-node adapter "{ factory.name=support.null-audio-sink node.name=$name
    media.class=Audio/Sink object.linger=true audio.position=[ ${positions[*]} ] }" >/dev/null
  pw_wait_ports "$name" "${#positions[@]}" input
}

# True if no node is named NAME.
pw_node_absent() {
  ! pw_node_id "$1" >/dev/null
}

# Destroy node NAME and wait until it is gone.
pw_destroy_node() {
  local id
  id=$(pw_node_id "$1") || { echo "pw_destroy_node: no node '$1'" >&2; return 1; }
  pw-cli destroy "$id" >/dev/null
  pw_wait_until "${PW_WAIT_TIMEOUT:-10}" pw_node_absent "$1" && return 0
  echo "pw_destroy_node: node '$1' still exists" >&2
  return 1
}

# True if every NODE:PORT -> NODE:PORT pair given (OUT IN OUT IN ...) is linked.
pw_linked() {
  pw_query '
name = {o["id"]: props(o).get("node.name") for o in objs if o["type"] == "PipeWire:Interface:Node"}
port = {o["id"]: "%s:%s" % (name.get(props(o).get("node.id")), props(o).get("port.name"))
        for o in objs if o["type"] == "PipeWire:Interface:Port"}
links = {(port.get(o["info"]["output-port-id"]), port.get(o["info"]["input-port-id"]))
         for o in objs if o["type"] == "PipeWire:Interface:Link" and o.get("info")}
pairs = list(zip(sys.argv[1::2], sys.argv[2::2]))
sys.exit(not all(p in links for p in pairs))' "$@"
}

# Link OUT IN OUT IN ... (NODE:PORT each) in one batch and wait until all exist. One pw-cli,
# already connected, asks the link factory for them all within milliseconds; a pw-link per
# link took longer on a loaded machine than a player's lead-in, so a player linked that way
# played its first channel alone for a while. Lingering links, as pw-link makes them.
pw_link_all() {
  local -a pairs=("$@") commands=()
  local i out in
  for ((i = 0; i + 1 < ${#pairs[@]}; i += 2)); do
    out=${pairs[i]} in=${pairs[i+1]}
    commands+=("create-link ${out%%:*} ${out#*:} ${in%%:*} ${in#*:} { object.linger = true }")
  done
  # pw-cli reads commands from its standard input: it gets `quit` once the links are there
  # (0.3.65's pw-cli spins at 100% CPU when its standard input ends instead).
  { printf '%s\n' "${commands[@]}"; pw_wait_until "${PW_WAIT_TIMEOUT:-10}" pw_linked "$@"; echo quit; } |
    timeout 30 pw-cli >/dev/null 2>&1
  pw_linked "$@" && return 0
  echo "pw_link_all: not all linked: $*" >&2
  return 1
}
