#!/usr/bin/env python3
"""Churn against a private PipeWire daemon with the real Crosspoint module loaded (see scripts/stress-churn).

The daemon (pipewire, optionally under valgrind) and WirePlumber are children of this script, so
their exit statuses are known. The run is a series of daemon lives; each life is a series of
segments; each segment plays a known signal through the node's untouched channel (in_AUX0 ->
out_AUX0, identity) into a recording null sink while churning everything else:

  - peers appear (pw-cat players, null sinks linked right after creation, standalone processes
    that load the module themselves), link to every Crosspoint port, and disappear;
  - port counts change (set-param inputs / outputs), channel names change;
  - set-param storms on every key that does not touch output 0;

then checks that the recording is the signal sample for sample, that the node has exactly one
port per channel and that no link is left dangling. A life ends with the module destroyed
(pw-cli destroy) and the daemon restarted, or with a plain daemon restart. Zero daemon crashes
(every exit status 0, no core file, nothing in the logs), zero leaked ports, RSS flat after
warm-up within a life, untouched channel sample-exact in every segment.
"""
import argparse
import array
import json
import os
import random
import resource
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time

from wavfile import RATE, read_wav, write_wav  # noqa: E402 (scripts/lib, beside this file)

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
SYSTEM_MODULE_DIR = "/usr/lib/x86_64-linux-gnu/pipewire-0.3"
NODE = "xp-churn"
LEAD_IN = RATE // 2


def log(message):
    print(f"[{time.strftime('%H:%M:%S')}] {message}", flush=True)


class Failure(Exception):
    pass


# ---------------------------------------------------------------- the signal

def make_signal(seconds, seed):
    """Half a second of silence, then noise whose first sample is sharp (for alignment)."""
    rng = random.Random(seed)
    body = [rng.uniform(-0.25, 0.25) for _ in range(int(seconds * RATE))]
    body[0] = 0.25
    return array.array("f", [0.0] * LEAD_IN + body)  # as written to the file: 32-bit floats


def compare(recorded, signal):
    """Aligns the recording on the signal's first sample and compares every sample after it."""
    threshold = 1e-3
    onset = next((n for n, x in enumerate(recorded) if abs(x) > threshold), None)
    if onset is None:
        return {"ok": False, "why": "no audio arrived", "compared": 0}
    body = signal[LEAD_IN:]
    # The last 100 ms may be cut by the stop of the recorder.
    length = min(len(body), len(recorded) - onset) - RATE // 10
    if length < RATE:
        return {"ok": False, "why": f"only {length} samples recorded after the onset", "compared": 0}
    worst, bad, first_bad = 0.0, 0, None
    runs = []  # [start, end, silent]: stretches of differing samples (closer than 64 samples: one)
    for k in range(length):
        e = abs(recorded[onset + k] - body[k])
        if e > 0:
            bad += 1
            if first_bad is None:
                first_bad = k
            worst = max(worst, e)
            if runs and k - runs[-1][1] < 64:
                runs[-1][1] = k + 1
            else:
                runs.append([k, k + 1, True])
    for run in runs:
        run[2] = all(recorded[onset + k] == 0 for k in range(run[0], run[1]))
    why = ""
    if bad:
        why = f"{bad} of {length} samples differ (max {worst:.3g}, first at {first_bad / RATE:.3f} s)"
        # What happened there: the signal shifted in time (samples lost or repeated: a glitch of
        # the graph), or a gain applied to it?
        at = first_bad + 512
        window = range(at, min(at + 1024, length))
        if len(window) == 1024:
            for shift in range(-16384, 16385):
                if all(0 <= onset + k + shift < len(recorded) and recorded[onset + k + shift] == body[k] for k in window):
                    why += f"; from there on the signal is exact but shifted by {shift} samples"
                    break
            else:
                ratios = {round(recorded[onset + k] / body[k], 4) for k in window if abs(body[k]) > 1e-3}
                why += f"; gains recorded/played there: {sorted(ratios)[:6]}"
    return {"ok": bad == 0, "compared": length, "max_error": worst, "differing": bad, "first_differing": first_bad, "why": why,
            "runs": runs}


# ---------------------------------------------------------------- the daemon

class Daemon:
    def __init__(self, directory, valgrind, extra_dropins, control=None):
        self.dir = directory
        self.valgrind = valgrind
        # --control: the node under test is this program (a stock pw_filter), not the module.
        self.control = control
        self.control_process = None
        self.lives = 0
        self.exits = []
        self.pipewire = None
        self.wireplumber = None
        self.dbus_pid = None
        for sub in ("config/pipewire/pipewire.conf.d", "state", "logs", "cores"):
            os.makedirs(os.path.join(directory, sub), exist_ok=True)
        os.makedirs(os.path.join(directory, "runtime"), mode=0o700, exist_ok=True)
        with open(os.path.join(directory, "config/pipewire/pipewire.conf.d/churn.conf"), "w") as f:
            if control:
                f.write("# --control: no Crosspoint\n")
            else:
                f.write("context.modules = [\n    { name = libpipewire-module-crosspoint\n"
                        f"      args = {{ node.name = \"{NODE}\" inputs = 4 outputs = 4 ramp.ms = 2 }} }}\n]\n")
        for dropin in extra_dropins:
            shutil.copy(dropin, os.path.join(directory, "config/pipewire/pipewire.conf.d/"))
        env = {k: v for k, v in os.environ.items() if k not in ("PIPEWIRE_REMOTE", "PIPEWIRE_RUNTIME_DIR", "PIPEWIRE_CONFIG_DIR")}
        module_dir = os.path.join(ROOT, ".build/release")
        if valgrind:
            # Valgrind 3.19 cannot read the DWARF 5 the Swift toolchain writes ("unhandled dwarf2
            # abbrev form code 0x25 ... Giving up"): it gets a copy without debug info (the symbol
            # table stays, so its stacks still name Crosspoint's functions).
            module_dir = os.path.join(directory, "modules")
            os.makedirs(module_dir, exist_ok=True)
            module = os.path.join(module_dir, "libpipewire-module-crosspoint.so")
            subprocess.run(["objcopy", "--strip-debug", os.path.join(ROOT, ".build/release/libpipewire-module-crosspoint.so"), module],
                           check=True)
        env.update(XDG_RUNTIME_DIR=os.path.join(directory, "runtime"), XDG_CONFIG_HOME=os.path.join(directory, "config"),
                   XDG_STATE_HOME=os.path.join(directory, "state"),
                   PIPEWIRE_MODULE_DIR=module_dir + ":" + SYSTEM_MODULE_DIR,
                   DBUS_SESSION_BUS_ADDRESS="unix:path=" + os.path.join(directory, "runtime/bus"))
        self.env = env

    def run(self, args, timeout=30, check=False, stdin=None):
        try:
            result = subprocess.run(args, env=self.env, capture_output=True, text=True, timeout=timeout, input=stdin)
        except subprocess.TimeoutExpired:
            raise Failure(f"timed out after {timeout} s: {' '.join(args)[:200]}")
        if check and result.returncode != 0:
            raise Failure(f"{' '.join(args)[:200]} failed ({result.returncode}): {result.stderr.strip()[:400]}")
        return result

    def spawn(self, args, log_name, env=None, **kwargs):
        out = open(os.path.join(self.dir, "logs", log_name), "ab")
        return subprocess.Popen(args, env=env or self.env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                start_new_session=True, **kwargs)

    def answers(self):
        return self.run(["pw-cli", "info", "0"], timeout=10 if not self.valgrind else 60).returncode == 0

    def dump(self):
        for attempt in range(3):
            result = self.run(["pw-dump"], timeout=30 if not self.valgrind else 120)
            if result.returncode == 0:
                try:
                    return json.loads(result.stdout)
                except json.JSONDecodeError:
                    pass
            time.sleep(0.2)
        raise Failure(f"pw-dump failed: {result.stderr.strip()[:300]}")

    def wait(self, what, condition, timeout=15):
        timeout *= 6 if self.valgrind else 1
        deadline = time.time() + timeout
        while True:
            self.check_alive()
            value = condition()
            if value:
                return value
            if time.time() > deadline:
                raise Failure(f"timed out waiting for {what}")
            time.sleep(0.1)

    def start(self):
        self.lives += 1
        if self.dbus_pid is None:
            out = subprocess.run(["dbus-daemon", "--session", "--fork", "--print-pid",
                                  "--address=" + self.env["DBUS_SESSION_BUS_ADDRESS"]],
                                 env=self.env, capture_output=True, text=True, timeout=20, check=True)
            self.dbus_pid = int(out.stdout.split()[0])
        command = ["pipewire"]
        if self.valgrind:
            command = ["valgrind", "--tool=memcheck", "--error-limit=no", "--num-callers=40", "--track-origins=no",
                       "--leak-check=full", "--show-leak-kinds=definite",
                       f"--log-file={self.dir}/logs/valgrind-{self.lives}.log", "pipewire"]

        def core_files():
            resource.setrlimit(resource.RLIMIT_CORE, (resource.RLIM_INFINITY, resource.RLIM_INFINITY))
        # The RSS check looks for memory the daemon keeps using, not for free memory glibc keeps.
        # With glibc's dynamic mmap threshold, the large blocks of the peers' null sinks (their
        # adapters size buffers for clock.quantum-limit), once freed, raise the threshold, so later
        # ones come from the heap, whose free middle glibc does not give back: a daemon with only
        # peers coming and going (no leak: its heap after malloc_trim is flat) climbed 18 to 31 MB
        # over 6 segments, and CI failed on it. A fixed threshold (glibc's default value) returns
        # such blocks when freed; then the same run's heap stayed at 3.3 to 3.9 MB (RELIABILITY.md).
        daemon_env = dict(self.env, MALLOC_MMAP_THRESHOLD_="131072")
        self.pipewire = self.spawn(command, f"pipewire-{self.lives}.log", env=daemon_env, cwd=os.path.join(self.dir, "cores"),
                                   preexec_fn=core_files)
        self.wait("pipewire to answer", self.answers, timeout=20)
        self.wireplumber = self.spawn(["wireplumber"], f"wireplumber-{self.lives}.log")

        def session_ready():
            names = {((o.get("info") or {}).get("props") or {}).get("application.name") for o in self.dump()
                     if o["type"] == "PipeWire:Interface:Client"}
            return {"WirePlumber", "WirePlumber [export]"} <= names
        self.wait("WirePlumber to connect", session_ready, timeout=20)
        if self.control:
            self.control_process = self.spawn([self.control], f"control-{self.lives}.log")
        self.wait(f"node {NODE}", lambda: Graph(self.dump()).node_id(NODE) is not None, timeout=20)

    def check_alive(self):
        if self.pipewire is not None and self.pipewire.poll() is not None:
            self.exits.append(self.pipewire.returncode)
            code = self.pipewire.returncode
            self.pipewire = None
            raise Failure(f"the daemon died (exit status {code}); see {self.dir}/logs/pipewire-{self.lives}.log")

    def rss_kib(self):
        pid = self.pipewire.pid
        with open(f"/proc/{pid}/status") as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
        return 0

    def stop(self):
        """Stops WirePlumber and the daemon with SIGTERM; the daemon's exit status must be 0."""
        for process, name in ((self.control_process, "control"), (self.wireplumber, "wireplumber"), (self.pipewire, "pipewire")):
            if process is None:
                continue
            if process.poll() is None:
                process.send_signal(signal.SIGTERM)
            try:
                process.wait(timeout=60 if self.valgrind else 10)
            except subprocess.TimeoutExpired:
                process.kill()
                process.wait()
                if name == "pipewire":
                    self.exits.append("hung")
                    raise Failure("the daemon did not exit within its time after SIGTERM")
            if name == "pipewire":
                self.exits.append(process.returncode)
                if process.returncode != 0:
                    raise Failure(f"the daemon exited with status {process.returncode} on SIGTERM")
        self.pipewire = self.wireplumber = self.control_process = None

    def shutdown(self):
        try:
            self.stop()
        except Failure as failure:
            log(f"at shutdown: {failure}")
        if self.dbus_pid:
            try:
                os.kill(self.dbus_pid, signal.SIGTERM)
            except ProcessLookupError:
                pass


class PwCli:
    """One pw-cli process fed commands on a pipe, for storms. pw-cli 0.3.65 reads a file given on
    standard input before it knows the registry ("unknown global") and spins at the end of a pipe,
    so the pipe stays open, the first command waits for its answer, and `quit` ends it."""

    def __init__(self, daemon):
        self.d = daemon
        self.output = os.path.join(daemon.dir, "logs", f"pw-cli-{daemon.lives}.log")
        out = open(self.output, "ab")
        self.process = subprocess.Popen(["pw-cli"], env=daemon.env, stdin=subprocess.PIPE, stdout=out, stderr=subprocess.STDOUT,
                                        start_new_session=True)

        def ready():
            # Asked again until pw-cli knows the registry.
            self.process.stdin.write(b"info 0\n")
            self.process.stdin.flush()
            time.sleep(0.2)
            return "\tid: 0" in open(self.output, errors="replace").read()
        daemon.wait("pw-cli to know the registry", ready, timeout=15)

    def send(self, commands):
        if self.process.poll() is not None:
            raise Failure(f"pw-cli exited ({self.process.returncode}); see {self.output}")
        self.process.stdin.write(("\n".join(commands) + "\n").encode())
        self.process.stdin.flush()

    def close(self):
        if self.process.poll() is None:
            try:
                self.process.stdin.write(b"quit\n")
                self.process.stdin.flush()
                self.process.wait(timeout=10)
            except (BrokenPipeError, subprocess.TimeoutExpired):
                self.process.kill()
                self.process.wait()


class Graph:
    def __init__(self, objects):
        self.objects = objects
        self.by_id = {o["id"]: o for o in objects}

    @staticmethod
    def props(o):
        return (o.get("info") or {}).get("props") or o.get("props") or {}

    def of_type(self, kind):
        return [o for o in self.objects if o["type"] == "PipeWire:Interface:" + kind]

    def node_id(self, name):
        return next((o["id"] for o in self.of_type("Node") if self.props(o).get("node.name") == name), None)

    def ports(self, node_id, direction=None):
        """[(id, port.name)] of a node, by port.id order."""
        ports = [o for o in self.of_type("Port") if self.props(o).get("node.id") == node_id
                 and (direction is None or o["info"]["direction"] == direction)]
        ports.sort(key=lambda o: self.props(o).get("port.id", 0))
        return [(o["id"], self.props(o).get("port.name")) for o in ports]

    def params(self, name):
        node = next((o for o in self.of_type("Node") if self.props(o).get("node.name") == name), None)
        props = (((node or {}).get("info") or {}).get("params") or {}).get("Props") or [{}]
        values = props[0].get("params") or []
        return dict(zip(values[0::2], values[1::2]))

    def links(self):
        return [(o["id"], o["info"]["output-port-id"], o["info"]["input-port-id"]) for o in self.of_type("Link")]

    def stray_links(self):
        """Links whose ports or nodes no longer exist."""
        stray = []
        for o in self.of_type("Link"):
            info = o["info"]
            ends = (info["output-node-id"], info["output-port-id"], info["input-node-id"], info["input-port-id"])
            if not all(e in self.by_id for e in ends):
                stray.append(o["id"])
        return stray

    def module_id(self, argument):
        return next((o["id"] for o in self.of_type("Module") if argument in ((o.get("info") or {}).get("args") or "")), None)


# ---------------------------------------------------------------- the churn

SAFE_KEYS_IN = "gain.in.{i}", "mute.in.{i}"
SAFE_KEYS_OUT = "gain.out.{j}", "mute.out.{j}"


class Churn:
    def __init__(self, daemon, seed, counts, only=None):
        self.only = only
        self.d = daemon
        self.rng = random.Random(seed)
        self.counts = counts
        self.peer = 0
        self.tmp = os.path.join(daemon.dir, "audio")
        os.makedirs(self.tmp, exist_ok=True)
        peer_signal = [[0.1 * ((n * (c + 3)) % 97) / 97.0 for n in range(RATE * 2)] for c in range(4)]
        self.peer_wav = os.path.join(self.tmp, "peer.wav")
        write_wav(self.peer_wav, peer_signal)
        standalone = os.path.join(daemon.dir, "standalone.conf")
        with open(os.path.join(ROOT, "conf/crosspoint-standalone.conf")) as f:
            self.standalone_template = f.read()
        self.standalone = standalone

    # -- helpers

    def cli(self):
        """The pw-cli of this daemon life (a new one after a restart)."""
        if getattr(self, "_cli", None) is None or self._cli_life != self.d.lives:
            self.close_cli()
            self._cli, self._cli_life = PwCli(self.d), self.d.lives
        return self._cli

    def close_cli(self):
        if getattr(self, "_cli", None) is not None:
            self._cli.close()
            self._cli = None

    def shape(self):
        graph = Graph(self.d.dump())
        node = graph.node_id(NODE)
        return graph, node, graph.ports(node, "input"), graph.ports(node, "output")

    def link(self, output_port, input_port):
        """Links two ports by id; an existing link (remembered links are re-made by the node) is fine."""
        result = self.d.run(["pw-link", str(output_port), str(input_port)], timeout=20)
        if result.returncode != 0 and "File exists" not in result.stderr:
            return False
        return True

    def set_param(self, node_id, json_text):
        self.d.run(["pw-cli", "set-param", str(node_id), "Props", json_text], timeout=30, check=True)

    def storm(self, node_id, count, inputs, outputs):
        commands = []
        for _ in range(count):
            kind = self.rng.randrange(7)
            i, j = self.rng.randrange(inputs), self.rng.randrange(1, outputs)
            if kind == 0:
                text = f'"matrix.{i}.{j}" {self.rng.uniform(-2, 2):.4f}'
            elif kind == 1:
                text = f'"gain.out.{j}" {self.rng.uniform(-2, 2):.4f} "mute.out.{j}" {self.rng.choice(["true", "false"])}'
            elif kind == 2:
                # Inputs other than 0 reach output 0 through matrix.i.0, which stays 0.
                i = self.rng.randrange(1, inputs)
                text = f'"gain.in.{i}" {self.rng.uniform(-2, 2):.4f} "mute.in.{i}" {self.rng.choice(["true", "false"])}'
            elif kind == 3:
                text = f'"ramp.ms" {self.rng.choice([0, 1, 2, 5, 50])}'
            elif kind == 4:
                # A channel map that keeps output 0 on input 0.
                sources = [0] + [self.rng.randrange(-1, inputs) for _ in range(outputs - 1)]
                text = '"channel-map" [ ' + " ".join(map(str, sources)) + " ]"
            elif kind == 5:
                # Refused: an unknown key, an index out of range, a value out of range, a hostile number.
                text = self.rng.choice(['"no.such" 1', f'"matrix.{inputs + 3}.1" 0.5', '"gain.out.1" 1e30',
                                        '"inputs" -9.223372e18', '"outputs" 1e20', '"channel-map" [ 1e20 0 ]'])
            else:
                text = f'"matrix.FR.AUX{j}" 0.5' if self.rng.random() < 0.5 else f'"gain.out.AUX{j}" 0.7'
            commands.append(f"set-param {node_id} Props {{ params = [ {text} ] }}")
            self.counts["set-params"] += 1
        self.cli().send(commands)

    def wait_shape(self, inputs, outputs):
        def ok():
            graph, node, ins, outs = self.shape()
            params = graph.params(NODE)
            return len(ins) == inputs and len(outs) == outputs and params.get("inputs") == inputs and params.get("outputs") == outputs
        self.d.wait(f"{NODE} to have {inputs} inputs and {outputs} outputs", ok, timeout=15)

    # -- the actions

    def event(self, what):
        """Notes a moment of the segment (printed when the untouched channel is not exact)."""
        self.events.append((time.time(), what))

    def peer_player(self):
        """A 4-channel player linked to every input but in_AUX0. Half of them leave cleanly (their
        links removed, then the process stopped); the others die while linked (SIGINT), as a
        crashing or killed client does."""
        self.peer += 1
        name = f"peer-play-{self.peer}"
        abrupt = self.rng.random() < 0.5
        player = self.d.spawn(["pw-cat", "--playback", "-P", f"{{ node.autoconnect = false node.name = {name} }}",
                               "--channels", "4", "--channel-map", "AUX0,AUX1,AUX2,AUX3", self.peer_wav], f"{name}.log")
        made = []
        try:
            ports = self.d.wait(f"{name}'s ports", lambda: (lambda g: len(g.ports(g.node_id(name), "output")) == 4 and g.ports(g.node_id(name), "output"))(Graph(self.d.dump())))
            graph, node, ins, outs = self.shape()
            self.event(f"{name} links")
            for k, (port, _) in enumerate(ins[1:]):
                if self.link(ports[k % 4][0], port):
                    made.append((ports[k % 4][0], port))
                    self.counts["links"] += 1
            self.event(f"{name} linked")
            time.sleep(self.rng.uniform(0.1, 0.8))
            if not abrupt:
                for output_port, input_port in made:
                    self.d.run(["pw-link", "-d", str(output_port), str(input_port)], timeout=20)
                self.event(f"{name} unlinked")
        finally:
            self.event(f"{name} dies while linked" if abrupt and made else f"{name} stops")
            player.send_signal(signal.SIGINT)
            player.wait(timeout=10)
            self.event(f"{name} exited")
        self.counts["peer players that died while linked" if abrupt else "peer players that left cleanly"] += 1
        self.counts["peers"] += 1

    def peer_sink(self, wait_for_ports):
        """A null sink, linked from every output (out_AUX0 fans out) right after it is created, then destroyed."""
        self.peer += 1
        name = f"peer-sink-{self.peer}"
        channels = self.rng.choice([2, 8])
        positions = " ".join(f"AUX{k}" for k in range(channels))
        self.d.run(["pw-cli", "create-node", "adapter",
                    f"{{ factory.name=support.null-audio-sink node.name={name} media.class=Audio/Sink "
                    f"object.linger=true audio.position=[ {positions} ] }}"], timeout=20, check=True)
        graph, node, ins, outs = self.shape()
        deadline = time.time() + (15 if wait_for_ports else 5) * (6 if self.d.valgrind else 1)
        sink_ports = []
        # Link as soon as the sink's ports exist: no wait beyond that.
        while time.time() < deadline:
            g = Graph(self.d.dump())
            sink_ports = g.ports(g.node_id(name), "input")
            if sink_ports and (len(sink_ports) == channels or not wait_for_ports):
                break
            time.sleep(0.02)
        for k, (port, _) in enumerate(outs):
            if sink_ports and self.link(port, sink_ports[k % len(sink_ports)][0]):
                self.counts["links"] += 1
        time.sleep(self.rng.uniform(0.0, 0.5))
        sink = Graph(self.d.dump()).node_id(name)
        if sink is not None:
            self.d.run(["pw-cli", "destroy", str(sink)], timeout=20)
        self.counts["peers"] += 1
        key = "null sinks linked once configured" if wait_for_ports else "null sinks linked as soon as a port appeared"
        self.counts[key] = self.counts.get(key, 0) + 1

    def standalone_module(self):
        """The module loaded and unloaded in its own process (pipewire -c), linked meanwhile."""
        self.peer += 1
        name = f"xp-side-{self.peer}"
        with open(self.standalone, "w") as f:
            f.write(self.standalone_template.replace('"crosspoint-standalone"', f'"{name}"'))
        process = self.d.spawn(["pipewire", "-c", self.standalone], f"{name}.log")
        try:
            self.d.wait(f"{name}", lambda: (lambda g: len(g.ports(g.node_id(name))) > 0)(Graph(self.d.dump())))
            graph, node, ins, outs = self.shape()
            side = graph.node_id(name)
            side_in = graph.ports(side, "input")
            if side_in and outs and self.link(outs[-1][0], side_in[0][0]):
                self.counts["links"] += 1
            time.sleep(self.rng.uniform(0.1, 0.5))
        finally:
            process.send_signal(signal.SIGTERM)
            try:
                status = process.wait(timeout=30 if self.d.valgrind else 10)
            except subprocess.TimeoutExpired:
                process.kill()
                raise Failure(f"the standalone module process {name} did not exit on SIGTERM")
        if status != 0:
            raise Failure(f"the standalone module process {name} exited with status {status}")
        self.counts["module loads"] += 1
        self.counts["standalone module processes (exit status 0)"] = self.counts.get("standalone module processes (exit status 0)", 0) + 1

    def change_counts(self):
        graph, node, ins, outs = self.shape()
        inputs, outputs = len(ins), len(outs)
        if self.rng.random() < 0.5:
            inputs = self.rng.choice([n for n in range(2, 9) if n != inputs])
            self.set_param(node, f'{{ params = [ "inputs" {inputs} ] }}')
        else:
            outputs = self.rng.choice([n for n in range(2, 9) if n != outputs])
            self.set_param(node, f'{{ params = [ "outputs" {outputs} ] }}')
        self.counts["port count changes"] += 1
        self.wait_shape(inputs, outputs)

    def rename(self):
        graph, node, ins, outs = self.shape()
        names = ["AUX0"] + self.rng.sample(["FL", "FR", "RL", "RR", "FC", "LFE", "SL", "SR", "TFL", "TFR"], len(outs) - 1)
        self.set_param(node, '{ params = [ "output.position" [ ' + " ".join(names) + " ] ] }")
        self.counts["renames"] += 1

    def storm_action(self):
        graph, node, ins, outs = self.shape()
        self.storm(node, self.rng.randrange(50, 250), len(ins), len(outs))

    # -- a segment

    def segment(self, seconds, index, strict_audio):
        """Plays a known signal into in_AUX0 for `seconds` while churning, and records out_AUX0 and,
        as a control, the player itself (linked straight to the recorder's second channel)."""
        signal_wav = os.path.join(self.tmp, f"signal-{index}.wav")
        recorded = os.path.join(self.tmp, f"recorded-{index}.wav")
        samples = make_signal(seconds, seed=index)
        write_wav(signal_wav, [samples])
        rec_sink, recorder_name, player_name = f"churn-rec-{index}", f"churn-recorder-{index}", f"churn-play-{index}"
        self.d.run(["pw-cli", "create-node", "adapter",
                    f"{{ factory.name=support.null-audio-sink node.name={rec_sink} media.class=Audio/Sink "
                    "object.linger=true audio.position=[ AUX0 AUX1 ] }"], timeout=20, check=True)
        sink_ports = self.d.wait(f"{rec_sink}'s ports", lambda: (lambda g: len(g.ports(g.node_id(rec_sink), "input")) == 2
                                                                  and g.ports(g.node_id(rec_sink), "input"))(Graph(self.d.dump())))
        graph, node, ins, outs = self.shape()
        if not self.link(outs[0][0], sink_ports[0][0]):
            raise Failure("cannot link out_AUX0 to the recording sink")
        recorder = self.d.spawn(["pw-record", "--target", rec_sink, "-P", f"{{ stream.capture.sink = true node.name = {recorder_name} }}",
                                 "--channels", "2", "--channel-map", "AUX0,AUX1", "--format", "f32", recorded], f"{recorder_name}.log")
        self.d.wait("the recorder", lambda: (lambda g: len(g.ports(g.node_id(recorder_name), "input")) == 2)(Graph(self.d.dump())))
        time.sleep(0.3)
        player = self.d.spawn(["pw-cat", "--playback", "-P", f"{{ node.autoconnect = false node.name = {player_name} }}",
                               "--channels", "1", "--channel-map", "MONO", signal_wav], f"{player_name}.log")
        player_port = self.d.wait("the player", lambda: (lambda g: g.ports(g.node_id(player_name), "output"))(Graph(self.d.dump())))[0][0]
        if not self.link(player_port, sink_ports[1][0]) or not self.link(player_port, ins[0][0]):
            raise Failure("cannot link the player to in_AUX0 and the recorder")
        started = time.time()
        self.events = []
        actions = [("peer player", self.peer_player), ("peer sink", lambda: self.peer_sink(True)),
                   ("peer sink linked at once", lambda: self.peer_sink(False)), ("port counts", self.change_counts),
                   ("storm", self.storm_action), ("rename", self.rename), ("standalone module", self.standalone_module)]
        if self.only:
            actions = [a for a in actions if a[0] in self.only]
        timeline = []
        # Leave the signal's last second alone: the recording must still be running when it ends.
        while time.time() - started < seconds - 1.5 and player.poll() is None:
            name, action = self.rng.choice(actions)
            begun = time.time() - started
            action()
            timeline.append((begun, time.time() - started, name))
            self.d.check_alive()
        player.wait(timeout=seconds + 30)
        time.sleep(0.5)
        recorder.send_signal(signal.SIGINT)
        recorder.wait(timeout=10)
        channels = read_wav(recorded)
        result, control = compare(channels[0], samples), compare(channels[1], samples)
        self.counts["segments"] += 1
        self.counts["seconds of audio compared"] += result["compared"] / RATE
        sink = Graph(self.d.dump()).node_id(rec_sink)
        if sink is not None:
            self.d.run(["pw-cli", "destroy", str(sink)], timeout=20)
        if result["ok"] and control["ok"]:
            for path in (signal_wav, recorded):
                os.remove(path)
        self.check_ports_and_links()
        status = "sample-exact" if result["ok"] else "not exact: " + result["why"]
        log(f"segment {index}: {len(timeline)} actions, {result['compared'] / RATE:.1f} s of the untouched channel compared: {status}")
        if not control["ok"]:
            # The player's own signal, recorded without Crosspoint, was damaged too: the graph
            # missed cycles (an overloaded machine), which no node can play through.
            log(f"segment {index}: the control channel (player straight to the recorder) is not exact either: {control['why']}")
            self.counts["segments the graph itself glitched in"] = self.counts.get("segments the graph itself glitched in", 0) + 1
        # When a client (a pw-cat) joins the node's other inputs or dies while linked to them,
        # PipeWire 0.3.65 now and then skips the filter for a cycle or two: its untouched outputs
        # go silent for those quanta. A stock pw_filter does the same (scripts/stress-churn
        # --control). Such runs of pure silence, at most 4 quanta long, inside the moments a peer
        # linked (from its first pw-link to its last, 0.2 s either side) or died, are counted;
        # any other difference fails the segment.
        moments = {}
        for t, what in self.events:
            name, _, happening = what.partition(" ")
            moments.setdefault(name, {})[happening] = t - started
        windows = []
        for name, m in moments.items():
            if "links" in m and "linked" in m:
                windows.append(("join", m["links"] - 0.2, m["linked"] + 0.2))
            if "dies while linked" in m:
                windows.append(("death", m["dies while linked"] - 0.2, m.get("exited", m["dies while linked"]) + 0.2))
        unexplained = []
        for begin, end, silent in result.get("runs", []):
            at = (begin + LEAD_IN) / RATE
            kinds = {kind for kind, a, b in windows if a <= at <= b}
            if silent and end - begin <= 4 * 1024 and kinds:
                key = "death" if "death" in kinds else "join"
                self.counts[f"dropouts as a peer {'died' if key == 'death' else 'joined'}"] += 1
                self.counts["ms of such dropouts"] += (end - begin) * 1000 / RATE
            else:
                unexplained.append((begin, end, silent))
        explained_only = not result["ok"] and not unexplained
        if explained_only:
            log(f"segment {index}: {len(result['runs'])} dropout(s) of silence, each as a peer joined or died "
                f"({', '.join(f'{(e - b) * 1000 / RATE:.0f} ms' for b, e, _ in result['runs'])})")
        if not result["ok"] and not explained_only:
            self.counts["segments not exact"] = self.counts.get("segments not exact", 0) + 1
            if result["first_differing"] is not None:
                # Playback starts about when the player is linked; its signal after a 0.5 s lead-in.
                at = result["first_differing"] / RATE + LEAD_IN / RATE
                near = [f"{a:.2f}-{b:.2f} s {name}" for a, b, name in timeline if a - 1 <= at <= b + 1]
                log(f"segment {index}: actions around {at:.2f} s after the player started: {near}")
                moments = [f"{t - started:.3f} s {what}" for t, what in self.events if abs(t - started - at) < 0.6]
                if moments:
                    log(f"segment {index}: moments around it: {moments}")
            if strict_audio and control["ok"]:
                raise Failure(f"segment {index}: the untouched channel changed while the control channel stayed exact: {result['why']}; "
                              f"unexplained stretches (start, end, silent): {unexplained[:5]}")

    def check_ports_and_links(self):
        if self.d.control:
            return
        graph = Graph(self.d.dump())

        def settled():
            g = Graph(self.d.dump())
            node = g.node_id(NODE)
            params = g.params(NODE)
            return (len(g.ports(node, "input")) == params.get("inputs") and len(g.ports(node, "output")) == params.get("outputs")
                    and not g.stray_links()) and g
        try:
            graph = self.d.wait("the ports to match the channel counts", settled, timeout=5)
        except Failure:
            node = graph.node_id(NODE)
            params = graph.params(NODE)
            raise Failure(f"leaked ports or links: {len(graph.ports(node, 'input'))} input ports for {params.get('inputs')} inputs, "
                          f"{len(graph.ports(node, 'output'))} output ports for {params.get('outputs')} outputs, stray links {graph.stray_links()}")


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--lives", type=str, default="6:module,2:restart,1:end",
                        help="daemon lives: SEGMENTS:HOW,... where HOW is module (destroy it, then restart), restart, or end")
    parser.add_argument("--segment-seconds", type=float, default=8)
    parser.add_argument("--actions", help="only these actions (comma-separated names, as the timeline prints them)")
    parser.add_argument("--control", action="store_true",
                        help="run the peer-player churn against a stock pw_filter (scripts/lib/control-filter.c) instead of Crosspoint")
    parser.add_argument("--valgrind", action="store_true", help="run the daemon under valgrind memcheck")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--keep", action="store_true", help="keep the run's directory")
    parser.add_argument("--rss-growth-kib", type=int, default=4096,
                        help="most RSS growth allowed within a life of 6 segments or more, after its first")
    args = parser.parse_args()
    lives = [(int(part.split(":")[0]), part.split(":")[1]) for part in args.lives.split(",")]

    directory = tempfile.mkdtemp(prefix="crosspoint-churn.", dir="/tmp")
    control = None
    if args.control:
        control = os.path.join(directory, "control-filter")
        flags = subprocess.run(["pkg-config", "--cflags", "--libs", "libpipewire-0.3"], capture_output=True, text=True, check=True).stdout.split()
        compiler = shutil.which("cc") or os.path.join(os.path.dirname(shutil.which("swift") or "/opt/swift/usr/bin/swift"), "clang")
        subprocess.run([compiler, "-O2", os.path.join(ROOT, "scripts/lib/control-filter.c"), "-o", control] + flags, check=True)
        # The actions that need nothing of Crosspoint's own (no params, no module).
        args.actions = args.actions or "peer player,peer sink,peer sink linked at once"
        if any(how == "module" for _, how in lives):
            parser.error("--control has no module to destroy: give --lives N:restart,... or N:end")
    daemon = Daemon(directory, args.valgrind, [], control)
    counts = {k: 0 for k in ("segments", "seconds of audio compared", "set-params", "peers", "peer players that left cleanly",
                             "peer players that died while linked", "dropouts as a peer joined", "dropouts as a peer died", "ms of such dropouts",
                             "links", "port count changes", "renames", "module loads", "module destroys", "daemon restarts")}
    churn = Churn(daemon, args.seed, counts, only=args.actions.split(",") if args.actions else None)
    rss = []
    started = time.time()
    failure = None
    log(f"churn in {directory}{' (daemon under valgrind)' if args.valgrind else ''}: lives {args.lives}, "
        f"{args.segment_seconds:g} s segments")
    index = 0
    try:
        daemon.start()
        for life, (segments, how) in enumerate(lives, 1):
            series = []
            for _ in range(segments):
                index += 1
                churn.segment(args.segment_seconds, index, strict_audio=not args.valgrind)
                time.sleep(0.5)
                series.append(daemon.rss_kib())
            rss.append(series)
            log(f"life {life}: daemon RSS after each segment (KiB): {' '.join(map(str, series))}")
            # Flat after warm-up: with the first segment as warm-up, the lowest of the last third
            # is no higher than the highest of the first third plus the allowance (peers' buffers
            # make it swing by a few MiB; a leak climbs past that and stays). A third is rounded
            # up: the short run's 5 samples after warm-up compare two with two, not one with one
            # (one sample each way failed a run once on the peers' swing alone: +4.4 MiB, where
            # the stock pw_filter's daemon climbs 3.7 MiB with the same peers; RELIABILITY.md).
            if len(series) >= 6:
                third = -(-(len(series) - 1) // 3)
                early, late = max(series[1:1 + third]), min(series[-third:])
                if late - early > args.rss_growth_kib:
                    raise Failure(f"life {life}: the daemon's RSS grew by {late - early} KiB after warm-up: {series}")
            if how == "module":
                graph = Graph(daemon.dump())
                module, node = graph.module_id(f'"{NODE}"'), graph.node_id(NODE)
                if module is None:
                    raise Failure("no module object carries the node's arguments")
                # PipeWire 1.x (since 0.3.77) gives clients no "x" permission on modules: the
                # daemon refuses the destroy, and module, node and audio must stay as they were.
                permissions = next((o.get("permissions") for o in graph.of_type("Module") if o["id"] == module), None)
                if permissions is not None and "x" not in permissions:
                    daemon.run(["pw-cli", "destroy", str(module)], timeout=30)
                    time.sleep(1)
                    after = Graph(daemon.dump())
                    if after.node_id(NODE) != node or after.module_id(f'"{NODE}"') != module:
                        raise Failure(f"the daemon refused to destroy module {module} (permissions {permissions}), "
                                      "yet the module or its node went")
                    if not daemon.answers():
                        raise Failure("the daemon stopped answering after a refused module destroy")
                    counts["module destroys refused (no x permission)"] = counts.get("module destroys refused (no x permission)", 0) + 1
                    log(f"module destroy refused (permissions {permissions}): module and node kept, daemon answering")
                    how = "restart"
            if how == "module":
                daemon.run(["pw-cli", "destroy", str(module)], timeout=30, check=True)
                gone = daemon.wait(f"{NODE} to go", lambda: (lambda g: g.node_id(NODE) is None and g)(Graph(daemon.dump())))
                leftovers = [o["id"] for o in gone.of_type("Port") if Graph.props(o).get("node.id") == node]
                if leftovers or gone.stray_links():
                    raise Failure(f"after the module went: ports {leftovers}, stray links {gone.stray_links()}")
                if not daemon.answers():
                    raise Failure("the daemon stopped answering after the module was destroyed")
                counts["module destroys"] += 1
                log("module destroyed: node, ports and links gone, daemon answering")
            churn.close_cli()
            if how in ("module", "restart"):
                daemon.stop()
                daemon.start()
                counts["daemon restarts"] += 1
                counts["module loads"] += 1
                log(f"daemon restarted (exit status {daemon.exits[-1]}), node back")
        churn.close_cli()
        daemon.stop()
    except Failure as f:
        failure = str(f)
    except Exception as e:  # noqa: BLE001 - any error fails the run, with its report
        failure = f"{type(e).__name__}: {e}"
    finally:
        try:
            churn.close_cli()
        except Exception:  # noqa: BLE001 - the daemon may be gone already
            pass
        daemon.shutdown()
    # Crashes that left no exit status here: core files and crash reports in the logs.
    cores = os.listdir(os.path.join(directory, "cores"))
    crashed_logs = []
    for name in sorted(os.listdir(os.path.join(directory, "logs"))):
        text = open(os.path.join(directory, "logs", name), errors="replace").read()
        if name.startswith("pipewire") and any(s in text for s in ("Program crashed", "Fatal error", "Segmentation fault", "SIGSEGV")):
            crashed_logs.append(name)
    if cores and not failure:
        failure = f"core files: {cores}"
    if crashed_logs and not failure:
        failure = f"crash reports in {crashed_logs}"
    valgrind_summary = []
    if args.valgrind:
        for name in sorted(os.listdir(os.path.join(directory, "logs"))):
            if name.startswith("valgrind-"):
                text = open(os.path.join(directory, "logs", name), errors="replace").read()
                summary = [line.split("== ", 1)[-1] for line in text.splitlines() if "ERROR SUMMARY" in line or "definitely lost:" in line]
                ours = text.count("crosspoint") + text.count("Crosspoint")
                valgrind_summary.append(f"{name}: {'; '.join(summary) or 'no summary (killed?)'}; "
                                        f"{ours} stack lines mention Crosspoint")
    elapsed = time.time() - started
    print()
    print(f"stress-churn: {'FAILED: ' + failure if failure else 'passed'}")
    print(f"  duration: {elapsed:.0f} s; daemon exit statuses: {daemon.exits}; core files: {len(cores)}")
    for key, value in counts.items():
        print(f"  {key}: {value:.0f}" if isinstance(value, float) else f"  {key}: {value}")
    for life, series in enumerate(rss, 1):
        print(f"  daemon RSS, life {life} (KiB after each segment): {' '.join(map(str, series))}")
    for line in valgrind_summary:
        print(f"  {line}")
    if failure or args.keep:
        print(f"  logs kept in {directory}/logs")
    else:
        shutil.rmtree(directory, ignore_errors=True)
    sys.exit(1 if failure else 0)


if __name__ == "__main__":
    main()
