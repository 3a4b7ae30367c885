"""Why the replay over-counts Linux's spurious timeouts (docs/live.md, "Where the replay and the
kernel part"): one seed of examples/live/rto-min.toml with the kernel's default rto_min, run with
tail-loss probes on (net.ipv4.tcp_early_retrans=3, Linux's default) and off (0) in the sender's
namespace, each watched by `rttlab live`'s BPF program: the kernel's RTOs beside the replay of
that run's samples. Root; real time (~30 s). Usage: python scripts/live_rto_tlp.py [SEED]"""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path
from typing import Any

from rttlab.live import apply, bpf
from rttlab.live.session import Session
from rttlab.live.watch import run_testbed

SCENARIO = Path(__file__).resolve().parent.parent / "examples" / "live" / "rto-min.toml"


def main() -> None:
    seed = int(sys.argv[1]) if len(sys.argv) > 1 else 1
    hz = bpf.kernel_hz()
    for tlp in ("3", "0"):
        session = Session(["linux"], hz=hz, keep_samples=True)

        def prepare(meta: dict[str, Any], tlp: str = tlp) -> None:
            for ns in apply.kernel_senders(meta):
                subprocess.run(
                    ["ip", "netns", "exec", ns, "sysctl", "-q", "-w"]
                    + [f"net.ipv4.tcp_early_retrans={tlp}"],
                    check=True,
                )

        tb = run_testbed(SCENARIO, session, [f"simulation.seed={seed}"], prepare=prepare)
        conns = apply.sender_conns(session, tb.metadata)
        k = apply.kernel_measured(session, conns)
        p = apply.predict(conns, hz, [apply.DEFAULT_RTO_MIN_US])[apply.DEFAULT_RTO_MIN_US]
        print(
            f"seed {seed}, tcp_early_retrans={tlp}: kernel RTOs {k['kernel_rtos']} "
            f"(spurious {k['kernel_spurious']}, needed {k['kernel_needed']}), "
            f"W {k['wait_mean_s'] * 1e3:.0f} ms; replay of this run: bad timeouts "
            f"{p['bad_timeouts']}, W {p['wait_mean_s'] * 1e3:.0f} ms; samples {p['samples']}, "
            f"merged reports {sum(c.merged for c in conns)}",
            flush=True,
        )


if __name__ == "__main__":
    main()
