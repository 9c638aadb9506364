# The harness of the real-browser tests of `crosspoint serve` (run by scripts/test-browser):
# a private PipeWire daemon + WirePlumber started with scripts/sandbox, the real module
# loaded through a drop-in, real audio played with pw-cat and recorded with pw-record, the
# real server (.build/release/crosspoint serve) and a real headless Chromium driven by
# Debian's chromedriver through Debian's python3-selenium. Nothing is mocked.
#
# Everything a run makes lives in one folder, /tmp/crosspoint-browser.XXXXXX, which is the
# sandbox's own folder: `scripts/sandbox stop` removes it (and the browser's profile and
# temporary files with it).
import array
import json
import math
import os
import random
import signal
import socket
import statistics
import struct
import subprocess
import sys
import tempfile
import threading
import time
import urllib.error
import urllib.request

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
sys.path.insert(0, os.path.join(ROOT, "scripts", "lib"))
from wavfile import RATE, read_wav, write_wav  # noqa: E402 (shared with scripts/lib/stress_churn.py)
# The build under test: .build/release, or CROSSPOINT_BIN_DIR (a folder holding `crosspoint` and
# libpipewire-module-crosspoint.so).
BIN = os.path.abspath(os.environ.get("CROSSPOINT_BIN_DIR") or os.path.join(ROOT, ".build", "release"))
CROSSPOINT = os.path.join(BIN, "crosspoint")
LEAD_IN = RATE // 2  # 0.5 s of silence before a test signal: room to link everything


class Failure(Exception):
    pass


def log(message):
    print(f"  [{time.strftime('%H:%M:%S')}] {message}", flush=True)


# The measured figures, printed again at the end of the run.
FIGURES = []


def figure(test, text):
    FIGURES.append((test, text))
    print(f"  FIGURE {test}: {text}", flush=True)


def summary(values):
    """median / p95 / max of a list of numbers, as text."""
    if not values:
        return "no values"
    ordered = sorted(values)
    p95 = ordered[min(len(ordered) - 1, int(math.ceil(0.95 * len(ordered))) - 1)]
    return (f"median {statistics.median(ordered):.1f}, p95 {p95:.1f}, max {ordered[-1]:.1f}, "
            f"min {ordered[0]:.1f} (n={len(ordered)})")


def wait_until(what, condition, timeout=10.0, interval=0.02):
    deadline = time.monotonic() + timeout
    while True:
        value = condition()
        if value:
            return value
        if time.monotonic() > deadline:
            raise Failure(f"timed out after {timeout} s waiting for {what}")
        time.sleep(interval)


def free_port():
    with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


# ---------------------------------------------------------------- test signals

def tone(frequency, seconds, amplitude, lead_in=LEAD_IN):
    """A cosine after `lead_in` samples of silence: its first sample is `amplitude`, a sharp onset
    to align a recording on. Built from whole periods when the period is a whole number of samples."""
    frames = int(seconds * RATE)
    period = RATE / frequency
    if period == int(period):
        one = array.array("f", (amplitude * math.cos(2 * math.pi * n / period) for n in range(int(period))))
        body = one * (frames // len(one) + 1)
        body = body[:frames]
    else:
        body = array.array("f", (amplitude * math.cos(2 * math.pi * frequency * n / RATE) for n in range(frames)))
    return array.array("f", [0.0]) * lead_in + body


def modulated_tone(frequency, seconds, low, high, rate_hz=0.5):
    """A cosine whose amplitude swings between `low` and `high` `rate_hz` times a second (a meter
    reading it moves)."""
    frames = int(seconds * RATE)
    mid, depth = (high + low) / 2, (high - low) / 2
    w, m = 2 * math.pi * frequency / RATE, 2 * math.pi * rate_hz / RATE
    return array.array("f", ((mid + depth * math.sin(m * n)) * math.cos(w * n) for n in range(frames)))


def peak_db(samples):
    peak = max((abs(x) for x in samples), default=0.0)
    return 20 * math.log10(peak) if peak > 0 else float("-inf")


def onset(channel, threshold=1e-3):
    return next((n for n, x in enumerate(channel) if abs(x) > threshold), None)


def compare(recorded, expected, reference, reference_signal):
    """Delay-aware comparison of a recording with what was expected.

    The recording trails the played signal by what the tools add (nothing on PipeWire 0.3.65,
    a quantum on 1.x where pw-cat and pw-record are asynchronous): the reference channel (the
    player's first channel linked straight to the sink) tells by how much. Each expected-audible
    output must start exactly as late as the reference (the node adds no delay) and then match
    sample by sample; an expected-silent output must be silent. Returns a dict of figures."""
    ref_onset = onset(reference)
    sig_onset = onset(reference_signal)
    if ref_onset is None or sig_onset is None:
        raise Failure("the reference path recorded no signal")
    lag = ref_onset - sig_onset
    n_signal = len(reference_signal) - LEAD_IN
    window = range(LEAD_IN + 2400, LEAD_IN + n_signal - 4800)
    result = {"reference_lag": lag, "outputs": []}
    ref_error = max(abs((reference[n + lag] if 0 <= n + lag < len(reference) else float("inf")) - reference_signal[n])
                    for n in window)
    result["reference_error"] = ref_error
    for j, (got, want) in enumerate(zip(recorded, expected)):
        audible = any(abs(x) > 1e-3 for x in want)
        out_lag = None
        if audible:
            o_got, o_want = onset(got), onset(want)
            out_lag = None if o_got is None else o_got - o_want
        error = max(abs((got[n + lag] if 0 <= n + lag < len(got) else float("inf")) - want[n]) for n in window)
        result["outputs"].append({"audible": audible, "lag": out_lag, "max_error": error,
                                  "peak": max((abs(x) for x in got), default=0.0)})
    return result


def comparison_ok(result, tolerance=1e-4):
    if result["reference_error"] > 1e-4:
        return False
    for out in result["outputs"]:
        if out["max_error"] > tolerance:
            return False
        if out["audible"] and out["lag"] != result["reference_lag"]:
            return False
    return True


def describe(result):
    parts = [f"reference lag {result['reference_lag']} samples (error {result['reference_error']:.1e})"]
    for j, out in enumerate(result["outputs"]):
        parts.append(f"out{j}: {'signal' if out['audible'] else 'silence'} expected, lag {out['lag']}, "
                     f"max error {out['max_error']:.1e}, peak {out['peak']:.4f}")
    return "; ".join(parts)


# ---------------------------------------------------------------- the daemon

def pipewire_version():
    out = subprocess.run(["pw-record", "--version"], capture_output=True, text=True).stdout
    for line in out.splitlines():
        if line.startswith("Linked with libpipewire "):
            return tuple(int(x) for x in line.split()[-1].split(".")[:3])
    raise Failure(f"cannot read PipeWire's version from pw-record --version: {out}")


def channel_map(positions):
    """pw-cat's / pw-record's --channel-map: a comma list before 1.3.81, a JSON list from then on."""
    if pipewire_version() >= (1, 3, 81):
        return "[ " + " ".join(positions) + " ]"
    return ",".join(positions)


def spa_value(value):
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, str):
        return json.dumps(value)
    if isinstance(value, (list, tuple)):
        return "[ " + " ".join(spa_value(v) for v in value) + " ]"
    return repr(float(value)) if isinstance(value, float) else str(value)


class Sandbox:
    """A private daemon started by scripts/sandbox in /tmp/crosspoint-browser.XXXXXX, with one
    module instance per entry of `nodes` (dicts of module arguments, node.name among them)."""

    def __init__(self, nodes):
        self.nodes = nodes
        self.dir = None
        self.env = None
        self.children = []

    def start(self):
        self.dir = tempfile.mkdtemp(prefix="crosspoint-browser.", dir="/tmp")
        os.rmdir(self.dir)  # scripts/sandbox makes it (and removes it on stop)
        os.makedirs(os.path.join(self.dir, "dropin"))
        dropin = self.write_dropin(self.nodes)
        env = dict(os.environ, CROSSPOINT_DROPINS=dropin, CROSSPOINT_MODULE_DIR=BIN)
        result = subprocess.run([os.path.join(ROOT, "scripts/sandbox"), "start", self.dir], env=env,
                                capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            raise Failure(f"scripts/sandbox start failed: {result.stderr}")
        self.env = {k: v for k, v in os.environ.items() if k not in ("PIPEWIRE_REMOTE", "PIPEWIRE_RUNTIME_DIR",
                                                                      "PIPEWIRE_CONFIG_DIR")}
        with open(os.path.join(self.dir, "env")) as f:
            for line in f:
                if line.startswith("export "):
                    key, _, value = line[len("export "):].strip().partition("=")
                    self.env[key] = value.strip("'\"")
        self.env["DBUS_SESSION_BUS_ADDRESS"] = "unix:path=" + os.path.join(self.env["XDG_RUNTIME_DIR"], "bus")
        self.env["TMPDIR"] = os.path.join(self.dir, "tmp")
        os.makedirs(self.env["TMPDIR"], exist_ok=True)
        for args in self.nodes:
            self.wait(f"node {args['node.name']}", lambda: self.node_id(args["node.name"]), timeout=20)
        return self

    def write_dropin(self, nodes, installed=False):
        """The drop-in: one module instance per node, in this order. scripts/sandbox start copies
        it into the daemon's configuration; with `installed`, the copy there is rewritten (what
        the next restart_daemon loads: a user's edited configuration)."""
        dropin = os.path.join(self.dir, "config/pipewire/pipewire.conf.d" if installed else "dropin",
                              "crosspoint-browser.conf")
        with open(dropin + ".new", "w") as f:
            f.write("context.modules = [\n")
            for args in nodes:
                body = " ".join(f"{k} = {spa_value(v)}" for k, v in args.items())
                f.write(f"    {{ name = libpipewire-module-crosspoint args = {{ {body} }} }}\n")
            f.write("]\n")
        os.replace(dropin + ".new", dropin)
        return dropin

    def restart_daemon(self):
        result = subprocess.run([os.path.join(ROOT, "scripts/sandbox"), "restart-daemon", self.dir],
                                capture_output=True, text=True, timeout=60)
        if result.returncode != 0:
            raise Failure(f"scripts/sandbox restart-daemon failed: {result.stderr}")

    def stop(self):
        for child in self.children:
            stop_process(child)
        self.children = []
        if self.dir:
            subprocess.run([os.path.join(ROOT, "scripts/sandbox"), "stop", self.dir], timeout=60)
            self.dir = None

    def path(self, *parts):
        return os.path.join(self.dir, *parts)

    def run(self, args, timeout=30, check=True):
        try:
            result = subprocess.run(args, env=self.env, capture_output=True, text=True, timeout=timeout)
        except subprocess.TimeoutExpired:
            raise Failure(f"timed out after {timeout} s: {' '.join(args)[:200]}")
        if check and result.returncode != 0:
            raise Failure(f"{' '.join(args)[:200]} failed ({result.returncode}): {result.stderr.strip()[:400]}")
        return result

    def spawn(self, args, log_name, **kwargs):
        os.makedirs(self.path("logs"), exist_ok=True)
        out = open(self.path("logs", log_name), "ab")
        process = subprocess.Popen(args, env=self.env, stdin=subprocess.DEVNULL, stdout=out, stderr=subprocess.STDOUT,
                                   start_new_session=True, **kwargs)
        out.close()
        self.children.append(process)
        return process

    def wait(self, what, condition, timeout=10):
        return wait_until(what, condition, timeout=timeout, interval=0.1)

    # -- the graph

    def dump(self):
        for _ in range(3):
            result = self.run(["pw-dump"], check=False)
            if result.returncode == 0:
                try:
                    return json.loads(result.stdout)
                except json.JSONDecodeError:
                    pass
            time.sleep(0.2)
        raise Failure(f"pw-dump failed: {result.stderr.strip()[:300]}")

    @staticmethod
    def props_of(o):
        return (o.get("info") or {}).get("props") or o.get("props") or {}

    def node_id(self, name, objects=None):
        for o in objects or self.dump():
            if o["type"] == "PipeWire:Interface:Node" and self.props_of(o).get("node.name") == name:
                return o["id"]
        return None

    def ports(self, node_id, direction, objects=None):
        """port.name of a node's ports of one direction, in port.id order."""
        ports = [o for o in objects or self.dump() if o["type"] == "PipeWire:Interface:Port"
                 and self.props_of(o).get("node.id") == node_id and o["info"]["direction"] == direction]
        ports.sort(key=lambda o: self.props_of(o).get("port.id", 0))
        return [self.props_of(o).get("port.name") for o in ports]

    def params(self, node_id):
        """The node's Props params as a dict (from pw-dump), with the master mute (the standard
        Props `mute`) as mute.master."""
        for o in self.dump():
            if o["id"] == node_id:
                return flat_props(o)
        raise Failure(f"no object {node_id}")

    def enum_props(self, node_id):
        """The raw text of `pw-cli enum-params ID Props`: what must stay byte-identical."""
        return self.run(["pw-cli", "enum-params", str(node_id), "Props"]).stdout

    def set_params(self, node_id, pairs, verify=True):
        """pw-cli set-param ID Props '{ params = [ key value ... ] }' (a key given twice: the last
        value; the node refuses a change set naming a key twice). Unless verify is False, waits
        until the node's Props show every value (the node logs and ignores a change it refuses,
        and pw-cli succeeds anyway)."""
        wanted = dict(pairs)
        items = list(wanted.items())
        # pw-cli drops a Props pod over 1024 bytes: large change sets go in pieces.
        for start in range(0, len(items), 16):
            body = " ".join(f"{json.dumps(k)} {spa_value(v)}" for k, v in items[start:start + 16])
            self.run(["pw-cli", "set-param", str(node_id), "Props", "{ params = [ " + body + " ] }"])
        if verify:
            def applied():
                params = self.params(node_id)
                return all(k not in params or (abs(params[k] - v) <= 1e-6 * max(1, abs(v))
                                               if isinstance(v, float) and not isinstance(v, bool) else params[k] == v)
                           for k, v in wanted.items())
            self.wait(f"the node to take {body[:120]}", applied, timeout=5)

    def show(self, node):
        return json.loads(self.run([CROSSPOINT, "show", str(node), "--json"]).stdout)

    # -- audio

    def null_sink(self, name, positions):
        self.run(["pw-cli", "create-node", "adapter",
                  f"{{ factory.name=support.null-audio-sink node.name={name} media.class=Audio/Sink "
                  f"object.linger=true audio.position=[ {' '.join(positions)} ] }}"])
        self.wait(f"the ports of sink {name}",
                  lambda: (lambda objs: len(self.ports(self.node_id(name, objs), "input", objs)) == len(positions))(self.dump()))
        return name

    def destroy_node(self, name):
        node = self.node_id(name)
        if node is not None:
            self.run(["pw-cli", "destroy", str(node)], check=False)
            self.wait(f"node {name} to go", lambda: self.node_id(name) is None)

    def link(self, output, input):
        """pw-link OUTPUT INPUT; tried again a few times (PipeWire 1.4's pw-link once answered ENOENT
        for two ports that were both there, a moment after the player's ports appeared)."""
        for attempt in range(5):
            result = self.run(["pw-link", output, input], check=False)
            if result.returncode == 0:
                if attempt:
                    log(f"pw-link {output} {input}: worked at attempt {attempt + 1}")
                return
            time.sleep(0.2)
        raise Failure(f"pw-link {output} {input} failed ({result.returncode}): {result.stderr.strip()[:300]}")

    def links(self, objects=None):
        """Every link as ("node:port", "node:port") pairs (output, input)."""
        objects = objects or self.dump()
        names = {o["id"]: self.props_of(o).get("node.name") for o in objects if o["type"] == "PipeWire:Interface:Node"}
        ports = {o["id"]: f"{names.get(self.props_of(o).get('node.id'))}:{self.props_of(o).get('port.name')}"
                 for o in objects if o["type"] == "PipeWire:Interface:Port"}
        return {(ports.get(o["info"]["output-port-id"]), ports.get(o["info"]["input-port-id"]))
                for o in objects if o["type"] == "PipeWire:Interface:Link" and o.get("info")}

    def link_all(self, pairs):
        """Links (OUTPUT, INPUT) pairs ("node:port" each) in one batch, as the Swift rig does: one
        pw-cli, already connected, asks the link factory for them all within milliseconds; a
        pw-link each took long enough on a loaded machine for a player to play into some of
        its links before the others were there. Waits until all exist. Lingering links."""
        commands = []
        for output, input in pairs:
            (out_node, out_port), (in_node, in_port) = output.split(":", 1), input.split(":", 1)
            commands.append(f"create-link {out_node} {out_port} {in_node} {in_port} {{ object.linger = true }}\n")
        cli = subprocess.Popen(["pw-cli"], env=self.env, stdin=subprocess.PIPE, stdout=subprocess.DEVNULL,
                               stderr=subprocess.DEVNULL, text=True, start_new_session=True)
        try:
            cli.stdin.write("".join(commands))
            cli.stdin.flush()
            self.wait(f"{len(pairs)} link(s), {pairs[0][0]} -> {pairs[0][1]} first",
                      lambda: set(pairs) <= self.links(), timeout=10)
        finally:
            # `quit`, not the end of its input: 0.3.65's pw-cli spins at the end of its input.
            try:
                cli.stdin.write("quit\n")
                cli.stdin.close()
            except OSError:
                pass
            if not _waited(cli, 5):
                stop_process(cli)

    def play(self, channels, name, seconds_note=""):
        """Starts pw-cat playing `channels` (lists of samples) as node `name` (not autoconnected)
        and waits for its output ports. Returns the process."""
        wav = self.path("tmp", f"{name}.wav")
        write_wav(wav, channels)
        positions = [f"AUX{c}" for c in range(len(channels))]
        process = self.spawn(["pw-cat", "--playback", "-P", f"{{ node.autoconnect = false node.name = {name} }}",
                              "--channels", str(len(channels)), "--channel-map", channel_map(positions), wav], f"{name}.log")
        self.wait(f"player {name}'s ports",
                  lambda: (lambda objs: len(self.ports(self.node_id(name, objs), "output", objs)) == len(channels))(self.dump()))
        return process

    def record(self, sink, positions, name):
        """Starts pw-record recording the monitor of `sink` (channels `positions`); returns
        (process, path of the WAV)."""
        wav = self.path("tmp", f"{name}.wav")
        process = self.spawn(["pw-record", "--target", sink, "-P", f"{{ stream.capture.sink = true node.name = {name} }}",
                              "--channels", str(len(positions)), "--channel-map", channel_map(positions),
                              "--format", "f32", wav], f"{name}.log")
        self.wait(f"recorder {name}'s ports",
                  lambda: (lambda objs: len(self.ports(self.node_id(name, objs), "input", objs)) == len(positions))(self.dump()))
        return process, wav

    def play_through(self, node_name, signal, inputs, outputs, tag):
        """Plays `signal` (one channel per entry of `inputs`: input port index it goes into) through
        node `node_name`, records its `outputs` (port indices) and the reference path, and returns
        (list of recorded output channels, reference channel)."""
        objs = self.dump()
        node = self.node_id(node_name, objs)
        in_ports, out_ports = self.ports(node, "input", objs), self.ports(node, "output", objs)
        positions = [f"AUX{k}" for k in range(len(outputs))]
        reference = f"AUX{len(outputs)}"
        sink = self.null_sink(f"sink-{tag}", positions + [reference])
        try:
            for k, j in enumerate(outputs):
                self.link(f"{node_name}:{out_ports[j]}", f"{sink}:playback_{positions[k]}")
            recorder, wav = self.record(sink, positions + [reference], f"recorder-{tag}")
            time.sleep(0.3)
            player = self.play(signal, f"player-{tag}")
            self.link_all([(f"player-{tag}:output_AUX0", f"{sink}:playback_{reference}")]
                          + [(f"player-{tag}:output_AUX{c}", f"{node_name}:{in_ports[i]}") for c, i in enumerate(inputs)])
            player.wait(timeout=30)
            time.sleep(0.3)
            stop_process(recorder)
            channels = read_wav(wav)
            if len(channels) != len(positions) + 1:
                raise Failure(f"recorded {len(channels)} channels, expected {len(positions) + 1}")
            return channels[:len(outputs)], channels[len(outputs)]
        finally:
            self.destroy_node(sink)


def flat_props(o):
    """A pw-dump object's Props: its `params` pairs as a dict, plus mute.master (the standard
    `mute` property); None if it carries no Props."""
    props = ((((o or {}).get("info") or {}).get("params") or {}).get("Props") or [None])[0]
    if not props:
        return None
    values = props.get("params") or []
    out = dict(zip(values[0::2], values[1::2]))
    if "mute" in props:
        out["mute.master"] = props["mute"]
    return out


def _waited(process, timeout):
    """Whether `process` ended within `timeout` seconds."""
    try:
        process.wait(timeout=timeout)
        return True
    except subprocess.TimeoutExpired:
        return False


def stop_process(process, timeout=5):
    if process.poll() is None:
        try:
            os.killpg(process.pid, signal.SIGTERM)
        except ProcessLookupError:
            pass
        try:
            process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            try:
                os.killpg(process.pid, signal.SIGKILL)
            except ProcessLookupError:
                pass
            process.wait()


class PropsMonitor:
    """`pw-dump -m`: the daemon's changes as they happen. A reader thread stamps each batch with
    the wall clock (ms) as it arrives; `first(node_id, predicate)` tells when the node's Props
    first satisfied the predicate. Measured: it sees a set-param within ~1 ms of pw-cli returning."""

    def __init__(self, sandbox):
        self.batches = []
        self.lock = threading.Lock()
        self.process = subprocess.Popen(["pw-dump", "-m", "-N"], env=sandbox.env, stdout=subprocess.PIPE,
                                        stderr=subprocess.DEVNULL, text=True, bufsize=1, start_new_session=True)
        self.thread = threading.Thread(target=self._read, daemon=True)
        self.thread.start()
        wait_until("pw-dump -m's first dump", lambda: self.batches, timeout=15)

    def _read(self):
        lines = []
        for line in self.process.stdout:
            lines.append(line)
            if line.rstrip("\n") == "]":
                stamp = time.time() * 1000
                try:
                    batch = json.loads("".join(lines))
                except json.JSONDecodeError:
                    batch = []
                lines = []
                props = {}
                for o in batch:
                    flat = flat_props(o)
                    if flat:
                        props[o["id"]] = flat
                with self.lock:
                    self.batches.append((stamp, props))

    def mark(self):
        with self.lock:
            return len(self.batches)

    def first(self, node_id, predicate, since=0):
        with self.lock:
            for stamp, props in self.batches[since:]:
                if node_id in props and predicate(props[node_id]):
                    return stamp
        return None

    def close(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=5)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()


# ---------------------------------------------------------------- the server

class _NoRedirect(urllib.request.HTTPRedirectHandler):
    """Redirects are answers to look at (the page's ?token= is one), not to follow."""
    def redirect_request(self, *args, **kwargs):
        return None


NO_REDIRECTS = urllib.request.build_opener(_NoRedirect)


class Server:
    """`crosspoint serve` on a free port of 127.0.0.1 (or `listen`), with the sandbox's environment
    (so its token and presets live in the sandbox's config folder)."""

    def __init__(self, sandbox, listen="127.0.0.1", extra=(), name="serve"):
        self.sandbox = sandbox
        self.listen = listen
        self.port = free_port()
        self.extra = list(extra)
        self.name = name
        self.process = None
        self.token = None
        self.output = sandbox.path("logs", f"{name}.log")

    @property
    def base(self):
        return f"http://127.0.0.1:{self.port}"

    def start(self, token=None, use_printed=True):
        """Starts it; its requests carry `token`, or (use_printed) the one in the URL it printed."""
        self.token = token
        args = [CROSSPOINT, "serve", "--listen", self.listen, "--port", str(self.port)] + self.extra
        self.process = self.sandbox.spawn(args, f"{self.name}.log")

        def up():
            if self.process.poll() is not None:
                raise Failure(f"crosspoint serve exited ({self.process.returncode}): {self.log()[-2000:]}")
            try:
                status, _, _ = self.request("GET", "/api/status", timeout=1)
                return status in (200, 401)
            except OSError:
                return False
        wait_until("crosspoint serve to answer", up, timeout=15, interval=0.05)
        if self.token is None and use_printed:
            wait_until("the URL with the token", lambda: self.printed_token() is not None, timeout=5, interval=0.05)
            self.token = self.printed_token()
        return self

    def log(self):
        try:
            with open(self.output, errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def printed_token(self):
        """The token from the URL the server printed (…?token=XYZ)."""
        import re
        match = re.search(r"[?&]token=([A-Za-z0-9_\-.~%]+)", self.log())
        return match.group(1) if match else None

    def alive(self):
        return self.process is not None and self.process.poll() is None

    def stop(self):
        if self.process is not None:
            stop_process(self.process)
            if self.process in self.sandbox.children:
                self.sandbox.children.remove(self.process)
            self.process = None

    def request(self, method, path, body=None, headers=None, timeout=5, token=None, content_type="application/json"):
        """(status, headers, body bytes); 4xx/5xx answers are returned, not raised."""
        h = {} if headers is None else dict(headers)
        if isinstance(body, (dict, list)):
            body = json.dumps(body).encode()
        elif isinstance(body, str):
            body = body.encode()
        if body is not None and content_type and "Content-Type" not in h:
            h["Content-Type"] = content_type
        tok = token if token is not None else self.token
        if tok and "Authorization" not in h:
            h["Authorization"] = f"Bearer {tok}"
        req = urllib.request.Request(self.base + path, data=body, method=method, headers=h)
        try:
            with NO_REDIRECTS.open(req, timeout=timeout) as r:
                return r.status, dict(r.headers), r.read()
        except urllib.error.HTTPError as e:
            return e.code, dict(e.headers or {}), e.read()

    def json(self, method, path, body=None, **kw):
        status, _, data = self.request(method, path, body, **kw)
        if status != 200:
            raise Failure(f"{method} {path} -> {status}: {data[:300]!r}")
        return json.loads(data)

    def raw(self, data, timeout=5):
        """Sends raw bytes on a fresh connection and closes its sending side; returns what came back
        (b'' if the server closed without answering)."""
        with socket.create_connection(("127.0.0.1", self.port), timeout=timeout) as s:
            try:
                s.sendall(data)
                s.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            chunks = []
            try:
                while True:
                    chunk = s.recv(65536)
                    if not chunk:
                        break
                    chunks.append(chunk)
                    whole = b"".join(chunks)
                    if b"\r\n\r\n" in whole:
                        head, _, rest = whole.partition(b"\r\n\r\n")
                        length = next((int(l.split(b":")[1]) for l in head.split(b"\r\n")
                                       if l.lower().startswith(b"content-length:")), 0)
                        if len(rest) >= length:
                            break
            except socket.timeout:
                raise Failure(f"no answer within {timeout} s to raw request {data[:80]!r}")
            except ConnectionResetError:
                pass
            return b"".join(chunks)


# ---------------------------------------------------------------- the browser

class Browser:
    """Debian's chromium (headless) through Debian's chromedriver; selenium never downloads anything
    (the driver's path is given, and SE_OFFLINE is set for its manager)."""

    def __init__(self, sandbox, width=1280, height=800):
        os.environ["SE_OFFLINE"] = "true"
        os.environ["SE_AVOID_BROWSER_DOWNLOAD"] = "true"
        from selenium import webdriver
        from selenium.webdriver.chrome.service import Service
        options = webdriver.ChromeOptions()
        options.binary_location = "/usr/bin/chromium"
        profile = sandbox.path("chrome-profile")
        for arg in ("--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                    f"--window-size={width},{height}", f"--user-data-dir={profile}", "--no-first-run",
                    "--no-default-browser-check", "--disable-extensions", "--disable-background-networking",
                    "--disable-component-update", "--disable-sync", "--metrics-recording-only",
                    "--disable-renderer-backgrounding", "--disable-background-timer-throttling",
                    "--disable-backgrounding-occluded-windows"):
            options.add_argument(arg)
        options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
        env = dict(os.environ, TMPDIR=sandbox.env["TMPDIR"])
        # Selenium 4.8 (Debian 12) names the driver's log log_path, later ones (Debian 13: 4.24) log_output.
        import inspect
        log_key = "log_output" if "log_output" in inspect.signature(Service.__init__).parameters else "log_path"
        service = Service(executable_path="/usr/bin/chromedriver", env=env,
                          **{log_key: sandbox.path("logs", "chromedriver.log")})
        self.driver = webdriver.Chrome(service=service, options=options)
        self.driver.set_script_timeout(30)
        self.driver.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                    {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": False})

    def quit(self):
        try:
            self.driver.quit()
        except Exception:
            pass

    def js(self, script, *args):
        return self.driver.execute_script(script, *args)

    def js_async(self, script, *args):
        return self.driver.execute_async_script(script, *args)

    def open(self, url):
        self.driver.get(url)

    def find(self, testid):
        from selenium.webdriver.common.by import By
        found = self.driver.find_elements(By.CSS_SELECTOR, f'[data-testid="{testid}"]')
        return found[0] if found else None

    def wait_for(self, testid, timeout=10):
        return wait_until(f"element data-testid={testid}", lambda: self.find(testid), timeout=timeout, interval=0.05)

    def attr(self, testid, name):
        return self.js("const e = document.querySelector(`[data-testid='${arguments[0]}']`);"
                       "return e ? e.getAttribute(arguments[1]) : null;", testid, name)

    def cells(self):
        """{(i, j): data-gain as float (None if absent)} for every cell on the page, read in one call."""
        pairs = self.js("return Array.from(document.querySelectorAll('[data-testid^=\"cell-\"]'))"
                        ".map(e => [e.getAttribute('data-testid'), e.getAttribute('data-gain')]);")
        out = {}
        for testid, gain in pairs:
            _, i, j = testid.split("-")
            out[(int(i), int(j))] = None if gain in (None, "") else float(gain)
        return out

    def select_node(self, node_id, name):
        """Picks the node in the node picker (a <select> by value or text, or anything clickable
        holding the name)."""
        picker = self.wait_for("node-picker")
        if picker.tag_name.lower() == "select":
            from selenium.webdriver.support.ui import Select
            select = Select(picker)
            # The node's id first: a name may be part of another's ("desk" of "xp-desk").
            options = [(o.get_attribute("value"), o.text) for o in select.options]
            for value, text in sorted(options, key=lambda o: o[0] != str(node_id)):
                if value in (str(node_id), name) or name in text:
                    select.select_by_value(value)
                    return
            raise Failure(f"node {name} ({node_id}) not in the picker: {[o.text for o in select.options]}")
        from selenium.webdriver.common.by import By
        for element in picker.find_elements(By.XPATH, ".//*"):
            if name in (element.text or "") or element.get_attribute("value") in (str(node_id), name):
                element.click()
                return
        raise Failure(f"node {name} not in the picker: {picker.text[:300]}")

    def console_errors(self):
        try:
            return [e for e in self.driver.get_log("browser") if e.get("level") in ("SEVERE",)]
        except Exception:
            return []
