#!/usr/bin/env python3
"""Helpers of scripts/bench-graph: the daemon drop-ins, the reading of pw-profiler's log, the report.

  bench_graph.py conf corun|alone DIR            write DIR/bench-graph.conf (the contenders' drop-in)
  bench_graph.py links corun|alone               print the links to make, one "OUT_NODE IN_NODE" a line
  bench_graph.py nodes corun|alone               print the node names every contender must have
  bench_graph.py missing-nodes corun|alone       (pw-dump on stdin) print those not there yet; exit 1 if any
  bench_graph.py window LOG STDOUT Q PHASE       read one pw-profiler window, print it as one JSON line
  bench_graph.py report RESULTS [--alone-seconds S] [--quick]
                                                 print the medians, the ratios and the targets

pw-profiler 0.3.65 writes profiler.log: 4 columns for the driver (signal - previous signal,
finish - signal, delay, period in us), then 8 per follower, in the order it first saw them (it
prints `logging follower ID ("NAME")` as it does): id, signal, awake, finish (us after the
driver's signal), awake - signal, finish - awake (the busy time), status (3 = finished; 1
triggered and 2 awake mean the node had not finished when the cycle was reported, which
happens when the driver starts a cycle while the last one is still running), 0. A follower
that was not scheduled in a cycle has blanks there.
"""
import json
import os
import re
import statistics
import sys

# The dense gain from input i to output j of an n-input matrix (bench-node.c's bench_gain).
def gain(i, j, n):
    return (0.1 + 0.8 * ((i * 5 + j * 3) % 11) / 10.0) / n

def dense(n, m):
    return [[gain(i, j, n) for j in range(m)] for i in range(n)]

def identity(n):
    return [[1.0 if i == j else 0.0 for j in range(n)] for i in range(n)]

DOWNMIX = [[0.5], [0.5]]

# Contenders of the co-run: label -> (workload, node names whose busy times add up, kind).
CORUN = [
    ("xp-2x1", "2x1 downmix", ["xp-2x1"], "Crosspoint (in daemon)"),
    ("fc-2x1", "2x1 downmix", ["fc-2x1", "fc-2x1.out"], "filter-chain builtin mixer (in daemon, 2 nodes)"),
    ("lb-2x1", "2x1 downmix", ["lb-2x1", "lb-2x1.out"], "loopback, audioconvert downmix (in daemon, 2 nodes)"),
    ("c-2x1", "2x1 downmix", ["c-2x1"], "C pw_filter triple loop (in daemon)"),
    ("xp-8x8", "8x8 dense", ["xp-8x8"], "Crosspoint (in daemon)"),
    ("fc-8x8", "8x8 dense", ["fc-8x8", "fc-8x8.out"], "filter-chain 8 copy + 8 mixer (in daemon, 2 nodes)"),
    ("c-8x8", "8x8 dense", ["c-8x8"], "C pw_filter triple loop (in daemon)"),
    ("c-copy-8", "8x8 floor", ["c-copy-8"], "C pw_filter memcpy, 8 in 8 out, no mixing (in daemon)"),
    ("xp-64id", "64x64 identity", ["xp-64id"], "Crosspoint (in daemon)"),
    ("c-copy-64", "64x64 identity", ["c-copy-64"], "C pw_filter memcpy (in daemon)"),
    ("c-copy-64-cl", "64x64 identity", ["c-copy-64-cl"], "C pw_filter memcpy (client)"),
    ("xp-64dense", "64x64 dense", ["xp-64dense"], "Crosspoint (in daemon)"),
    # The same size moving between two dense scenes all window long (a recall over 60 s, started
    # before each window: every cross-point gliding, issue 31).
    ("xp-64morph", "64x64 morphing", ["xp-64morph"], "Crosspoint, a scene recall under way (in daemon)"),
    ("c-dense-64", "64x64 dense", ["c-dense-64"], "C pw_filter triple loop (in daemon)"),
    ("c-dense-64-cl", "64x64 dense", ["c-dense-64-cl"], "C pw_filter triple loop (client)"),
    # A stereo virtual device (a sink applications play into, heard on the device): the source
    # plays into each path's sink, each path's output goes to bg-sink. The path's cost is the
    # busy time of all its nodes in the same cycle, added.
    ("xp-vd", "stereo vdevice", ["xp-vd-sink", "xp-vd"], "Crosspoint 2x2 + its virtual sink (null sink + node)"),
    ("lb-vd", "stereo vdevice", ["lb-vd-sink", "lb-vd.in", "lb-vd.out"],
     "null sink + module-loopback from its monitor (3 nodes)"),
    ("fc-vd", "stereo vdevice", ["fc-vd", "fc-vd.out"], "filter-chain capture sink, 2 builtin copy (2 nodes)"),
]
ALONE = [("xp-128dense", "128x128 dense", ["xp-128dense"], "Crosspoint (in daemon)")]
# Before it, in the same daemon: the source linked straight to the sink, nothing else (what the
# machine alone makes of the same graph).
CONTROL = [("bg-source", "test signal", ["bg-source"], "the source alone, linked straight to the sink"),
           ("bg-sink", "sink", ["bg-sink"], "the sink")]
PHASES = {"corun": CORUN, "alone": ALONE, "control": CONTROL}

# scripts/bench-graph --no-clients: the in-daemon contenders only
if os.environ.get("BENCH_GRAPH_NO_CLIENTS") == "1":
    CORUN = PHASES["corun"] = [c for c in CORUN if not c[0].endswith("-cl")]

# scripts/bench-graph --versus FILE: the 2x1 and 8x8 of another build of the module (B), each linked
# right after this build's, in the same graph; and this build over B. (The one linked first of
# the two runs first: run it again with the builds swapped to see that order's part.)
VERSUS = os.environ.get("BENCH_GRAPH_VERSUS") == "1"
if VERSUS:
    for label in ("xp-8x8", "xp-2x1"):
        at = [c[0] for c in CORUN].index(label) + 1
        CORUN.insert(at, (label.replace("xp-", "xpB-"), CORUN[at - 1][1], [label.replace("xp-", "xpB-")],
                          "Crosspoint, the --versus build (in daemon)"))

# Links inside the virtual-device paths that the bench does not make itself: (from node, to node).
VD_CHAINS = [("xp-vd-sink", "xp-vd"), ("lb-vd-sink", "lb-vd.in")]

# The path that runs first after the heavy contenders pays more, whichever it is (the group run
# in reverse order: xp-vd went from 34 to 21 us at q1024, lb-vd's sink from 12 to 17). So a C
# copy node, 2 in 2 out, runs before them (bg-lead-vd, measured by no one), and
# BENCH_GRAPH_VD_REVERSE=1 links the three paths in reverse order, to run both orders and take
# the geometric mean of the ratios.
VD_LEAD = "bg-lead-vd"
if os.environ.get("BENCH_GRAPH_VD_REVERSE") == "1":
    _vd = [c for c in CORUN if c[0].endswith("-vd")]
    CORUN = PHASES["corun"] = [c for c in CORUN if not c[0].endswith("-vd")] + _vd[::-1]

RATIOS = [  # (numerator, denominator)
    ("xp-2x1", "fc-2x1"), ("xp-2x1", "lb-2x1"), ("xp-2x1", "c-2x1"), ("xp-8x8", "fc-8x8"), ("xp-8x8", "c-8x8"),
    ("xp-8x8", "c-copy-8"), ("c-copy-8", "fc-8x8"),
    ("xp-64id", "c-copy-64"), ("xp-64id", "c-copy-64-cl"),
    ("xp-64dense", "c-dense-64"), ("xp-64dense", "c-dense-64-cl"), ("xp-64morph", "xp-64dense"),
    ("xp-vd", "lb-vd"), ("xp-vd", "fc-vd"),
] + ([("xp-2x1", "xpB-2x1"), ("xp-8x8", "xpB-8x8")] if VERSUS else [])

SOURCE_PORTS = {"corun": 64, "alone": 128, "control": 128}

# The first node the source wakes in a cycle starts colder than those after it: its busy time was
# 2-6 us longer at quantum 1024 in a test graph, whichever node it was (BENCHMARKS.md). So no
# contender is first: a C copy node, 1 in 1 out, is linked before them all, and measured by no one.
LEAD = "bg-lead"

def spa_matrix(rows):
    return "[ " + " ".join("[ " + " ".join(f"{g:.9g}" for g in row) + " ]" for row in rows) + " ]"

def crosspoint(name, rows, module="libpipewire-module-crosspoint", extra=""):
    return f"""    {{ name = {module}
        args = {{ node.name = "{name}" node.description = "{name}" inputs = {len(rows)} outputs = {len(rows[0])}
                 state.persist = false state.links = false ramp.ms = 0
                 matrix = {spa_matrix(rows)}{extra} }} }}
"""

# The stereo virtual device: a 2x2 Crosspoint node (identity) whose virtual sink xp-vd-sink feeds
# its inputs FL, FR (the node makes the null sink and links its monitor ports itself).
XP_VD = crosspoint("xp-vd", identity(2), extra="""
                 input.position = [ FL FR ] output.position = [ FL FR ]
                 devices = [ { type = sink name = xp-vd-sink description = "xp-vd-sink" channels = [ FL FR ] } ]""")

def bench_node(name, mode, n_in, n_out):
    return f"""    {{ name = libpipewire-module-bench-node
        args = {{ node.name = "{name}" bench.mode = {mode} bench.inputs = {n_in} bench.outputs = {n_out} }} }}
"""

def aux(n):
    return "[ " + " ".join(f"AUX{k}" for k in range(n)) + " ]"

def filter_chain(name, rows, positions_in, positions_out):
    n, m = len(rows), len(rows[0])
    if rows == identity(n):  # one builtin copy per channel (a capture sink played on the device)
        nodes = [f"{{ type = builtin name = copy{i} label = copy }}" for i in range(n)]
        links, inputs, outputs = [], [f'"copy{i}:In"' for i in range(n)], [f'"copy{i}:Out"' for i in range(n)]
    elif n <= 8 and m == 1:  # one builtin mixer: inputs straight in
        nodes = ['{ type = builtin name = mix0 label = mixer control = { '
                 + " ".join(f'"Gain {i + 1}" = {rows[i][0]:.9g}' for i in range(n)) + " } }"]
        links, inputs, outputs = [], [f'"mix0:In {i + 1}"' for i in range(n)], ['"mix0:Out"']
    else:  # N copy nodes fanning out to M mixers (filter-chain's graph inputs cannot fan out)
        assert n <= 8
        nodes = [f"{{ type = builtin name = copy{i} label = copy }}" for i in range(n)]
        nodes += ['{ type = builtin name = mix%d label = mixer control = { ' % j
                  + " ".join(f'"Gain {i + 1}" = {rows[i][j]:.9g}' for i in range(n)) + " } }"
                  for j in range(m)]
        links = [f'{{ output = "copy{i}:Out" input = "mix{j}:In {i + 1}" }}' for j in range(m) for i in range(n)]
        inputs = [f'"copy{i}:In"' for i in range(n)]
        outputs = [f'"mix{j}:Out"' for j in range(m)]
    sep = "\n                "
    return f"""    {{ name = libpipewire-module-filter-chain
        args = {{
            node.description = "{name}"
            media.name = "{name}"
            filter.graph = {{
                nodes = [{sep}{sep.join(nodes)} ]
                links = [{sep}{sep.join(links)} ]
                inputs = [ {" ".join(inputs)} ]
                outputs = [ {" ".join(outputs)} ]
            }}
            capture.props = {{ node.name = "{name}" media.class = Audio/Sink audio.position = {positions_in} }}
            playback.props = {{ node.name = "{name}.out" media.class = Audio/Source audio.position = {positions_out} }}
        }} }}
"""

LOOPBACK = """    { name = libpipewire-module-loopback
        args = {
            node.description = "lb-2x1"
            capture.props = { node.name = "lb-2x1" media.class = Audio/Sink audio.position = [ FL FR ] }
            # A stereo stream into a mono sink: WirePlumber gives the stream's adapter the sink's
            # one channel, and its audioconvert downmixes (channelmix_f32_2_1).
            playback.props = { node.name = "lb-2x1.out" audio.position = [ FL FR ]
                               target.object = "bg-mono" node.dont-reconnect = true }
        } }
"""

# The substitute of today: a null sink (as pactl load-module module-null-sink makes it, and as
# Crosspoint makes its devices: monitor.channel-volumes) and a loopback whose capture stream
# records the sink's monitor (WirePlumber links it: target.object, stream.capture.sink) and
# whose playback the bench links to bg-sink (an Audio/Source, as filter-chain's below, so that
# WirePlumber links it nowhere).
LOOPBACK_VD = """    { name = libpipewire-module-loopback
        args = {
            node.description = "lb-vd"
            capture.props = { node.name = "lb-vd.in" audio.position = [ FL FR ] stream.capture.sink = true
                              target.object = "lb-vd-sink" node.dont-reconnect = true }
            playback.props = { node.name = "lb-vd.out" media.class = Audio/Source audio.position = [ FL FR ] }
        } }
"""

# bg-mono drives the graph (priority.driver above the other null sinks', which PipeWire would
# otherwise be free to choose: a driver's busy time is not among pw-profiler's followers).
NULL_MONO = """context.objects = [
    { factory = adapter
        args = { factory.name = support.null-audio-sink node.name = "bg-mono" media.class = Audio/Sink
                 audio.position = [ MONO ] object.linger = true monitor.channel-volumes = false
                 priority.driver = 30000 } }
    { factory = adapter
        args = { factory.name = support.null-audio-sink node.name = "lb-vd-sink" media.class = Audio/Sink
                 audio.position = [ FL FR ] object.linger = true monitor.channel-volumes = true
                 session.suspend-timeout-seconds = 0 } }
]
"""

def conf(phase):
    ports = SOURCE_PORTS[phase]
    mods = [bench_node("bg-source", "source", 0, ports), bench_node("bg-sink", "sink", ports, 0)]
    if phase == "corun":
        mods += [bench_node(LEAD, "copy", 1, 1),
                 crosspoint("xp-2x1", DOWNMIX), crosspoint("xp-8x8", dense(8, 8)),
                 *([crosspoint("xpB-2x1", DOWNMIX, "libpipewire-module-crosspoint-b"),
                    crosspoint("xpB-8x8", dense(8, 8), "libpipewire-module-crosspoint-b")] if VERSUS else []),
                 crosspoint("xp-64id", identity(64)), crosspoint("xp-64dense", dense(64, 64)),
                 crosspoint("xp-64morph", dense(64, 64)),
                 filter_chain("fc-2x1", DOWNMIX, "[ FL FR ]", "[ MONO ]"),
                 filter_chain("fc-8x8", dense(8, 8), aux(8), aux(8)),
                 LOOPBACK,
                 bench_node(VD_LEAD, "copy", 2, 2), XP_VD, LOOPBACK_VD, filter_chain("fc-vd", identity(2), "[ FL FR ]", "[ FL FR ]"),
                 bench_node("c-copy-64", "copy", 64, 64), bench_node("c-dense-64", "dense", 64, 64),
                 bench_node("c-2x1", "average", 2, 1), bench_node("c-8x8", "dense", 8, 8),
                 # what any node that reads 8 ports and writes 8 costs in pw_filter, mixing nothing
                 bench_node("c-copy-8", "copy", 8, 8)]
        head = NULL_MONO
    else:
        mods += [crosspoint("xp-128dense", dense(128, 128))]
        head = ""
    return ("# Written by scripts/lib/bench-graph/bench_graph.py for scripts/bench-graph (" + phase + ").\n"
            + head + "context.modules = [\n" + "".join(mods) + "]\n")

# Clients the script starts itself: name, mode, inputs, outputs.
CLIENTS = {"corun": [("c-copy-64-cl", "copy", 64, 64), ("c-dense-64-cl", "dense", 64, 64)], "alone": [], "control": []}
if os.environ.get("BENCH_GRAPH_NO_CLIENTS") == "1":
    CLIENTS["corun"] = []

def links(phase):
    """OUT IN pairs for pw-link NODE NODE (which links port 0 to 0, 1 to 1, ... while both have one)."""
    if phase == "control":
        return [("bg-source", "bg-sink")]
    out = [("bg-source", LEAD), (LEAD, "bg-sink")] if phase == "corun" else []
    for label, _, nodes, _ in PHASES[phase]:
        if label.endswith("-vd") and (("bg-source", VD_LEAD) not in out):
            out += [("bg-source", VD_LEAD), (VD_LEAD, "bg-sink")]
        if label == "lb-vd":  # lb-vd.in records lb-vd-sink's monitor (WirePlumber links it)
            out.append(("bg-source", "lb-vd-sink"))
            out.append(("lb-vd.out", "bg-sink"))
        elif label == "lb-2x1":
            out.append(("bg-source", "lb-2x1"))  # lb-2x1.out goes to bg-mono (WirePlumber links it)
            # bg-mono (a null sink) is a driver. PipeWire 1.x does not put loopback's two streams in
            # one graph: linked to lb-2x1.out only, bg-mono would drive it in a cycle of its own, and
            # pw-profiler follows one driver. Linked to the source too, it drives everything.
            out.append(("bg-source", "bg-mono"))
        else:
            out.append(("bg-source", nodes[0]))
            out.append((nodes[-1], "bg-sink"))
    return out

def check_links(phase, objs):
    """Print what is not linked; exit 1 if anything is. Inputs of a contender's first node, outputs
    of its last node, each at least one link (filter-chain's and loopback's monitor ports aside)."""
    def props(o):
        return (o.get("info") or {}).get("props") or o.get("props") or {}
    node_id = {props(o).get("node.name"): o["id"] for o in objs if o["type"] == "PipeWire:Interface:Node"}
    linked = set()
    for o in objs:
        if o["type"] == "PipeWire:Interface:Link":
            info = o.get("info") or {}
            linked.add(info.get("output-port-id"))
            linked.add(info.get("input-port-id"))
    ports = {}
    for o in objs:
        if o["type"] == "PipeWire:Interface:Port":
            p = props(o)
            ports.setdefault((p.get("node.id"), o["info"]["direction"]), []).append(
                (p.get("port.name"), o["id"] in linked))
    bad = []
    # the contenders' inputs and outputs (for the control: the source's outputs, the sink's inputs)
    pairs = [(label, ((nodes[0], "input"), (nodes[-1], "output"))) for label, _, nodes, _ in PHASES[phase]]
    if phase == "control":
        pairs = [("control", (("bg-source", "output"), ("bg-sink", "input")))]
    else:  # and no link left from the control's source straight to the sink
        ids = {node_id.get("bg-source"), node_id.get("bg-sink")}
        for o in objs:
            info = o.get("info") or {}
            if o["type"] == "PipeWire:Interface:Link" and {info.get("output-node-id"), info.get("input-node-id")} == ids:
                bad.append(f"a link from bg-source straight to bg-sink is left: {o['id']}")
    for label, checks in pairs:
        for node, direction in checks:
            if node not in node_id:
                bad.append(f"{label}: no node {node}")
                continue
            mine = ports.get((node_id[node], direction), [])
            unlinked = [n for n, ok in mine if not ok]
            if not mine or unlinked:
                bad.append(f"{label}: {node} has {len(mine)} {direction} ports, unlinked: {' '.join(unlinked[:8])}")
    # inside the virtual-device paths: each input port of the second node fed by the first node
    # (the sink's monitor ports; linked by Crosspoint itself, and by WirePlumber for loopback)
    if phase == "corun":
        port_node = {o["id"]: (o.get("info") or {}).get("props", {}).get("node.id")
                     for o in objs if o["type"] == "PipeWire:Interface:Port"}
        fed = set()
        for o in objs:
            info = o.get("info") or {}
            if o["type"] == "PipeWire:Interface:Link":
                fed.add((info.get("output-node-id"), info.get("input-port-id")))
        for a, b in VD_CHAINS:
            if a not in node_id or b not in node_id:
                continue  # reported above
            ins = [p for p, n in port_node.items() if n == node_id[b]
                   and next((o for o in objs if o["id"] == p), {}).get("info", {}).get("direction") == "input"]
            unfed = [p for p in ins if (node_id[a], p) not in fed]
            if not ins or unfed:
                bad.append(f"{b}: {len(ins)} input ports, {len(unfed)} not fed by {a}")
    for b in bad:
        print(b)
    return 1 if bad else 0

# ---- reading pw-profiler ----

FOLLOWER = re.compile(r'logging follower (\d+) \("(.*)"\)')

def read_window(log, stdout, quantum, phase):
    followers = []  # index -> name
    with open(stdout, errors="replace") as f:
        for line in f.read().replace("\r", "\n").splitlines():
            m = FOLLOWER.search(line)
            if m:
                followers.append(m.group(2))
    contenders = PHASES[phase]
    want = {n for _, _, nodes, _ in contenders for n in nodes}
    period_expected = quantum * 1e6 / 48000
    contenders_nodes = [(label, nodes) for label, _, nodes, _ in contenders]
    busy = {label: [] for label, _ in contenders_nodes}
    cycles = missed = late_wake = wrong_period = 0
    graph = []
    # the nodes of the virtual-device paths, each on its own too (the report shows where a path's time goes)
    part_nodes = [n for label, nodes in contenders_nodes if label.endswith("-vd") for n in nodes]
    parts = {n: [] for n in part_nodes}
    with open(log) as f:
        for line in f:
            cols = line.rstrip("\n").split("\t")
            if len(cols) < 4:
                continue
            try:
                d1, d2, period = int(cols[0]), int(cols[1]), int(cols[3])
            except ValueError:
                continue
            cycles += 1
            if abs(period - period_expected) > 0.02 * period_expected:
                wrong_period += 1
                continue
            # pw-profiler writes both d1 and d2 as 1.4 periods when either exceeds 1.3 periods: such a
            # cycle started late or finished late, which of the two it cannot say
            clamped = d1 == d2 and d1 > 1.3 * period
            if not clamped:
                graph.append(d2)
            row_missed = not clamped and d2 > period
            row = {}
            for k, name in enumerate(followers):
                base = 4 + 8 * k
                if base + 6 >= len(cols) or not cols[base].strip():
                    continue
                status = int(cols[base + 6])
                if status in (1, 2):  # reported before it finished: the graph did not complete in time
                    row_missed = True
                if name in want and status == 3:
                    row[name] = int(cols[base + 5])
            if row_missed:
                missed += 1
            elif clamped:
                late_wake += 1
            for n in part_nodes:
                if n in row:
                    parts[n].append(row[n])
            # a contender of several nodes: their busy times of the same cycle added
            for label, nodes in contenders_nodes:
                if all(n in row for n in nodes):
                    busy[label].append(sum(row[n] for n in nodes))
    result = {"quantum": quantum, "phase": phase, "cycles": cycles, "wrong_period": wrong_period,
              "missed": missed, "late_wake": late_wake, "followers": followers, "contenders": {}}
    problems = []
    if cycles == 0:
        problems.append("pw-profiler logged no cycle")
    elif wrong_period > 0.5 * cycles:
        problems.append(f"the quantum is not {quantum}: {wrong_period} of {cycles} cycles had another period")
    for label, nodes in contenders_nodes:
        samples = sorted(busy[label])
        # pw-profiler logs whole microseconds: the median of such grouped data, interpolated within
        # its 1 us class (statistics.median_grouped), resolves a node of a few us better than the raw median
        if len(samples) < 0.5 * max(1, cycles - wrong_period):
            problems.append(f"{label}: node(s) {', '.join(nodes)} finished in only {len(samples)} of "
                            f"{cycles - wrong_period} cycles in pw-profiler (followers seen: {', '.join(followers) or 'none'})")
            if not samples:
                continue
        result["contenders"][label] = {
            "median": statistics.median_grouped(samples, 1), "n": len(samples),
            "p99": samples[min(len(samples) - 1, int(0.99 * len(samples)))], "max": samples[-1],
            "over_period": sum(1 for x in samples if x > period_expected)}
    result["parts"] = {n: statistics.median_grouped(sorted(v), 1) for n, v in parts.items() if v}
    if graph:
        graph.sort()
        result["graph_median"] = statistics.median(graph)
    result["problems"] = problems
    return result

# ---- the report ----

def fmt(x):
    return f"{x:.0f}" if x >= 100 else f"{x:.1f}"

def report(path, alone_seconds, quick):
    windows = [json.loads(l) for l in open(path) if l.strip()]
    corun = [w for w in windows if w["phase"] == "corun"]
    alone = [w for w in windows if w["phase"] == "alone"]
    control = [w for w in windows if w["phase"] == "control"]
    quanta = sorted({w["quantum"] for w in corun})
    targets = []
    print("Busy time per cycle in us (pw-profiler, finish - awake): median of the window medians "
          "(min-max over windows); ratios are medians of the per-window ratios (min-max).")
    for q in quanta:
        ws = [w for w in corun if w["quantum"] == q]
        print(f"\nquantum {q} ({q / 48:.2f} ms at 48 kHz), {len(ws)} windows, "
              f"cycles per window {min(w['cycles'] for w in ws)}-{max(w['cycles'] for w in ws)}, "
              f"missed cycles {sum(w['missed'] for w in ws)}")
        print(f"  {'contender':<15} {'workload':<15} {'busy us':>8} {'(min-max)':>16} {'p99':>7}  what")
        for label, workload, _, kind in CORUN:
            vals = [w["contenders"][label]["median"] for w in ws if label in w["contenders"]]
            p99 = [w["contenders"][label]["p99"] for w in ws if label in w["contenders"]]
            if not vals:
                continue
            print(f"  {label:<15} {workload:<15} {fmt(statistics.median(vals)):>8} "
                  f"{'(' + fmt(min(vals)) + '-' + fmt(max(vals)) + ')':>16} {fmt(statistics.median(p99)):>7}  {kind}")
        vd = [(label, nodes) for label, _, nodes, _ in CORUN if label.endswith("-vd")]
        if vd and any(w.get("parts") for w in ws):
            def part(n):
                vals = [w["parts"][n] for w in ws if n in w.get("parts", {})]
                return fmt(statistics.median(vals)) if vals else "?"
            print("  stereo vdevice, node by node (medians of each node alone): "
                  + "; ".join(f"{label} = " + " + ".join(f"{n} {part(n)}" for n in nodes) for label, nodes in vd))
        print("  ratios:")
        for a, b in RATIOS:
            rs = [w["contenders"][a]["median"] / w["contenders"][b]["median"] for w in ws
                  if a in w["contenders"] and b in w["contenders"] and w["contenders"][b]["median"] > 0]
            if not rs:
                continue
            r = statistics.median(rs)
            print(f"    {a + ' / ' + b:<30} {r:6.2f}x ({min(rs):.2f}-{max(rs):.2f})")
            limit = {("xp-2x1", "fc-2x1"): 0.4, ("xp-8x8", "fc-8x8"): 0.4, ("xp-64id", "c-copy-64"): 1.2,
                     ("xp-64morph", "xp-64dense"): 1.5}.get((a, b))
            if limit is not None:
                what = (f"{a} <= {limit}x {b}" if b.startswith("fc")
                        else "64x64 morphing <= 1.5x the same node static" if a == "xp-64morph"
                        else f"64x64 identity <= {limit}x in-daemon C memcpy")
                under = sum(1 for x in rs if x <= limit)
                targets.append((f"{what} at quantum {q}", r, r <= limit,
                                f"{r:.3f}x (median; under in {under} of {len(rs)} windows)"))
    if control:
        w = control[0]
        print(f"\ncontrol, the same daemon with the source linked straight to the sink, quantum 64 for {alone_seconds} s: "
              f"{w['cycles']} cycles, missed {w['missed']}, late cycles {w['late_wake']}")
    if alone:
        w = alone[0]
        c = w["contenders"].get("xp-128dense")
        print(f"\n128x128 dense alone at quantum 64 for {alone_seconds} s: {w['cycles']} cycles, "
              f"missed {w['missed']}, late cycles {w['late_wake']} (started or ended over 1.3 periods late, all nodes finished)"
              + (f", busy median {fmt(c['median'])} us, p99 {fmt(c['p99'])} us, max {fmt(c['max'])} us "
                 f"(the period is {64 / 48:.3f} ms; Crosspoint took longer than a period in {c['over_period']} cycles)" if c else ""))
        ok = c is not None and w["missed"] == 0
        targets.append((f"128x128 dense at quantum 64, no missed cycle over {alone_seconds} s alone"
                        + (" (--quick: not the 60 s of the target)" if quick else ""),
                        w["missed"], ok, f"{w['missed']} missed of {w['cycles']}"
                        + (f"; the control without it missed {control[0]['missed']} of {control[0]['cycles']}" if control else "")
                        + (f"; Crosspoint's longest cycle {fmt(c['max'])} us" if c else "")))
    print("\ntargets:")
    for text, _, ok, shown in targets:
        print(f"  {'met   ' if ok else 'missed'}  {text}: {shown}")
    return 0

# The second scene of xp-64morph: every cross-point other than in the first (the transpose's gains).
def other_dense(n):
    return [[gain(j, i, n) * 0.5 for j in range(n)] for i in range(n)]

def main(argv):
    cmd = argv[1] if len(argv) > 1 else ""
    if cmd == "matrix":  # rows as JSON, for `crosspoint matrix`
        print(json.dumps(dense(64, 64) if argv[2] == "a" else other_dense(64)))
        return 0
    if cmd == "conf":
        with open(f"{argv[3]}/bench-graph.conf", "w") as f:
            f.write(conf(argv[2]))
    elif cmd == "links":
        for a, b in links(argv[2]):
            print(a, b)
    elif cmd == "clients":
        for c in CLIENTS[argv[2]]:
            print(*c)
    elif cmd == "nodes":
        if argv[2] == "corun":
            print(LEAD, VD_LEAD)
        for _, _, nodes, _ in PHASES[argv[2]]:
            print(*nodes)
    elif cmd == "missing-nodes":  # pw-dump on stdin: print the nodes of PHASE not there yet; exit 1 if any
        names = {((o.get("info") or {}).get("props") or {}).get("node.name")
                 for o in json.load(sys.stdin) if o.get("type") == "PipeWire:Interface:Node"}
        want = ([LEAD, VD_LEAD] if argv[2] == "corun" else []) + [n for _, _, nodes, _ in PHASES[argv[2]] for n in nodes]
        missing = [n for n in want + ["bg-source", "bg-sink"] if n not in names]
        for n in missing:
            print(n)
        return 1 if missing else 0
    elif cmd == "window":
        print(json.dumps(read_window(argv[2], argv[3], int(argv[4]), argv[5])))
    elif cmd == "check-links":  # pw-dump on stdin: every contender's inputs and outputs linked
        return check_links(argv[2], json.load(sys.stdin))
    elif cmd == "problems":  # print a window's problems (one a line); exit 1 if any
        w = json.loads(sys.stdin.read())
        for p in w["problems"]:
            print(p)
        return 1 if w["problems"] else 0
    elif cmd == "report":
        secs = argv[argv.index("--alone-seconds") + 1] if "--alone-seconds" in argv else "60"
        return report(argv[2], secs, "--quick" in argv)
    else:
        print(__doc__, file=sys.stderr)
        return 2
    return 0

if __name__ == "__main__":
    sys.exit(main(sys.argv))
