"""Measure the testbed emulator's fidelity on this machine (root): for each bottleneck rate, one
bulk Linux flow (cubic) through a 10 ms link with a deep DropTail queue for a few seconds, then

- lateness: how long after the time the emulated network said a packet was due the emulator
  wrote it to the host (p50 / p99 / max), i.e. the delay it adds to the configured one;
- rate error: bytes that reached the receiver's kernel in the measured interval (its pcap)
  against what the emulated bottleneck serialised in that interval (its busy time × rate);
- CPU per packet of the emulator thread.

    sudo PYTHONPATH=python python scripts/testbed_fidelity.py [RATE_Mbps ...]

Prints a Markdown table for docs/testbed.md.
"""

from __future__ import annotations

import sys
import tempfile
from pathlib import Path

from rttlab.testbed import netns, run

SCENARIO = """
[simulation]
name = "fidelity-{rate}"
duration = "5s"
warmup = "1s"
[topology]
kind = "dumbbell"
bottleneck = {{ bandwidth = "{rate}Mbps", delay = "10ms", queue = {{ kind = "droptail", limit = "{limit}p" }} }}
access = {{ bandwidth = "{access}Mbps", delay = "0ms", queue = {{ kind = "droptail", limit = "2000p" }} }}
[tcp]
sack = true
timestamps = true
[[flows]]
count = 1
start = "0s"
"""


def delivered_bytes(pcap: str, t0: float, t1: float, epoch0: float, dst: bytes) -> int:
    """IP bytes written to the receiver's TUN in [t0, t1) (emulator time, s), from its pcap
    (nanosecond pcap of raw IP, as src/testbed/realtime.rs writes it), to address ``dst`` only:
    the pcap also holds the ACKs the receiver sent."""
    import struct

    data = Path(pcap).read_bytes()
    off, total = 24, 0
    while off + 16 <= len(data):
        sec, nsec, incl, _ = struct.unpack_from("<IIII", data, off)
        t = sec + nsec / 1e9 - epoch0
        if t0 <= t < t1 and data[off + 16 + 16 : off + 16 + 20] == dst:
            total += incl
        off += 16 + incl
    return total


def main(rates: list[int]) -> None:
    print(
        "| rate | utilisation | rate error | lateness p50 | p99 | max | CPU/packet | SCHED_FIFO |"
    )
    print("|---:|---:|---:|---:|---:|---:|---:|:--|")
    for rate in rates:
        with tempfile.TemporaryDirectory() as d:
            p = Path(d) / "s.toml"
            # A queue of ~2 BDP so the link stays busy; access links 4× faster.
            bdp = max(20, int(rate * 1e6 * 0.020 / 8 / 1500))
            p.write_text(SCENARIO.format(rate=rate, limit=2 * bdp, access=4 * rate))
            tr = run(p, cc="cubic", out_dir=Path(d) / "out", max_rate_bps=10**12)
            b = next(c for c in tr.result.channels.itertuples() if c.name == "bottleneck>")
            f = tr.emulator["fidelity"]
            epoch0 = tr.emulator["epoch_origin_ns"] / 1e9
            receiver = bytes(
                int(x) for x in netns.node_addr(tr.result.flows.iloc[0].dst).split(".")
            )
            got = delivered_bytes(tr.pcaps["flow0-receiver"], 1.0, 5.0, epoch0, receiver)
            # What the emulated bottleneck serialised in the interval, + what the receiver's
            # access link added on the way (same packets): compare IP bytes at the receiver.
            expected = b.utilisation * 4.0 * rate * 1e6 / 8
            err = (got - expected) / expected
            pkts = tr.emulator["received"] + tr.emulator["delivered"]
            print(
                f"| {rate} Mb/s | {b.utilisation:.3f} | {err:+.2%} | {f['lateness_p50_ns'] / 1e3:.0f} µs | {f['lateness_p99_ns'] / 1e3:.0f} µs | "
                f"{f['lateness_max_ns'] / 1e3:.0f} µs | {f['cpu_ns'] / max(pkts, 1) / 1e3:.1f} µs | {'yes' if f['sched_fifo'] else 'no'} |",
                flush=True,
            )


if __name__ == "__main__":
    main([int(a) for a in sys.argv[1:]] or [10, 50, 100, 200, 400])
