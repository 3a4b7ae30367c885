"""A Linux RTO setting applied to a testbed scenario's kernel flows, measured against the kernel
default on the same seeds, beside what a trace replay of the default run predicted
(``rttlab live --testbed S --rto-min D`` / ``--recommendation tune.json``; docs/live.md,
"Applying an RTO setting", and docs/tuning.md, "Applied to Linux").

The knob is Linux's ``rto_min`` — the floor of ``rttvar_us`` in ``tcp_rtt_estimator()``
(net/ipv4/tcp_input.c), so RTO ≥ SRTT + rto_min — set one of two ways, both as an operator would:

- **sysctl** ``net.ipv4.tcp_rto_min_us`` in the senders' namespaces. It is per network
  namespace (``struct netns_ipv4.sysctl_tcp_rto_min_us``, registered in ``ipv4_net_table`` of
  net/ipv4/sysctl_net_ipv4.c; every new namespace starts from ``tcp_sk_init``'s 200 000 µs, not
  from the host's value), added in Linux 6.11 ("tcp: add sysctl_tcp_rto_min_us", Kevin Yang,
  2024). ``proc_dointvec_minmax`` with ``.extra1 = SYSCTL_ONE`` and no upper bound: 1 … INT_MAX µs.
  It is read once per socket, at creation (``tcp_init_sock``: ``icsk_rto_min =
  usecs_to_jiffies(sysctl)``, rounded *up* to whole jiffies), so it is set before any traffic
  generator starts.
- **route** ``ip route change 10.1.0.0/16 … rto_min Nms`` on the testbed's route in the senders'
  namespaces. iproute2 (ip/iproute.c) always sets the metric's lock bit for ``rto_min``, and
  ``tcp_rto_min()`` (include/net/tcp.h) takes a *locked* ``RTAX_RTO_MIN`` over the socket's
  ``icsk_rto_min`` (``dst_metric_rtt``: milliseconds → jiffies, rounded up). The route's value is
  in whole milliseconds (iproute2's ``get_time_rtt`` knows ``s`` and ``ms`` only). ``ip route
  change`` replaces the route's metrics as a whole, so the route's other attributes (``src``,
  ``initcwnd``, ``initrwnd``) are given again, read from ``ip -j route show``.

Either way the value is read back from the namespace after it is set (``sysctl -n``, ``ip route
show``) and the run refuses to go on if the kernel shows anything else.

The prediction replays the default run's own per-connection RTT samples (the kernel's, from the
BPF program) through rttlab's ``linux`` estimator at the kernel's HZ with ``rto_min`` = the
setting in force (in whole jiffies, as the kernel holds it): bad timeouts, W, and W on the
kernel's needed timeouts of that run (given to the replay as really lost segments armed where the
kernel's timer was armed; docs/metrics.md steps 7–8). A replay cannot predict how many losses a
different timer leads to, so the "needed" count it shows is the default run's, marked as given.
Known gap: Linux sends a tail-loss probe after PTO ≈ 2·SRTT without an ACK and then restarts the
retransmission timer from the probe (tcp_send_loss_probe, net/ipv4/tcp_output.c: "Reset s.t.
tcp_rearm_rto will restart timer from now"), so it times out after PTO + RTO; the replay's timer
(Allman & Paxson) has no probe and fires after RTO, so it predicts more spurious timeouts on
stalls between RTO and PTO + RTO (docs/live.md, "Where the replay and the kernel part").
"""

from __future__ import annotations

import json
import math
import subprocess
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

SYSCTL = "net.ipv4.tcp_rto_min_us"
#: TCP_RTO_MIN = HZ/5 (include/net/tcp.h): what tcp_sk_init gives every new namespace.
DEFAULT_RTO_MIN_US = 200_000
#: proc_dointvec_minmax on an int, .extra1 = SYSCTL_ONE, no .extra2 (net/ipv4/sysctl_net_ipv4.c).
SYSCTL_MIN_US, SYSCTL_MAX_US = 1, 2**31 - 1
#: TCP_RTO_MAX: tcp_bound_rto() caps every RTO at the namespace's tcp_rto_max_ms (default 120 s,
#: a sysctl since Linux 6.15); an rto_min above it cannot change anything.
RTO_MAX_US = 120_000_000
#: The testbed's one route in every namespace (rttlab.testbed.netns.Namespaces.attach).
ROUTE = "10.1.0.0/16"
APPLY_AS = ("sysctl", "route")


class BadSetting(ValueError):
    """A setting or recommendation file the kernel cannot take: the message names the argument."""


class NotApplied(RuntimeError):
    """The namespace did not read back what was set."""


@dataclass(frozen=True)
class RtoMin:
    """Linux's ``rto_min`` in µs, applied as ``sysctl`` or ``route``; ``source`` names where it
    came from (``--rto-min`` or the recommendation file)."""

    us: int
    apply_as: str = "sysctl"
    source: str = "--rto-min"

    def __post_init__(self) -> None:
        if self.apply_as not in APPLY_AS:
            raise BadSetting(f"--apply-as: '{self.apply_as}' is not one of {', '.join(APPLY_AS)}")
        if not SYSCTL_MIN_US <= self.us <= SYSCTL_MAX_US:
            raise BadSetting(
                f"{self.source}: {self.us} µs is outside what {SYSCTL} accepts "
                f"({SYSCTL_MIN_US} … {SYSCTL_MAX_US} µs, net/ipv4/sysctl_net_ipv4.c)"
            )
        if self.us > RTO_MAX_US:
            raise BadSetting(
                f"{self.source}: {self.us / 1e6:g} s is above the kernel's rto_max "
                f"({RTO_MAX_US / 1e6:g} s, tcp_rto_max_ms): tcp_bound_rto caps every RTO there, "
                "so the setting could change nothing"
            )
        if self.apply_as == "route" and self.us % 1000:
            raise BadSetting(
                f"{self.source}: {self.us} µs is not a whole number of milliseconds, which a "
                "route's rto_min is (iproute2 get_time_rtt); use --apply-as sysctl for µs"
            )

    @property
    def text(self) -> str:
        return f"{self.us // 1000}ms" if self.us % 1000 == 0 else f"{self.us}us"

    def jiffies(self, hz: int) -> int:
        """What the kernel holds: usecs_to_jiffies / msecs_to_jiffies round up."""
        return -(-self.us * hz // 1_000_000)

    def command(self) -> str:
        """The line an operator types (in the sender's namespace)."""
        if self.apply_as == "sysctl":
            return f"sysctl -w {SYSCTL}={self.us}"
        return f"ip route change {ROUTE} … rto_min {self.us // 1000}ms"


def parse_rto_min(text: str, apply_as: str = "sysctl") -> RtoMin:
    """``--rto-min`` as a duration (``200ms``, ``20000us``, ``0.2s``)."""
    from rttlab import _core
    from rttlab.units import DURATION_HINT

    ns = _core.parse_duration(text)
    if ns is None:
        raise BadSetting(f"--rto-min: cannot read '{text}' as {DURATION_HINT}")
    if ns % 1000:
        raise BadSetting(
            f"--rto-min: '{text}' is finer than the sysctl's microseconds ({SYSCTL} is in µs)"
        )
    return RtoMin(ns // 1000, apply_as, f"--rto-min {text}")


#: The knobs a Linux recommendation may carry that this command applies.
APPLIED_KNOBS = ("rto_min_us",)


def from_recommendation(path: str | Path, apply_as: str = "sysctl") -> RtoMin:
    """``recommendation.knobs.rto_min_us`` of ``rttlab tune --stack linux --json``'s output."""
    p = Path(path)
    where = f"--recommendation {p}"
    try:
        doc = json.loads(p.read_text())
    except FileNotFoundError:
        raise BadSetting(f"{where}: no such file") from None
    except (OSError, UnicodeDecodeError) as e:
        raise BadSetting(f"{where}: cannot read it ({e})") from None
    except json.JSONDecodeError as e:
        raise BadSetting(
            f"{where}: not JSON (line {e.lineno}: {e.msg}); give the output of `rttlab tune --stack linux --json`"
        ) from None
    rec = doc.get("recommendation") if isinstance(doc, dict) else None
    if not isinstance(rec, dict):
        raise BadSetting(
            f"{where}: no 'recommendation' object (write one with `rttlab tune --stack linux --json`)"
        )
    stack = rec.get("stack")
    if stack != "linux":
        raise BadSetting(
            f'{where}: recommendation.stack is {json.dumps(stack)}, not "linux": only a Linux '
            "recommendation can be applied to the testbed's kernel (rttlab tune --stack linux)"
        )
    knobs = rec.get("knobs")
    if not isinstance(knobs, dict) or "rto_min_us" not in knobs:
        raise BadSetting(f"{where}: recommendation.knobs.rto_min_us is missing")
    other = sorted(set(knobs) - set(APPLIED_KNOBS))
    if other:
        raise BadSetting(
            f"{where}: recommendation.knobs.{other[0]} is not applied by rttlab live (only rto_min_us); "
            "measuring a part of the recommendation would not measure the recommendation"
        )
    us = knobs["rto_min_us"]
    if isinstance(us, bool) or not isinstance(us, int):
        raise BadSetting(
            f"{where}: recommendation.knobs.rto_min_us is {json.dumps(us)}, not a whole number of µs"
        )
    return RtoMin(us, apply_as, f"{where}: recommendation.knobs.rto_min_us")


# ---- in the namespaces ----


def _run(cmd: Sequence[str]) -> str:
    r = subprocess.run(list(cmd), capture_output=True, text=True)
    if r.returncode != 0:
        raise NotApplied(f"`{' '.join(cmd)}` failed: {r.stderr.strip()}")
    return r.stdout


def read_back(ns: str) -> dict[str, Any]:
    """What the namespace holds: the sysctl (µs) and the testbed route's rto_min (ms, from
    ``ip -j route show``; None without one), whether the route locks it (the text form says
    ``rto_min lock``, the JSON form does not), and the route as ``ip route show`` prints it."""
    us = int(_run(["ip", "netns", "exec", ns, "sysctl", "-n", SYSCTL]).strip())
    routes = json.loads(_run(["ip", "-j", "-n", ns, "route", "show", ROUTE]) or "[]")
    ms = next((m["rto_min"] for r in routes for m in r.get("metrics", []) if "rto_min" in m), None)
    route = _run(["ip", "-n", ns, "route", "show", ROUTE]).strip()
    return {
        "sysctl_us": us,
        "route_rto_min_ms": ms,
        "route_locked": ms is not None and "rto_min lock" in route,
        "route": route,
    }


def _route_change(ns: str, ms: int) -> list[str]:
    """``ip route change`` of the testbed route with rto_min added, its other attributes kept."""
    routes = json.loads(_run(["ip", "-j", "-n", ns, "route", "show", ROUTE]) or "[]")
    if len(routes) != 1:
        raise NotApplied(f"{ns}: expected one route {ROUTE}, found {len(routes)}")
    r = routes[0]
    cmd = ["ip", "-n", ns, "route", "change", ROUTE, "dev", r["dev"]]
    if r.get("prefsrc"):
        cmd += ["src", r["prefsrc"]]
    for metrics in r.get("metrics", []):
        for k, v in metrics.items():
            if k != "rto_min":
                cmd += [k, str(v)]
    return cmd + ["rto_min", f"{ms}ms"]


def kernel_senders(meta: dict[str, Any]) -> list[str]:
    """The namespaces of the scenario's kernel flows' senders (once each)."""
    stacks = meta.get("stacks") or ["kernel"] * len(meta["flows"])
    out: list[str] = []
    for f, flow in enumerate(meta["flows"]):
        if stacks[f] == "kernel" and flow["sender_ns"] not in out:
            out.append(flow["sender_ns"])
    return out


def apply(setting: RtoMin | None, meta: dict[str, Any]) -> dict[str, Any]:
    """Set ``setting`` (None: the kernel default, nothing set) in every kernel sender's namespace
    and read it back; raises :class:`NotApplied` unless the kernel holds what was set. Returns,
    per namespace, the command run and what was read back."""
    senders = kernel_senders(meta)
    if not senders:
        raise NotApplied("the scenario has no kernel flow: no Linux sender to apply rto_min to")
    out: dict[str, Any] = {}
    for ns in senders:
        cmd: list[str] = []
        if setting is not None and setting.apply_as == "sysctl":
            cmd = ["ip", "netns", "exec", ns, "sysctl", "-q", "-w", f"{SYSCTL}={setting.us}"]
        elif setting is not None:
            cmd = _route_change(ns, setting.us // 1000)
        if cmd:
            _run(cmd)
        got = read_back(ns)
        if setting is not None and setting.apply_as == "sysctl" and got["sysctl_us"] != setting.us:
            raise NotApplied(f"{ns}: {SYSCTL} reads back {got['sysctl_us']}, not {setting.us}")
        if setting is not None and setting.apply_as == "route":
            if got["route_rto_min_ms"] != setting.us // 1000 or not got["route_locked"]:
                raise NotApplied(
                    f"{ns}: the route reads back '{got['route']}', not a locked rto_min {setting.us // 1000}ms"
                )
        out[ns] = {"command": " ".join(cmd) if cmd else None, **got}
    return out


def in_force_us(applied: dict[str, Any]) -> int:
    """The rto_min the senders' sockets take: a locked route metric over the sysctl
    (tcp_rto_min, include/net/tcp.h). One value for every sender (they are set alike)."""
    values = {
        v["route_rto_min_ms"] * 1000
        if v["route_rto_min_ms"] is not None and v["route_locked"]
        else v["sysctl_us"]
        for v in applied.values()
    }
    if len(values) != 1:
        raise NotApplied(f"the senders hold different rto_min values: {sorted(values)} µs")
    return values.pop()


# ---- the prediction: a replay of the default run's samples ----


def predict(conns: Sequence[Any], hz: int, rto_min_us: Sequence[int]) -> dict[int, dict[str, Any]]:
    """Replay the kernel's own samples on ``conns`` (a session's connections; samples kept:
    ``Session(keep_samples=True)``),
    one stream per connection with its timestamps setting, through ``linux`` at ``hz`` with each
    ``rto_min`` (µs, rounded up to whole jiffies as the kernel holds it). The kernel's needed
    timeouts are given as really lost segments armed where the kernel's timer was. Returns per
    rto_min the replay's pooled row (docs/metrics.md keys)."""
    import numpy as np

    from rttlab.trace.estimators import spec
    from rttlab.trace.replay import score

    times: list[int] = []
    rtts: list[int] = []
    starts: list[int] = []
    stamps: list[bool] = []
    losses: list[tuple[int, int]] = []
    for c in conns:
        if len(c.kept) < 2:
            continue
        kept = sorted(c.kept)
        stream = len(starts)
        starts.append(len(times))
        stamps.append(bool(c.timestamps))
        times += [t for t, _ in kept]
        rtts += [r for _, r in kept]
        losses += [(stream, ep.armed_ns) for ep in c.episodes if ep.verdict == "needed"]
    out: dict[int, dict[str, Any]] = {}
    if not starts:
        return out
    jiffy_us = 1_000_000 / hz
    # usecs_to_jiffies rounds up: two settings within one jiffy are one setting to the kernel
    # (and one replay).
    held = {us: math.ceil(us / jiffy_us - 1e-9) * jiffy_us for us in rto_min_us}
    specs = {
        h: spec("linux", rto_min=f"{h:.3f}us", hz=str(hz)) for h in dict.fromkeys(held.values())
    }
    raw = score(
        np.asarray(times, dtype=np.uint64),
        np.asarray(rtts, dtype=np.uint64),
        list(specs.values()),
        starts=starts,
        timestamps=stamps,
        losses=losses,
    )
    rows = dict(zip(specs, raw.rows))
    for us, h in held.items():
        out[us] = {**rows[h], "given_needed": len(losses)}
    return out


# ---- default against the setting, seed by seed ----


@dataclass
class Run:
    seed: int
    setting: str  # "default" or "applied"
    rto_min_us: int  # in force, read back
    applied: dict[str, Any]
    kernel: dict[str, Any]  # Session.summary()["kernel"] + the kernel row's W
    predicted: dict[str, Any] | None = None
    warnings: list[str] = field(default_factory=list)


@dataclass
class Comparison:
    setting: RtoMin
    hz: int
    seeds: list[int]
    runs: list[Run] = field(default_factory=list)
    partial: bool = False

    def rows(self) -> list[dict[str, Any]]:
        """One row per run, then the pooled rows per setting over seeds (``seed`` None)."""
        rows = [self._row(r) for r in self.runs]
        for which in ("default", "applied"):
            mine = [r for r in self.runs if r.setting == which]
            if len(mine) > 1:
                rows.append(self._pool(mine))
        return rows

    def _row(self, r: Run) -> dict[str, Any]:
        k, p = r.kernel, r.predicted or {}
        return {
            "seed": r.seed,
            "setting": r.setting,
            "rto_min_us": r.rto_min_us,
            "rto_min_jiffies": -(-r.rto_min_us * self.hz // 1_000_000),
            "samples": k["samples"],
            "kernel_rtos": k["kernel_rtos"],
            "measured_spurious": k["kernel_spurious"],
            "measured_needed": k["kernel_needed"],
            "measured_unknown": k["kernel_unknown"],
            "measured_wait_mean_s": k["wait_mean_s"],
            "measured_wait_on_needed_s": k["wait_on_kernel_losses_s"],
            "predicted_samples": p.get("samples"),
            "predicted_bad_timeouts": p.get("bad_timeouts"),
            "predicted_wait_mean_s": p.get("wait_mean_s"),
            "predicted_wait_on_needed_s": p.get("lost_wait_mean_s"),
            "given_needed": p.get("given_needed"),
        }

    def _pool(self, runs: list[Run]) -> dict[str, Any]:
        rows = [self._row(r) for r in runs]

        def total(key: str) -> Any:
            vals = [x[key] for x in rows]
            return None if any(v is None for v in vals) else sum(vals)

        def mean(key: str, weight: str) -> Any:
            pairs = [(x[key], x[weight]) for x in rows if x[key] is not None and x[weight]]
            n = sum(w for _, w in pairs)
            return sum(v * w for v, w in pairs) / n if n else None

        out = {k: total(k) for k in rows[0] if k not in ("seed", "setting")}
        out.update(
            seed=None,
            setting=runs[0].setting,
            rto_min_us=rows[0]["rto_min_us"],
            rto_min_jiffies=rows[0]["rto_min_jiffies"],
            measured_wait_mean_s=mean("measured_wait_mean_s", "samples"),
            predicted_wait_mean_s=mean("predicted_wait_mean_s", "predicted_samples"),
            measured_wait_on_needed_s=mean("measured_wait_on_needed_s", "measured_needed"),
            predicted_wait_on_needed_s=mean("predicted_wait_on_needed_s", "given_needed"),
        )
        return out

    def to_json(self) -> dict[str, Any]:
        return {
            "event": "rto_comparison",
            "setting": {
                "rto_min_us": self.setting.us,
                "apply_as": self.setting.apply_as,
                "source": self.setting.source,
                "command": self.setting.command(),
            },
            "hz": self.hz,
            "seeds": self.seeds,
            "partial": self.partial,
            "rows": self.rows(),
            "runs": [
                {"seed": r.seed, "setting": r.setting, "applied": r.applied, "warnings": r.warnings}
                for r in self.runs
            ],
        }


def sender_conns(session: Any, meta: dict[str, Any]) -> list[Any]:
    """The session's connections whose local end is a kernel sender of the scenario (the ones
    the setting applies to; the receivers' sockets, which only acknowledge, are left out)."""
    stacks = meta.get("stacks") or ["kernel"] * len(meta["flows"])
    addrs = {f["src"] for f, st in zip(meta["flows"], stacks) if st == "kernel"}
    return [c for c in session.conns.values() if c.local.rsplit(":", 1)[0] in addrs]


def kernel_measured(session: Any, conns: Sequence[Any]) -> dict[str, Any]:
    """What the kernel did on ``conns``: its timeouts judged, W, its lowest RTO."""
    row = session.kernel_row(conns)
    return {
        **session._kernel_scores(conns),
        "connections": len(conns),
        "samples": row["samples"],
        "wait_mean_s": row["wait_mean_s"],
        "wait_on_kernel_losses_s": row["wait_on_kernel_losses_s"],
        "rto_lowest_s": row["rto_lowest_s"],
    }


def compare(
    scenario: str | Path,
    setting: RtoMin,
    seeds: Sequence[int],
    *,
    hz: int,
    estimators: Sequence[Any] = ("linux",),
    overrides: Sequence[str] = (),
    on_run: Callable[[str, Run | None], None] | None = None,
    result: Comparison | None = None,
) -> Comparison:
    """For each seed: the scenario with the kernel default, then with ``setting``, each run
    watched by the BPF program. The default run's samples are replayed for both settings (the
    prediction). ``result`` (optional) is filled as runs finish, so a caller interrupted keeps
    what was done. ``on_run(label, run)`` is told when a run starts (run None) and ends."""
    from rttlab.live.session import Session
    from rttlab.live.watch import run_testbed

    cmp = result or Comparison(setting, hz, list(seeds))
    for seed in seeds:
        predicted: dict[int, dict[str, Any]] = {}
        for which in ("default", "applied"):
            label = f"seed {seed}, {'kernel default' if which == 'default' else setting.command()}"
            if on_run:
                on_run(label, None)
            session = Session(list(estimators), hz=hz, keep_samples=which == "default")
            applied: dict[str, Any] = {}

            def prepare(meta: dict[str, Any], which: str = which, applied: dict = applied) -> None:
                applied.update(apply(setting if which == "applied" else None, meta))

            tb = run_testbed(
                scenario,
                session,
                list(overrides) + [f"simulation.seed={seed}"],
                prepare=prepare,
            )
            in_force = in_force_us(applied)
            conns = sender_conns(session, tb.metadata)
            if which == "default":
                predicted = predict(conns, hz, [in_force, setting.us])
            run = Run(
                seed,
                which,
                in_force,
                applied,
                kernel_measured(session, conns),
                predicted.get(in_force if which == "default" else setting.us),
                list(tb.metadata.get("warnings", [])),
            )
            cmp.runs.append(run)
            if on_run:
                on_run(label, run)
    return cmp
