"""Sans-IO heart of ``rttlab live``: kernel events in, per-connection scores out.

Every RTT sample the kernel takes (the RTT callback's ``mrtt_us``) is fed, as it arrives, to
every estimator through :class:`rttlab._core.LiveEstimator` — the trace evaluation's replay
(docs/metrics.md) one sample at a time, one stream per connection. Beside them the kernel's own
SRTT and RTO are scored the same way (the ``kernel`` row: what Linux itself predicted).

Each RTO the kernel really took is scored against every estimator (docs/live.md, "Scoring
against the kernel's timeouts"):

- its timer started at ``armed = T − RTO_k`` (T: when the callback fired, RTO_k: the
  ``icsk_rto`` that expired; Linux arms the timer from the head segment's last transmission,
  tcp_rearm_rto/tcp_rto_delta_us, so this is that instant up to timer slack);
- estimator X's timer, armed at the same instant, runs W_X (its RTO in force then, back-off of
  its replayed timer included: ``LiveEstimator.wait_if_lost``); X fires too iff W_X ≤ RTO_k;
- the episode ends with the first RTT sample that acknowledges past the RTO's ``snd_una``.
  With TCP timestamps its sample is the echo of the transmission that got through (Linux
  tcp_ack_update_rtt takes the TSecr for retransmitted data), so its send time ``t − mrtt``
  says which: before ``T − RTO_k/2`` → the original got through, the RTO was **spurious**
  (RFC 3522's Eifel detection); later → the retransmission did, the original was lost
  (**needed**). Without timestamps Karn's rule leaves no such sample: **unknown**;
- spurious: X would have been spurious too iff ``armed + W_X`` ≤ the original's ACK time;
  needed: X would have waited W_X where the kernel waited RTO_k (scored as a real loss,
  ``lost_*`` in X's metrics).
"""

from __future__ import annotations

import bisect
import math
from collections.abc import Sequence
from dataclasses import dataclass, field
from typing import Any

from rttlab import _core
from rttlab.live import events as ev

MS = 1_000_000


def default_estimators() -> list[str]:
    """Every estimator of the registry (``rttlab estimators``)."""
    from rttlab.trace.estimators import NAMES

    return list(NAMES)


@dataclass
class Episode:
    """One RTO episode of the kernel (its first expiry and the back-offs that followed)."""

    t_ns: int
    armed_ns: int
    rto_k_ns: int
    snd_una: int
    expiries: int = 1
    #: Per estimator: W_X at the arming.
    waits: dict[str, int | None] = field(default_factory=dict)
    verdict: str | None = None  # "spurious", "needed", "unknown"
    ack_ns: int | None = None


@dataclass
class Connection:
    key: int
    local: str
    remote: str
    first_ns: int
    state: str = "ESTABLISHED"
    timestamps: bool | None = None
    samples: int = 0
    #: Per-ACK reports that held more than one sample (docs/live.md, "Per-ACK samples").
    merged: int = 0
    last_rtt_us: int = 0
    srtt_us8: int = 0
    rto_ns: int = 0
    retrans: int = 0
    rto_events: int = 0
    episodes: list[Episode] = field(default_factory=list)
    #: The kernel's own forecast error and RTO (the ``kernel`` row).
    k_err_sum: float = 0.0
    k_scored: int = 0
    k_rto_sum: float = 0.0
    #: The smallest icsk_rto the kernel held at a scored sample (ns; 0: none yet): its floor,
    #: SRTT + rto_min, shows here (``rttlab live --rto-min``).
    k_rto_lowest: int = 0
    #: Each estimator's RTO in force after each sample (W_X were a segment's timer armed then):
    #: sample times and, parallel, one tuple per sample in the order of ``Session.names``.
    #: A kernel RTO is scored with the entry in force at its arming (docs/live.md, step 3).
    w_times: list[int] = field(default_factory=list)
    w_rtos: list[tuple[int | None, ...]] = field(default_factory=list)
    #: The largest icsk_rto any event carried (ns): how far back an arming can lie.
    max_rto_ns: int = 0
    #: Every sample fed, as (ACK time ns, RTT ns), when the session keeps them
    #: (``Session(keep_samples=True)``): what a replay of this run takes (``rttlab live --rto-min``).
    kept: list[tuple[int, int]] = field(default_factory=list)

    @property
    def open_episode(self) -> Episode | None:
        return self.episodes[-1] if self.episodes and self.episodes[-1].verdict is None else None


def _seq_after(a: int, b: int) -> bool:
    """a is after b in 32-bit sequence space (RFC 9293 §3.4)."""
    return 0 < ((a - b) & 0xFFFFFFFF) < 0x80000000


class Session:
    """Feed :class:`rttlab.live.events.Event` values in time order with :meth:`feed`; read the
    scores with :meth:`table` and :meth:`summary` at any moment."""

    def __init__(
        self,
        estimators: Sequence[str | tuple[str, Sequence[tuple[str, str]]]] | None = None,
        *,
        hz: int = 250,
        tick_ns: int = 4 * MS,
        min_rto_ns: int = 0,
        timer_granularity_ns: int = 0,
        per_ack: bool = True,
        keep_samples: bool = False,
    ) -> None:
        specs = [
            (e, []) if isinstance(e, str) else (e[0], list(e[1]))
            for e in (estimators or default_estimators())
        ]
        self.names = [n for n, _ in specs]
        # Karn per connection comes from the kernel (tstamp_ok) with each stream's first sample.
        self.est = {
            n: _core.LiveEstimator(n, p, tick_ns, timer_granularity_ns, min_rto_ns, True)
            for n, p in specs
        }
        self.hz = hz
        self.granularity_ns = timer_granularity_ns
        #: Samples come from the per-ACK program (every sample the kernel took); else from
        #: the once-per-RTT callback (docs/live.md, "Per-ACK samples").
        self.per_ack = per_ack
        #: Keep each connection's samples (``Connection.kept``) for a replay after the run.
        self.keep_samples = keep_samples
        self.conns: dict[int, Connection] = {}
        self.events = 0
        self.overruns = 0
        self.last_ns = 0

    def jiffies_ns(self, j: int) -> int:
        return j * 1_000_000_000 // self.hz

    def _conn(self, e: ev.Event) -> Connection:
        c = self.conns.get(e.cookie)
        if c is None:
            c = self.conns[e.cookie] = Connection(e.cookie, e.local, e.remote, e.ts_ns)
        # Negotiated at the handshake, so once seen on it stays on (a read of the bit-field can
        # come back 0 from a socket being torn down).
        if e.timestamps is not None and not c.timestamps:
            c.timestamps = e.timestamps
        return c

    def feed(self, e: ev.Event) -> list[dict[str, Any]]:
        """Absorb one event; the records it produced (one per RTT sample, per kernel RTO and per
        resolved episode: what ``--json`` prints)."""
        self.events += 1
        self.last_ns = max(self.last_ns, e.ts_ns)
        c = self._conn(e)
        out: list[dict[str, Any]] = []
        if e.op == (ev.ACK_SAMPLE if self.per_ack else ev.RTT):
            out += self._rtt(c, e)
        elif e.op == ev.RTT:
            # The once-per-RTT callback beside the per-ACK samples: its sample is one of them.
            out.append(
                {
                    "event": "rtt_cb",
                    "t_ns": e.ts_ns,
                    "conn": c.key,
                    "rtt_s": e.args[0] / 1e6,
                    "srtt_s": e.args[1] / 8e6,
                    "srtt_before_s": e.srtt_us8 / 8e6,
                }
            )
        elif e.op == ev.RTO:
            out += self._rto(c, e)
        elif e.op == ev.RETRANS:
            c.retrans += 1
        elif e.op == ev.STATE:
            new = e.args[1]
            c.state = ev.TCP_STATES[new] if new < len(ev.TCP_STATES) else str(new)
            out.append(
                {
                    "event": "state",
                    "t_ns": e.ts_ns,
                    "conn": c.key,
                    "from": ev.TCP_STATES[e.args[0]]
                    if e.args[0] < len(ev.TCP_STATES)
                    else e.args[0],
                    "to": c.state,
                }
            )
        elif e.op in (ev.ACTIVE_ESTABLISHED, ev.PASSIVE_ESTABLISHED):
            c.srtt_us8 = e.srtt_us8
            out.append(
                {
                    "event": "established",
                    "t_ns": e.ts_ns,
                    "conn": c.key,
                    "local": c.local,
                    "remote": c.remote,
                    "timestamps": c.timestamps,
                }
            )
        return out

    def _rtt(self, c: Connection, e: ev.Event) -> list[dict[str, Any]]:
        mrtt_us, srtt_after = e.args[0], e.args[1]
        if e.op == ev.ACK_SAMPLE and e.args[2]:
            # Two or more samples between two looks of the per-ACK program (the estimator's
            # MDEV did not move as one sample moves it): no sample can be told; counted.
            c.merged += 1
            c.srtt_us8 = srtt_after
            return [{"event": "merged", "t_ns": e.ts_ns, "conn": c.key, "srtt_s": srtt_after / 8e6}]
        if srtt_after == 0:
            # A kernel whose RTT callback passes no arguments (before tcp_bpf_rtt() took
            # mrtt and srtt): the context's srtt_us is then the value after the update; invert
            # tcp_rtt_estimator's `srtt += m − srtt/8` to recover the sample.
            srtt_after = e.srtt_us8
            before = c.srtt_us8
            mrtt_us = (
                srtt_after >> 3 if before == 0 else max(1, srtt_after - before + (before >> 3))
            )
            before_us8 = before
        else:
            before_us8 = e.srtt_us8  # the context's srtt_us: SRTT before this sample
        now, rtt = e.ts_ns, max(1, mrtt_us) * 1000
        rec: dict[str, Any] = {
            "event": "rtt",
            "t_ns": now,
            "conn": c.key,
            "rtt_s": rtt / 1e9,
            "srtt_s": srtt_after / 8e6,
            # The kernel's icsk_rto the event carried (jiffies → s): what its timer would run.
            "kernel_rto_s": self.jiffies_ns(e.rto_jiffies) / 1e9,
        }
        # The kernel's own forecast (its SRTT before the sample) and RTO, scored like the rest.
        if c.samples > 0:
            c.k_scored += 1
            c.k_err_sum += abs(before_us8 * 125 - rtt)
            k_rto = self.jiffies_ns(e.rto_jiffies)
            c.k_rto_sum += k_rto
            if k_rto and (not c.k_rto_lowest or k_rto < c.k_rto_lowest):
                c.k_rto_lowest = k_rto
        preds = {}
        for name, x in self.est.items():
            before, _after, rto, wait, expiries = x.sample(c.key, now, rtt, bool(c.timestamps))
            preds[name] = {
                "prediction_s": None if before is None else before / 1e9,
                "rto_s": rto / 1e9,
                "expiries": expiries,
            }
        rec["estimators"] = preds
        c.samples += 1
        if self.keep_samples:
            c.kept.append((now, rtt))
        c.last_rtt_us = mrtt_us
        c.srtt_us8 = srtt_after
        c.rto_ns = self.jiffies_ns(e.rto_jiffies)
        self._remember_rtos(c, now)
        out = [rec]
        ep = c.open_episode
        if ep is not None and _seq_after(e.snd_una, ep.snd_una):
            out.append(self._resolve(c, ep, now, rtt))
        return out

    def _rto(self, c: Connection, e: ev.Event) -> list[dict[str, Any]]:
        c.rto_events += 1
        rto_k = self.jiffies_ns(e.args[1])
        ep = c.open_episode
        if ep is not None and ep.snd_una == e.snd_una:
            ep.expiries += 1  # the kernel backed off and fired again for the same hole
            return [
                {
                    "event": "rto",
                    "t_ns": e.ts_ns,
                    "conn": c.key,
                    "rto_s": rto_k / 1e9,
                    "backoff": e.backoff,
                    "first": False,
                }
            ]
        if ep is not None:
            ep.verdict = "unknown"
        armed = max(0, e.ts_ns - rto_k)
        c.max_rto_ns = max(c.max_rto_ns, rto_k)
        ep = Episode(e.ts_ns, armed, rto_k, e.snd_una)
        ep.waits = self._waits_at(c, armed)
        c.episodes.append(ep)
        fired = {n: (w is not None and w <= rto_k) for n, w in ep.waits.items()}
        return [
            {
                "event": "rto",
                "t_ns": e.ts_ns,
                "conn": c.key,
                "rto_s": rto_k / 1e9,
                "backoff": e.backoff,
                "first": True,
                "wait_s": {n: None if w is None else w / 1e9 for n, w in ep.waits.items()},
                "fired_too": fired,
            }
        ]

    def _remember_rtos(self, c: Connection, now: int) -> None:
        """Keep each estimator's RTO in force after this sample, for a kernel timer armed
        before the next one; forget what no timer can reach back to any more."""
        c.max_rto_ns = max(c.max_rto_ns, c.rto_ns)
        c.w_times.append(now)
        c.w_rtos.append(tuple(x.wait_if_lost(c.key, now) for x in self.est.values()))
        if len(c.w_times) >= 4096:
            # A timer that fires by now was armed at most max(icsk_rto) ago (a later back-off
            # doubles it: twice that, + 1 s); keep the last entry before that too.
            cut = bisect.bisect_right(c.w_times, now - 2 * c.max_rto_ns - 1_000_000_000) - 1
            if cut > 0:
                del c.w_times[:cut], c.w_rtos[:cut]

    def _waits_at(self, c: Connection, armed: int) -> dict[str, int | None]:
        """W_X for a segment whose timer started at ``armed``: the RTO X held in force then —
        after the connection's last sample at or before ``armed``, not the samples taken while
        the kernel's timer ran (SACKed data between arming and expiry). None before X's first."""
        k = bisect.bisect_right(c.w_times, armed) - 1
        if k < 0:
            return {name: None for name in self.names}
        rtos = c.w_rtos[k]
        if self.granularity_ns:
            # The snapshot is the wait for a timer armed at its sample; re-arm it at `armed` on
            # the granular clock (exact up to one tick: the base RTO is not kept apart).
            g = self.granularity_ns
            return {
                name: None if w is None else -(-(armed + w) // g) * g - armed
                for name, w in zip(self.names, rtos)
            }
        return dict(zip(self.names, rtos))

    def _resolve(self, c: Connection, ep: Episode, now: int, rtt: int) -> dict[str, Any]:
        if not c.timestamps:
            ep.verdict = "unknown"
        else:
            sent = now - rtt
            ep.verdict = "spurious" if sent < ep.t_ns - ep.rto_k_ns // 2 else "needed"
        ep.ack_ns = now
        rec: dict[str, Any] = {
            "event": "rto_verdict",
            "t_ns": now,
            "conn": c.key,
            "verdict": ep.verdict,
            "kernel_wait_s": ep.rto_k_ns / 1e9,
        }
        if ep.verdict == "needed":
            for name, w in ep.waits.items():
                if w is not None:
                    self.est[name].record_loss(c.key, w)
        if ep.verdict == "spurious":
            rec["spurious_too"] = {
                n: (w is not None and ep.armed_ns + w <= now) for n, w in ep.waits.items()
            }
        return rec

    # ---- reading the scores ----

    def _kernel_scores(self, conns: Sequence[Connection]) -> dict[str, Any]:
        eps = [ep for c in conns for ep in c.episodes]
        return {
            "kernel_rtos": len(eps),
            "kernel_spurious": sum(ep.verdict == "spurious" for ep in eps),
            "kernel_needed": sum(ep.verdict == "needed" for ep in eps),
            "kernel_unknown": sum(ep.verdict in ("unknown", None) for ep in eps),
        }

    def _versus_kernel(self, name: str, conns: Sequence[Connection]) -> dict[str, Any]:
        eps = [ep for c in conns for ep in c.episodes if ep.waits.get(name) is not None]
        fired = sum(ep.waits[name] <= ep.rto_k_ns for ep in eps)  # type: ignore[operator]
        spurious = [ep for ep in eps if ep.verdict == "spurious"]
        needed = [ep for ep in eps if ep.verdict == "needed"]
        return {
            "fired_too": fired,
            "spurious_too": sum(
                ep.armed_ns + ep.waits[name] <= (ep.ack_ns or 0) for ep in spurious
            ),  # type: ignore[operator]
            "wait_on_kernel_losses_s": (sum(ep.waits[name] for ep in needed) / len(needed) / 1e9)
            if needed
            else None,  # type: ignore[misc]
        }

    def kernel_row(self, conns: Sequence[Connection]) -> dict[str, Any]:
        """The kernel's own row over ``conns``: its SRTT's forecast error, its RTOs judged, W =
        its icsk_rto at each scored sample, and the smallest icsk_rto it held (``rto_lowest_s``)."""
        kernel = self._kernel_scores(conns)
        scored = sum(c.k_scored for c in conns)
        needed = [ep for c in conns for ep in c.episodes if ep.verdict == "needed"]
        lows = [c.k_rto_lowest for c in conns if c.k_rto_lowest]
        return {
            "estimator": "kernel",
            "samples": scored,
            "mae_s": sum(c.k_err_sum for c in conns) / scored / 1e9 if scored else None,
            "bad_timeouts": kernel["kernel_spurious"],
            "wait_mean_s": sum(c.k_rto_sum for c in conns) / scored / 1e9 if scored else None,
            "fired_too": kernel["kernel_rtos"],
            "spurious_too": kernel["kernel_spurious"],
            "wait_on_kernel_losses_s": sum(ep.rto_k_ns for ep in needed) / len(needed) / 1e9
            if needed
            else None,
            "rto_lowest_s": min(lows) / 1e9 if lows else None,
        }

    def rows(self, conn: int | None = None) -> list[dict[str, Any]]:
        """One row per estimator (and the kernel's own) over one connection or pooled (None)."""
        conns = list(self.conns.values()) if conn is None else [self.conns[conn]]
        rows = [self.kernel_row(conns)]
        for name, x in self.est.items():
            m = x.metrics(conn) if conn is not None else x.metrics()
            if m is None:
                m = {"estimator": name, "samples": 0}
            m = {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in m.items()}
            rows.append({**m, **self._versus_kernel(name, conns)})
        return rows

    def summary(self) -> dict[str, Any]:
        return {
            "event": "summary",
            "events": self.events,
            "overruns": self.overruns,
            "hz": self.hz,
            "merged": sum(c.merged for c in self.conns.values()),
            "samples_from": "every ACK (tcp_probe)"
            if self.per_ack
            else "once per RTT (RTT callback)",
            "kernel": self._kernel_scores(list(self.conns.values())),
            "pooled": self.rows(),
            "connections": [
                {
                    "conn": c.key,
                    "local": c.local,
                    "remote": c.remote,
                    "state": c.state,
                    "timestamps": c.timestamps,
                    "samples": c.samples,
                    "merged": c.merged,
                    "retransmissions": c.retrans,
                    "rto_events": c.rto_events,
                    "rows": self.rows(c.key),
                }
                for c in self.conns.values()
                if c.samples > 1 or c.rto_events
            ],
        }
