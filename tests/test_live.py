"""`rttlab live`: the kernel's RTT events streamed to every estimator (docs/live.md).

The first tests need nothing (the scoring is sans-IO: synthetic kernel events in). The others
are root-only: a BPF sock_ops program on a cgroup v2 watching real Linux TCP (loopback in a
cgroup of the test's own, and a testbed run); they skip with the exact reason where the
machine lacks root, cgroup v2, BPF, clang/libbpf or the testbed."""

from __future__ import annotations

import json
import os
import re
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest
from live_events import bpf_reason, event
from rttlab import _core
from rttlab.live import events as ev
from rttlab.live.session import Session
from rttlab.testbed import unavailable as testbed_unavailable

ROOT = Path(__file__).resolve().parent.parent
MS = 1_000_000


def steady(s: Session, until_ms: int, rtt_ms: int = 100, ts: bool = True) -> int:
    """RTT samples every 10 ms of `rtt_ms`, snd_una advancing; the last snd_una."""
    una = 1000
    for t in range(10, until_ms, 10):
        una += 1448
        s.feed(event(ev.ACK_SAMPLE, t, args=(rtt_ms * 1000, rtt_ms * 8000, 0), una=una, ts=ts))
    return una


def test_an_event_reads_back_as_the_kernel_wrote_it():
    e = event(ev.RTO, 1234.5, args=(1, 75, 0), una=0xFFFFFFF0)
    assert ev.parse(ev.pack(e)) == e
    assert len(ev.pack(e)) == ev.SIZE == 144


def test_a_live_estimator_fed_sample_by_sample_scores_what_the_replay_scores():
    import numpy as np

    rtts = np.array([100, 110, 95, 2500, 100, 105, 98, 40, 60], dtype=np.uint64) * MS
    times = np.cumsum(rtts).astype(np.uint64)
    [replayed] = _core.replay(times, rtts, [("rfc6298", [])], 4 * MS)
    live = _core.LiveEstimator("rfc6298", [], 4 * MS)
    for t, r in zip(times, rtts):
        live.sample(1, int(t), int(r))
    assert live.metrics() == replayed
    assert live.metrics(1) == replayed


def test_a_kernel_rto_whose_original_segment_was_acked_is_spurious_and_scored_per_estimator():
    # 250 Hz: RTO_k = 75 jiffies = 300 ms. The RTO fires at 1000 ms for snd_una U; the ACK at
    # 1100 ms echoes a transmission 450 ms old (sent at 650 ms < 1000 − 150): the original
    # got through — spurious. `constant` 100 ms fires at armed (700) + 100 ≤ 1100: spurious
    # too; rfc6298's 1 s floor neither fires with the kernel nor is spurious.
    s = Session([("constant", [("rto", "100ms")]), "rfc6298"], hz=250)
    una = steady(s, 700)
    rec = s.feed(event(ev.RTO, 1000, args=(0, 75, 0), una=una))
    assert rec[0]["first"] and rec[0]["fired_too"] == {"constant": True, "rfc6298": False}
    s.feed(event(ev.RTO, 1600, args=(1, 150, 0), una=una))  # the kernel's back-off: same episode
    [_, verdict] = s.feed(event(ev.ACK_SAMPLE, 1100, args=(450_000, 100 * 8000, 0), una=una + 1448))
    assert verdict["verdict"] == "spurious"
    assert verdict["spurious_too"] == {"constant": True, "rfc6298": False}
    rows = {r["estimator"]: r for r in s.rows()}
    assert rows["kernel"]["bad_timeouts"] == 1 and rows["kernel"]["fired_too"] == 1
    assert (rows["constant"]["fired_too"], rows["constant"]["spurious_too"]) == (1, 1)
    assert (rows["rfc6298"]["fired_too"], rows["rfc6298"]["spurious_too"]) == (0, 0)
    assert s.summary()["kernel"] == {
        "kernel_rtos": 1,
        "kernel_spurious": 1,
        "kernel_needed": 0,
        "kernel_unknown": 0,
    }


def test_a_kernel_rto_that_repaired_a_loss_gives_each_estimators_wait_as_a_real_loss():
    # The ACK after the RTO echoes the retransmission (sent 1000 ms, RTT 100 ms): needed.
    s = Session([("constant", [("rto", "100ms")]), "rfc6298"], hz=250)
    una = steady(s, 700)
    s.feed(event(ev.RTO, 1000, args=(0, 75, 0), una=una))
    [_, verdict] = s.feed(event(ev.ACK_SAMPLE, 1100, args=(100_000, 100 * 8000, 0), una=una + 1448))
    assert verdict["verdict"] == "needed"
    rows = {r["estimator"]: r for r in s.rows()}
    assert rows["constant"]["wait_on_kernel_losses_s"] == pytest.approx(0.1)
    assert rows["constant"]["lost_segments"] == 1
    assert rows["rfc6298"]["wait_on_kernel_losses_s"] == pytest.approx(1.0)
    assert rows["kernel"]["wait_on_kernel_losses_s"] == pytest.approx(0.3)


def test_each_estimators_wait_is_its_rto_at_the_kernels_arming_not_at_the_rto_events_arrival():
    # The kernel's timer fired at 1000 ms with RTO_k 300 ms: it was armed at 700 ms. Two SACK
    # samples of 600 ms came in between (snd_una stays): they raise rfc6298's RTO from its
    # 200 ms floor to ~660 ms, but a timer armed at 700 ms ran the 200 ms in force then.
    s = Session([("rfc6298", [("min_rto", "200ms")])], hz=250)
    una = steady(s, 700)
    at_arming = s.est["rfc6298"].wait_if_lost(7, 700 * MS)
    assert at_arming == 200 * MS
    for t in (800, 900):
        s.feed(event(ev.ACK_SAMPLE, t, args=(600_000, 100 * 8000, 0), una=una))
    assert s.est["rfc6298"].wait_if_lost(7, 1000 * MS) > 600 * MS
    [rto] = s.feed(event(ev.RTO, 1000, args=(0, 75, 0), una=una))
    assert rto["wait_s"] == {"rfc6298": pytest.approx(0.2)}
    assert rto["fired_too"] == {"rfc6298": True}
    # An RTO armed before the connection's first sample has no wait for any estimator.
    s2 = Session(["rfc6298"], hz=250)
    s2.feed(event(ev.ACK_SAMPLE, 500, args=(100_000, 800_000, 0)))
    [rto] = s2.feed(event(ev.RTO, 700, args=(0, 75, 0), una=1000))
    assert rto["wait_s"] == {"rfc6298": None}


def test_without_timestamps_a_kernel_rto_cannot_be_judged():
    s = Session(["rfc6298"], hz=250)
    una = steady(s, 300, ts=False)
    s.feed(event(ev.RTO, 600, args=(0, 75, 0), una=una, ts=False))
    [_, verdict] = s.feed(
        event(ev.ACK_SAMPLE, 700, args=(100_000, 800_000, 0), una=una + 1, ts=False)
    )
    assert verdict["verdict"] == "unknown"


# ---- root-only: the real kernel ----


REASON = bpf_reason()
needs_bpf = pytest.mark.skipif(REASON is not None, reason=f"rttlab live unavailable here: {REASON}")

#: A bulk transfer over loopback: the client prints the kernel's srtt (`ss -tin`, run while the
#: connection is open) before closing.
CLIENT = r"""
import socket, subprocess, threading, time
srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(1)
port = srv.getsockname()[1]
def serve():
    c, _ = srv.accept()
    while c.recv(65536): time.sleep(0.001)
threading.Thread(target=serve, daemon=True).start()
cl = socket.create_connection(("127.0.0.1", port))
for _ in range(300):
    cl.sendall(b"x" * 4000); time.sleep(0.002)
cl.sendall(b"y" * 4_000_000)  # bulk: many ACKs per round trip
time.sleep(0.05)
print("at", time.monotonic_ns(), flush=True)
print(subprocess.run(["ss", "-tin", f"sport = :{cl.getsockname()[1]}"], capture_output=True, text=True).stdout, flush=True)
cl.close(); time.sleep(0.1)
"""


def _run_in(cg: Path, script: Path) -> subprocess.Popen[str]:
    """Run a Python script as a process that joined the cgroup before it opened any socket."""
    return subprocess.Popen(
        ["sh", "-c", f"echo $$ > {cg}/cgroup.procs; exec {sys.executable} {script}"],
        stdout=subprocess.PIPE,
        text=True,
    )


@needs_bpf
def test_a_real_connection_streams_rtt_samples_whose_srtt_matches_ss_and_feeds_every_estimator(
    tmp_path,
):
    from rttlab.live import Watch, bpf, cgroup

    script = tmp_path / "client.py"
    script.write_text(CLIENT)
    session = Session(["rfc6298", "linux", "fixed-share"], hz=bpf.kernel_hz())
    seen: list[dict] = []
    with cgroup.RunCgroup() as cg, Watch(cg.path, session, seen.extend) as w:
        p = _run_in(cg.path, script)
        while p.poll() is None:
            w.pump(50)
        w.pump(50)
        out = p.stdout.read()  # type: ignore[union-attr]
    rtt_ss = re.search(r"rtt:([\d.]+)/([\d.]+)", out)
    assert rtt_ss, out
    senders = [c for c in session.conns.values() if c.samples >= 100]
    assert len(senders) == 1, [(c.local, c.samples) for c in session.conns.values()]
    c = senders[0]
    # ss prints srtt_us >> 3 in ms (tcp_get_info's tcpi_rtt); ours is the SRTT after the last
    # sample before ss ran (the same clock: CLOCK_MONOTONIC).
    at = int(re.search(r"^at (\d+)", out, re.M).group(1))  # type: ignore[union-attr]
    ours_ms = [
        r["srtt_s"] for r in seen if r["event"] == "rtt" and r["conn"] == c.key and r["t_ns"] <= at
    ][-1] * 1e3
    assert abs(ours_ms - float(rtt_ss.group(1))) <= max(0.05, 0.5 * float(rtt_ss.group(1))), (
        ours_ms,
        out,
    )
    assert c.timestamps is True
    for name in ("rfc6298", "linux", "fixed-share"):
        m = session.est[name].metrics(c.key)
        assert m["samples"] == c.samples - 1 and m["mae_s"] is not None
    assert session.overruns == 0
    # Every ACK's sample: each sample the once-per-RTT callback reported is among them, at
    # the same instant and with the same value. (On loopback every ACK opens a round trip, so
    # both count alike here; the testbed test sees more per-ACK samples.)
    assert session.per_ack
    per_ack = {round(r["rtt_s"] * 1e6) for r in seen if r["event"] == "rtt" and r["conn"] == c.key}
    per_rtt = [r for r in seen if r["event"] == "rtt_cb" and r["conn"] == c.key]
    assert len(per_rtt) > 100
    assert all(round(r["rtt_s"] * 1e6) in per_ack for r in per_rtt)
    # The program went with the watch: nothing rttlab's is attached any more.
    assert not [
        p
        for p in bpf.attached_programs(bpf._libbpf(), os.open(cgroup.mount_point(), os.O_RDONLY))
        if p[1] == bpf.PROG_NAME
    ]


#: Test-only: a cgroup_skb/ingress program that drops every packet arriving at the cgroup's
#: sockets while its one map value is 1 — a blackout the sender's TCP cannot see (its segments
#: left; their ACKs never come), without iptables or netem.
BLACKOUT_C = r"""
#include <linux/bpf.h>
#include <bpf/bpf_helpers.h>
char _license[] SEC("license") = "GPL";
struct { __uint(type, BPF_MAP_TYPE_ARRAY); __uint(max_entries, 1); __type(key, __u32); __type(value, __u32); } blackout SEC(".maps");
SEC("cgroup_skb/ingress")
int rttlab_blackout(struct __sk_buff *skb) { __u32 k = 0; __u32 *v = bpf_map_lookup_elem(&blackout, &k); return v && *v ? 0 : 1; }
"""


class Blackout:
    def __init__(self, cg: Path, tmp: Path) -> None:
        import ctypes

        from rttlab.live import bpf

        src, obj = tmp / "blackout.bpf.c", tmp / "blackout.o"
        src.write_text(BLACKOUT_C)
        subprocess.run(
            [
                "clang",
                "-O2",
                "-g",
                "-target",
                "bpf",
                *(f"-I{d}" for d in bpf._include_dirs()),
                "-c",
                str(src),
                "-o",
                str(obj),
            ],
            check=True,
        )
        lib = self.lib = bpf._libbpf()
        lib.bpf_map_update_elem.argtypes = [
            ctypes.c_int,
            ctypes.c_void_p,
            ctypes.c_void_p,
            ctypes.c_uint64,
        ]
        self.obj = lib.bpf_object__open_file(str(obj).encode(), None)
        assert self.obj and lib.bpf_object__load(self.obj) == 0
        self.fd = os.open(cg, os.O_RDONLY)
        self.link = lib.bpf_program__attach_cgroup(
            lib.bpf_object__find_program_by_name(self.obj, b"rttlab_blackout"), self.fd
        )
        assert self.link
        self.map = lib.bpf_object__find_map_fd_by_name(self.obj, b"blackout")

    def set(self, on: bool) -> None:
        import ctypes

        k, v = ctypes.c_uint32(0), ctypes.c_uint32(int(on))
        assert self.lib.bpf_map_update_elem(self.map, ctypes.byref(k), ctypes.byref(v), 0) == 0

    def close(self) -> None:
        self.lib.bpf_link__destroy(self.link)
        self.lib.bpf_object__close(self.obj)
        os.close(self.fd)


@needs_bpf
def test_a_blackout_on_a_real_connection_makes_the_kernel_time_out_and_the_rto_is_judged_needed(
    tmp_path,
):
    # Loopback (RTO = 200 ms rto_min + SRTT ≈ 204 ms): a 500 ms blackout starting mid-transfer
    # eats the data, the tail-loss probe and the first RTO's retransmission; the second RTO's
    # (≈ 612 ms in) gets through and its ACK echoes it: the timeout was needed.
    from rttlab.live import Watch, bpf, cgroup

    script = tmp_path / "client.py"
    script.write_text(CLIENT)
    session = Session(["rfc6298", "linux", ("constant", [("rto", "5s")])], hz=bpf.kernel_hz())
    with cgroup.RunCgroup() as cg, Watch(cg.path, session) as w:
        b = Blackout(cg.path, tmp_path)
        try:
            p = _run_in(cg.path, script)
            deadline = time.monotonic() + 20
            while not any(c.samples >= 20 for c in session.conns.values()):
                assert time.monotonic() < deadline and p.poll() is None, (
                    "the transfer never started"
                )
                w.pump(10)
            b.set(True)
            t0 = time.monotonic()
            while time.monotonic() - t0 < 0.5:
                w.pump(20)
            b.set(False)
            while p.poll() is None:
                w.pump(50)
            w.pump(50)
        finally:
            b.close()
    rows = {r["estimator"]: r for r in session.rows()}
    k = session.summary()["kernel"]
    assert k["kernel_rtos"] >= 1 and k["kernel_needed"] >= 1, k
    rtos = [ep for c in session.conns.values() for ep in c.episodes]
    assert all(190 * MS <= ep.rto_k_ns <= 1000 * MS for ep in rtos), [ep.rto_k_ns for ep in rtos]
    # rfc6298's 1 s floor is above the kernel's 204 ms; a 5 s constant never fires with it.
    assert rows["rfc6298"]["fired_too"] == 0 and rows["constant"]["fired_too"] == 0
    assert rows["constant"]["wait_on_kernel_losses_s"] == pytest.approx(5.0)
    assert rows["rfc6298"]["lost_segments"] == k["kernel_needed"]
    assert any(c.retrans >= 1 for c in session.conns.values())


LIVE = [sys.executable, "-m", "rttlab.cli.main", "live"]


def _env() -> dict[str, str]:
    return {**os.environ, "PYTHONPATH": str(ROOT / "python")}


def _probe_programs() -> set[int]:
    """Ids of the loaded per-ACK tracepoint programs (global, not per cgroup)."""
    import ctypes

    from rttlab.live import bpf

    lib = bpf._libbpf()
    lib.bpf_prog_get_next_id.argtypes = [ctypes.c_uint32, ctypes.POINTER(ctypes.c_uint32)]
    ids, cur, nxt = set(), 0, ctypes.c_uint32(0)
    while lib.bpf_prog_get_next_id(cur, ctypes.byref(nxt)) == 0:
        cur = nxt.value
        fd = lib.bpf_prog_get_fd_by_id(cur)
        if fd < 0:
            continue
        try:
            info = (ctypes.c_uint8 * 80)()
            size = ctypes.c_uint32(80)
            if (
                lib.bpf_obj_get_info_by_fd(fd, info, ctypes.byref(size)) == 0
                and bytes(info[64:80]).split(b"\0")[0] == bpf.PROBE_NAME.encode()
            ):
                ids.add(cur)
        finally:
            os.close(fd)
    return ids


@needs_bpf
def test_a_second_live_on_the_same_cgroup_is_refused_and_a_killed_one_leaves_no_attachment(
    tmp_path,
):
    from rttlab.live import bpf, cgroup

    before = _probe_programs()

    cg = cgroup.mount_point() / f"rttlab-test-{os.getpid()}"
    cg.mkdir()
    first = None
    try:
        first = subprocess.Popen(
            [*LIVE, "--cgroup", str(cg), "--json", "-e", "rfc6298"],
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        fd = os.open(cg, os.O_RDONLY)
        try:
            deadline = time.monotonic() + 30
            while not [
                p for p in bpf.attached_programs(bpf._libbpf(), fd) if p[1] == bpf.PROG_NAME
            ]:
                assert first.poll() is None, first.communicate()
                assert time.monotonic() < deadline, "the first rttlab live never attached"
                time.sleep(0.1)
            theirs = _probe_programs() - before
            assert theirs, "the per-ACK tracepoint program is not loaded"
            second = subprocess.run(
                [*LIVE, "--cgroup", str(cg), "--duration", "1s"],
                env=_env(),
                capture_output=True,
                text=True,
                timeout=60,
            )
            assert second.returncode == 2
            assert (
                "another rttlab live is already attached" in second.stderr
                and "Traceback" not in second.stderr
            )
            first.send_signal(signal.SIGKILL)
            first.wait(10)
            # The link's only reference was the dead process's fd: the kernel detached it.
            deadline = time.monotonic() + 5
            while [
                p for p in bpf.attached_programs(bpf._libbpf(), fd) if p[1] == bpf.PROG_NAME
            ] or theirs & _probe_programs():
                assert time.monotonic() < deadline, (
                    "a SIGKILLed rttlab live left a program attached or loaded"
                )
                time.sleep(0.1)
        finally:
            os.close(fd)
        # The cgroup is free again; Ctrl-C ends a run with its summary, exit 0.
        third = subprocess.Popen(
            [*LIVE, "--cgroup", str(cg), "--json", "-e", "rfc6298"],
            env=_env(),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        fd = os.open(cg, os.O_RDONLY)
        try:
            deadline = time.monotonic() + 30
            while not [
                p for p in bpf.attached_programs(bpf._libbpf(), fd) if p[1] == bpf.PROG_NAME
            ]:
                assert third.poll() is None and time.monotonic() < deadline, third.communicate()
                time.sleep(0.1)
        finally:
            os.close(fd)
        third.send_signal(signal.SIGINT)
        out, err = third.communicate(timeout=30)
        assert third.returncode == 0, err
        assert json.loads(out.splitlines()[-1])["event"] == "summary"
    finally:
        if first and first.poll() is None:
            first.kill()
        cg.rmdir()


@needs_bpf
def test_two_lives_started_at_once_on_one_cgroup_let_exactly_one_attach(tmp_path):
    import fcntl

    from rttlab.live import bpf, cgroup

    cg = cgroup.mount_point() / f"rttlab-test-race-{os.getpid()}"
    cg.mkdir()
    try:
        # The lock alone refuses, naming who holds it (before any program is looked up).
        fd = os.open(cg, os.O_RDONLY | os.O_DIRECTORY)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            with pytest.raises(
                bpf.AlreadyAttached, match=rf"already attached or attaching \(pid {os.getpid()}\)"
            ):
                bpf.LiveProgram(cg, lambda _b: None)
        finally:
            os.close(fd)
        # Two processes in the same instant: both pass the attached-program query before either
        # attaches; the cgroup's lock lets one on and the other says so (exit 2), every time.
        for _ in range(2):
            procs = [
                subprocess.Popen(
                    [*LIVE, "--cgroup", str(cg), "--duration", "4s", "--json", "-e", "rfc6298"],
                    env=_env(),
                    stdout=subprocess.PIPE,
                    stderr=subprocess.PIPE,
                    text=True,
                )
                for _ in range(2)
            ]
            results = [(p.wait(90), p.stderr.read() if p.stderr else "") for p in procs]
            for p in procs:
                p.stdout and p.stdout.close()
                p.stderr and p.stderr.close()
            assert sorted(code for code, _ in results) == [0, 2], results
            refused = next(err for code, err in results if code == 2)
            assert (
                "another rttlab live is already attached" in refused and "Traceback" not in refused
            )
    finally:
        cg.rmdir()


def test_without_root_live_says_so_in_one_line_and_exits_2():
    # As an unprivileged user would run it (this interpreter's packages may not be readable by
    # another user, so the effective uid is what is faked).
    code = "import os, sys; os.geteuid = lambda: 1000; from rttlab.cli.main import main; main()"
    r = subprocess.run(
        [sys.executable, "-c", code, "live", "--duration", "1s"],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2, r.stderr
    assert "needs root" in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr


def test_a_cgroup_that_is_not_cgroup_v2_is_named(tmp_path):
    if REASON is not None:
        pytest.skip(f"rttlab live unavailable here: {REASON}")
    r = subprocess.run(
        [*LIVE, "--cgroup", str(tmp_path), "--duration", "1s"],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert r.returncode == 2 and "not a cgroup v2 directory" in r.stderr


TESTBED = testbed_unavailable()


def _live_on_testbed(example: str) -> tuple[list[dict], dict]:
    """`rttlab live --testbed examples/live/EXAMPLE --json` with a 50 ms constant RTO beside
    rfc6298 and linux: its JSON lines and its final summary (checked to have lost no event)."""
    p = ROOT / "examples" / "live" / example
    r = subprocess.run(
        [
            *LIVE,
            "--testbed",
            str(p),
            "--json",
            "-e",
            "rfc6298,linux,constant",
            "-p",
            "constant.rto=50ms",
        ],
        env=_env(),
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert r.returncode == 0, r.stderr
    lines = [json.loads(line) for line in r.stdout.splitlines()]
    summary = lines[-1]
    assert summary["event"] == "summary" and summary["overruns"] == 0
    return lines, summary


@needs_bpf
@pytest.mark.skipif(TESTBED is not None, reason=f"testbed unavailable here: {TESTBED}")
def test_a_testbed_run_with_a_delay_spike_shows_the_kernels_spurious_rto_scored_against_every_estimator():
    # examples/live/spike.toml: one Reno flow on a 10 Mb/s, 20 ms link that stalls for 1.2 s
    # at 2 s without losing anything: the kernel times out, and spuriously.
    lines, summary = _live_on_testbed("spike.toml")
    # Reports that held two samples are rare, counted and never fed as one.
    assert summary["merged"] <= 0.02 * len([x for x in lines if x["event"] == "rtt"])
    assert all(x["rtt_s"] < 5 for x in lines if x["event"] == "rtt")
    rtos = [x for x in lines if x["event"] == "rto" and x["first"]]
    assert rtos, "no kernel RTO seen"
    assert summary["kernel"]["kernel_rtos"] == len(rtos)
    verdicts = [x["verdict"] for x in lines if x["event"] == "rto_verdict"]
    assert verdicts[0] == "spurious", verdicts
    rows = {row["estimator"]: row for row in summary["pooled"]}
    # A 50 ms RTO on a ≥ 40 ms path fires with every kernel RTO it can be scored on (one on a
    # connection with RTT samples: not, say, the receiver's FIN timing out at teardown) and is
    # spurious with it.
    scored = [x for x in rtos if x["wait_s"]["constant"] is not None]
    assert scored and rows["constant"]["fired_too"] == len(scored)
    assert rows["constant"]["spurious_too"] >= 1
    assert (
        rows["rfc6298"]["samples"] > 1000 and rows["linux"]["samples"] == rows["rfc6298"]["samples"]
    )
    # rttlab's `linux` estimator is the kernel's SRTT: the same forecast error as the kernel's
    # own SRTT before each sample.
    assert rows["linux"]["mae_s"] == pytest.approx(rows["kernel"]["mae_s"], rel=0.02)
    # Per ACK, not per round trip: many more samples than the once-per-RTT callback's.
    assert summary["samples_from"].startswith("every ACK")
    assert rows["rfc6298"]["samples"] > 5 * len([x for x in lines if x["event"] == "rtt_cb"])
    # Nothing of the run is left: no cgroup of ours, no program.
    from rttlab.live import cgroup

    assert not list(cgroup.mount_point().glob(f"{cgroup.PREFIX}*"))


@needs_bpf
@pytest.mark.skipif(TESTBED is not None, reason=f"testbed unavailable here: {TESTBED}")
def test_a_testbed_outage_makes_the_kernel_take_a_needed_rto_and_scores_each_estimators_wait_on_it():
    # examples/live/outage.toml: the 10 Mb/s, 20 ms link loses every data packet for 600 ms
    # from 2 s: window, tail-loss probe and the first timeout's resend. Only the kernel's
    # retransmission timer repairs it, and the ACK echoes the resend: the RTO was needed.
    lines, summary = _live_on_testbed("outage.toml")
    rtos = [x for x in lines if x["event"] == "rto" and x["first"]]
    data = [x for x in rtos if x["wait_s"]["rfc6298"] is not None]  # the data connection's
    assert data, f"no kernel RTO on the data connection: {rtos}"
    first = data[0]
    backoffs = [
        x for x in lines if x["event"] == "rto" and not x["first"] and x["conn"] == first["conn"]
    ]
    assert backoffs, "the first timeout's resend fell into the outage too: the kernel backed off"
    verdicts = [x for x in lines if x["event"] == "rto_verdict" and x["conn"] == first["conn"]]
    assert verdicts and verdicts[0]["verdict"] == "needed", verdicts
    assert summary["kernel"]["kernel_needed"] >= 1
    rows = {row["estimator"]: row for row in summary["pooled"]}
    # Each estimator's wait on the kernel's real loss is its RTO in force at the arming, as the
    # RTO event said; the 50 ms constant fired before the kernel did, rfc6298's 1 s floor after.
    assert summary["kernel"]["kernel_rtos"] == len(rtos) and len(data) == 1, rtos
    assert rows["constant"]["wait_on_kernel_losses_s"] == pytest.approx(0.05)
    assert first["fired_too"]["constant"] and rows["constant"]["lost_segments"] == 1
    assert (
        rows["rfc6298"]["wait_on_kernel_losses_s"]
        == pytest.approx(first["wait_s"]["rfc6298"])
        == pytest.approx(1.0)
    )
    assert not first["fired_too"]["rfc6298"] and rows["rfc6298"]["fired_too"] == 0
    # rttlab's `linux` estimator holds the kernel's RTO to within a jiffy (icsk_rto is in jiffies).
    assert abs(first["wait_s"]["linux"] - first["rto_s"]) <= 0.0105
    assert rows["kernel"]["wait_on_kernel_losses_s"] == pytest.approx(first["rto_s"])
    assert 0.2 <= first["rto_s"] < 1.0
