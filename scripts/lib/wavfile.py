"""32-bit float WAV files, as pw-cat plays and pw-record writes them, for the Python test
harnesses (scripts/lib/stress_churn.py, Tests/Browser/harness.py). Plain standard library."""
import array
import struct

RATE = 48000


def write_wav(path, channels, rate=RATE):
    """Writes `channels` (lists of samples, all the same length) interleaved."""
    frames, count = len(channels[0]), len(channels)
    data = array.array("f", [0.0]) * (frames * count)
    for c, channel in enumerate(channels):
        data[c::count] = array.array("f", channel)
    payload = data.tobytes()
    header = b"RIFF" + struct.pack("<I", 36 + len(payload)) + b"WAVE"
    header += b"fmt " + struct.pack("<IHHIIHH", 16, 3, count, rate, rate * count * 4, count * 4, 32)
    header += b"data" + struct.pack("<I", len(payload))
    with open(path, "wb") as f:
        f.write(header + payload)


def read_wav(path):
    """The channels of a 32-bit float WAV file (a data chunk cut short, as a killed recorder
    leaves it, is read up to its last whole sample); ValueError for anything else."""
    with open(path, "rb") as f:
        data = f.read()
    if data[:4] != b"RIFF":
        raise ValueError(f"{path} is not a WAV file")
    offset, channels, bits = 12, 0, 0
    while offset + 8 <= len(data):
        chunk, size = data[offset:offset + 4], struct.unpack("<I", data[offset + 4:offset + 8])[0]
        if chunk == b"fmt ":
            channels = struct.unpack("<H", data[offset + 10:offset + 12])[0]
            bits = struct.unpack("<H", data[offset + 22:offset + 24])[0]
        elif chunk == b"data":
            if bits != 32 or channels < 1:
                raise ValueError(f"{path}: {bits}-bit, {channels} channels")
            end = min(len(data), offset + 8 + size)
            samples = array.array("f")
            samples.frombytes(data[offset + 8:end - (end - offset - 8) % 4])
            return [samples[c::channels] for c in range(channels)]
        offset += 8 + size + (size & 1)
    raise ValueError(f"{path} has no data chunk")
