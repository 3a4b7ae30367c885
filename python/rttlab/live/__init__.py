"""``rttlab live``: the kernel's RTT samples and timeouts, per TCP connection, streamed from a BPF
``sock_ops`` program on a cgroup to every rttlab estimator as they arrive (docs/live.md).

- :mod:`rttlab.live.bpf` builds, loads and attaches the program (``bpf/rtt_events.bpf.c``);
- :mod:`rttlab.live.events` reads its events;
- :mod:`rttlab.live.session` scores them (sans-IO: events in, tables out);
- :mod:`rttlab.live.cgroup` finds cgroup v2 and makes a cgroup for a testbed run;
- :mod:`rttlab.live.watch` ties them together (monitoring a cgroup, or a testbed scenario).
"""

from rttlab.live.bpf import AlreadyAttached, Unavailable
from rttlab.live.session import Session
from rttlab.live.watch import Watch

__all__ = ["AlreadyAttached", "Session", "Unavailable", "Watch"]
