"""Jitter on a link, made by queueing as a network makes it, and measured (NetworkStreamTests).

The link's egress is shaped by a token bucket (`tc qdisc ... tbf`, set by the test); bursts
of datagrams to a discard port queue there, and what is sent behind them waits until they
drain. Probes sent the same way carry their send time; the machines of the test's network
are namespaces of one kernel, so both ends read one CLOCK_MONOTONIC and a probe's one-way
delay is read directly.

  jitter.py cross ADDRESS SECONDS MOST   bursts of 0 to MOST datagrams of 1400 bytes to
                                         ADDRESS:9, 20 to 60 ms apart (seeded: the same
                                         bursts every run)
  jitter.py send ADDRESS SECONDS          a probe every 5 ms to ADDRESS:45000
  jitter.py receive SECONDS               the probes' one-way delays, in ms: count, lowest,
                                          median, 99th percentile, highest

Every loop is bounded in time (and a probe receiver by 2 s of silence).
"""
import random
import socket
import struct
import sys
import time

PORT = 45000


def cross(address, seconds, most):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 1 << 20)
    rng, end = random.Random(32), time.monotonic() + seconds
    while time.monotonic() < end:
        for _ in range(rng.randint(0, most)):
            s.sendto(b"\0" * 1400, (address, 9))
        time.sleep(rng.uniform(0.02, 0.06))


def send(address, seconds):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    end = time.monotonic() + seconds
    while time.monotonic() < end:
        s.sendto(struct.pack("d", time.monotonic()) + b"\0" * 200, (address, PORT))
        time.sleep(0.005)


def receive(seconds):
    s = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    s.bind(("0.0.0.0", PORT))
    s.settimeout(2)
    delays, end = [], time.monotonic() + seconds
    while time.monotonic() < end:
        try:
            data, _ = s.recvfrom(2048)
        except socket.timeout:
            break
        if len(data) >= 8:
            delays.append((time.monotonic() - struct.unpack("d", data[:8])[0]) * 1000)
    delays.sort()
    n = len(delays)
    if n == 0:
        print("0 0 0 0 0")
    else:
        print("%d %.3f %.3f %.3f %.3f" % (n, delays[0], delays[n // 2], delays[min(n - 1, n * 99 // 100)], delays[-1]))


if __name__ == "__main__":
    mode = sys.argv[1]
    if mode == "cross":
        cross(sys.argv[2], float(sys.argv[3]), int(sys.argv[4]))
    elif mode == "send":
        send(sys.argv[2], float(sys.argv[3]))
    elif mode == "receive":
        receive(float(sys.argv[2]))
    else:
        sys.exit("jitter.py: cross, send or receive, not " + mode)
