"""A kernel event as the BPF program reports it, for the live tests: every field at a quiet
connection's value unless a test says otherwise."""

from __future__ import annotations

from pathlib import Path

from rttlab.live import events as ev

MS = 1_000_000


def event(
    op: int,
    t_ms: float,
    *,
    args=(0, 0, 0),
    una: int = 1000,
    ts: bool = True,
    rto_j: int = 75,
    cookie: int = 7,
    srtt8: int = 0,
    local: str = "10.0.0.1:40000",
    remote: str = "10.0.0.2:5201",
) -> ev.Event:
    return ev.Event(
        ts_ns=int(t_ms * MS),
        cookie=cookie,
        op=op,
        local=local,
        remote=remote,
        args=args,
        srtt_us8=srtt8,
        mdev_us4=0,
        rttvar_us4=0,
        rto_jiffies=rto_j,
        rtt_min_us=0,
        snd_una=una,
        snd_nxt=una,
        snd_cwnd=10,
        packets_out=0,
        retrans_out=0,
        total_retrans=0,
        state=1,
        backoff=0,
        retransmits=0,
        timestamps=ts,
    )


def bpf_reason() -> str | None:
    """Why rttlab live cannot run here (root, cgroup v2, clang/libbpf, kernel BTF), or None."""
    from rttlab.live import Unavailable, bpf, cgroup

    try:
        bpf.check_root()
        cgroup.mount_point()
        bpf.build()
        bpf._libbpf()
    except Unavailable as e:
        return str(e)
    if not Path("/sys/kernel/btf/vmlinux").exists():
        return "no kernel BTF (/sys/kernel/btf/vmlinux)"
    return None
