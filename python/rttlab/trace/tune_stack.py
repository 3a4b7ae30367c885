"""``rttlab tune --stack``: search only the knobs a real stack lets an operator set, on its clock,
and say how to apply the answer (docs/tuning.md, "Knobs a stack exposes").

- ``linux``: the ``linux`` estimator (``tcp_rtt_estimator``/``__tcp_set_rto``), only ``rto_min``
  searched, in whole jiffies at ``--hz`` (1000 by default; 250 optional). The kernel keeps
  ``icsk_rto_min`` in jiffies: ``tcp_init_sock()`` (net/ipv4/tcp.c) sets it to
  ``usecs_to_jiffies(sysctl_tcp_rto_min_us)``, which rounds up; a route's ``rto_min`` (RTAX_RTO_MIN,
  in ms) is converted the same way by ``dst_metric_rtt()`` and takes precedence over the BPF
  socket option and the sysctl (commit f086edef71be, "tcp: add sysctl_tcp_rto_min_us", Linux 6.11).
  ``rto_max`` (``net.ipv4.tcp_rto_max_ms``, 6.15) is left at its 120 s default: it acts only after
  six or more back-offs, which a replay of RTT samples almost never reaches.
- ``quic``: the ``quic`` estimator (RFC 9002 §6.2.1 PTO), its timer granularity (kGranularity,
  §6.1.2) and initial RTT (kInitialRtt, §6.2.2) searched; the peer's ``max_ack_delay``
  (§6.2.1, a transport parameter, RFC 9000 §18.2) is an input (``--max-ack-delay``, default 25 ms),
  never a knob.
- ``freebsd``: the ``freebsd`` estimator (``tcp_xmit_timer``, ``TCP_REXMTVAL``,
  ``TCPT_RANGESET``; FreeBSD 13/14), ``rexmit_min`` and ``rexmit_slop`` searched, in whole ticks
  of kern.hz = 1000 (1 ms; FreeBSD's default, the only rate taken). The sysctls
  ``net.inet.tcp.rexmit_min`` and ``net.inet.tcp.rexmit_slop`` are read in milliseconds and kept
  in ticks, ``sysctl_msec_to_ticks()`` (sys/kern/kern_sysctl.c) truncating ms·hz/1000 and
  refusing less than one tick; the kernel floors SRTT + 4·RTTVAR at ``t_rttmin`` (=
  rexmit_min), then ``TCPT_RANGESET`` adds the slop, so both bind. ``rexmit_initial`` and the 64 s
  cap (``TCPTV_REXMTMAX``) are left at their defaults, as Linux's are.
- ``any``: every estimator, the research view (knobs no stack exposes included).
"""

from __future__ import annotations

import math
from typing import Any

from rttlab.trace.tune_search import TIMER_FLOOR, TuneError, fmt_value, parse_quantity

STACKS = ("linux", "freebsd", "quic", "any")

#: kern.hz for ``--stack freebsd``: FreeBSD's default tick rate (1 ms ticks).
FREEBSD_HZ = 1000


def resolve(
    stack: str, hz: int, max_ack_delay: str | None, names: list[str] | None
) -> tuple[list[str] | None, dict[str, dict[str, str]], dict[str, dict[str, str]]]:
    """(estimators, fixed, ranges) for a stack; ``any`` leaves them to the caller."""
    if stack not in STACKS:
        raise TuneError(f"--stack: unknown stack '{stack}' (known: {', '.join(STACKS)})")
    if hz not in (100, 250, 300, 1000):
        raise TuneError(f"--hz: {hz} is not a Linux tick rate (CONFIG_HZ: 100, 250, 300 or 1000)")
    if stack != "quic" and max_ack_delay is not None:
        raise TuneError("--max-ack-delay: only with --stack quic (the peer's max_ack_delay)")
    if stack == "any":
        return names, {}, {}
    if names is not None:
        raise TuneError(
            f"--estimators: --stack {stack} decides the estimator; give one or the other"
        )
    if stack == "freebsd":
        if hz != 1000:
            raise TuneError(
                f"--hz: {hz} is for --stack linux; --stack freebsd takes kern.hz = 1000 (FreeBSD's default)"
            )
        tick = fmt_value("duration", 1.0 / FREEBSD_HZ)
        return (
            ["freebsd"],
            {"freebsd": {"hz": str(FREEBSD_HZ)}},
            {"freebsd": {"rexmit_min": f"{tick}:3s", "rexmit_slop": f"{tick}:1s"}},
        )
    if stack == "linux":
        jiffy = 1.0 / hz
        return (
            ["linux"],
            {"linux": {"hz": str(hz)}},
            {"linux": {"rto_min": f"{fmt_value('duration', jiffy)}:3s"}},
        )
    mad = parse_quantity("duration", max_ack_delay or "25ms", "--max-ack-delay")
    if not 0 <= mad <= 16.384:
        raise TuneError(
            f"--max-ack-delay: {max_ack_delay} is outside 0..16.384s (RFC 9000 §18.2: 2^14 ms)"
        )
    return (
        ["quic"],
        {"quic": {"max_ack_delay": fmt_value("duration", mad)}},
        {"quic": {"granularity": "1ms:500ms", "initial_rtt": "1ms:3s", TIMER_FLOOR: "off"}},
    )


def _seconds(text: str) -> float:
    return parse_quantity("duration", text, "a parameter")


def apply_lines(stack: str, rec: dict[str, Any], hz: int) -> dict[str, Any]:
    """The recommendation's knobs in the stack's own units and the lines that set them. ``rec``:
    estimator, params, timer_floor_s, keep_default."""
    est, params = rec["estimator"], rec["params"]
    if rec.get("keep_default"):
        return {
            "knobs": {},
            "apply": [],
            "apply_note": f"nothing to change: keep {est} at its defaults",
        }
    if est == "linux" and not rec["timer_floor_s"]:
        jiffy_us = 1_000_000 // hz
        us = int(round(_seconds(params["rto_min"]) * 1e6))
        us = math.ceil(us / jiffy_us) * jiffy_us  # what the kernel keeps (usecs_to_jiffies)
        ms = math.ceil(us / 1000)
        return {
            "knobs": {"rto_min_us": us},
            "apply": [
                f"sysctl -w net.ipv4.tcp_rto_min_us={us}",
                f"ip route change <dst> via <gw> rto_min {ms}ms",
            ],
            "apply_note": f"either line: the sysctl for new sockets of the namespace, or the route (restate the route's own spec; it takes precedence). The kernel keeps rto_min in jiffies at HZ={hz}, rounded up",
        }
    if est == "freebsd" and stack == "freebsd":
        # The searched values are whole ticks; the sysctls take ms and keep ms·hz/1000 ticks
        # (sysctl_msec_to_ticks truncates), so at 1000 Hz the ms written are the ticks kept.
        from rttlab.trace.replay import defaults

        given = {**defaults("freebsd"), **params}  # a knob no fold moved keeps its default
        ms = {}
        for key in ("rexmit_min", "rexmit_slop"):
            ticks = int(round(_seconds(given[key]) * FREEBSD_HZ))
            ms[key] = ticks * 1000 // FREEBSD_HZ
        settings = [f"net.inet.tcp.{key}={v}" for key, v in ms.items()]
        return {
            "knobs": {f"{key}_ms": v for key, v in ms.items()},
            "apply": [
                *(f"sysctl {line}" for line in settings),
                *(f"{line}  # in /etc/sysctl.conf" for line in settings),
            ],
            "apply_note": "the sysctl lines now, the /etc/sysctl.conf lines to keep them after a reboot. rexmit_min reaches connections opened after it (tcp_newtcpcb copies it into t_rttmin), rexmit_slop every connection's next RTO (TCPT_RANGESET reads it each time). FreeBSD keeps both in ticks of kern.hz=1000",
        }
    if est == "quic" and stack == "quic":
        g, i = _seconds(params["granularity"]), _seconds(params["initial_rtt"])
        return {
            "knobs": {
                "granularity_us": int(round(g * 1e6)),
                "initial_rtt_us": int(round(i * 1e6)),
            },
            "inputs": {"max_ack_delay_us": int(round(_seconds(params["max_ack_delay"]) * 1e6))},
            "apply": [
                f"kGranularity = {fmt_value('duration', g)}  # RFC 9002 §6.1.2",
                f"kInitialRtt = {fmt_value('duration', i)}  # RFC 9002 §6.2.2",
            ],
            "apply_note": "set in your QUIC implementation's loss-recovery configuration; max_ack_delay is the peer's transport parameter, an input here",
        }
    knobs: dict[str, Any] = dict(params)
    if rec["timer_floor_s"]:
        knobs["timer_min_rto"] = fmt_value("duration", rec["timer_floor_s"])
    if est == "freebsd":
        # The research view searches off FreeBSD's tick clock (unless -p freebsd.hz is given):
        # no sysctl line need set exactly what was scored.
        note = "FreeBSD's sysctls take whole ms (ticks at kern.hz=1000): run --stack freebsd for a setting searched on that clock and the lines that set it; reproduce this one with the command"
    else:
        note = f"no deployed stack exposes {est}'s knobs as such (research view, --stack any); reproduce with the command"
    return {"knobs": knobs, "apply": [], "apply_note": note}
