"""RED/ECN gateway dimensioning of SpecTCP (Bai, Lilja & Atiquzzaman 2009, §5; Bai, Lilja & Atiquzzaman 2009;
docs/algorithms.md §9.10): the buffer that keeps slow start from overflowing (eq. 3), the marking wait
(eq. 5) and the suggested max_th (eq. 8), and the share of the bottleneck that bounds the number
of flows (eqs. 10, 21). Formulas exactly as printed; every quantity names its equation.

Where the paper leaves an input open it is an argument with a stated default:

- eq. 5 needs p(t) and W_i(t) "at the first marking" without saying what they are. Defaults:
  p = max_p and W_i = r_i·μ̄_i + min_th/m — the window with which flow i, sharing the queue equally,
  has just brought it to min_th. Both are assumptions, reported as such.
- eq. 8 adds ω, the dimensionless EWMA weight, to β_i, a number of window increases (packets):
  dimensionally odd as printed (the fixed point of eq. 7 would give Q̄ = Q(t_1), i.e. +1 per flow,
  not +ω). Kept as printed and flagged in the output; with ω = 0.002 it moves Q̄_max by 0.002·m.
- μ̄_i is the flow's share of the bottleneck in packets per second: the bandwidth over the number of
  flows unless given, or eq. 21's 2/(λ·r_i²) from a Poisson congestion-event rate λ.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from dataclasses import asdict, dataclass


class DimensionError(ValueError):
    pass


@dataclass(frozen=True)
class Quantity:
    name: str
    value: float
    unit: str
    equation: str
    note: str = ""

    def as_dict(self) -> dict:
        return asdict(self)


def max_buffer(
    ssthresh: Sequence[float], rtt: Sequence[float], share_pps: Sequence[float]
) -> float:
    """Eq. (3): Q(t)_max = Σ_i (SSthresh_i − r_i·μ̄_i), packets (rtt in s, share in packets/s)."""
    return sum(s - r * mu for s, r, mu in zip(ssthresh, rtt, share_pps, strict=True))


def marking_wait(p: float, window: float) -> float:
    """Eq. (5): β_i = E[T[1]]/r_i = 1/(p(t)·W_i(t)) window increases before the first mark."""
    if p <= 0 or window <= 0:
        raise DimensionError(f"eq. (5) needs p > 0 and W > 0 (got p = {p}, W = {window})")
    return 1.0 / (p * window)


def max_threshold(min_th: float, betas: Sequence[float], omega: float) -> float:
    """Eq. (8) as printed: Q̄_max = min_th + Σ_i (β_i + ω) — the suggested max_th (ω added to a
    packet count: dimensionally odd, see the module docstring)."""
    return min_th + sum(b + omega for b in betas)


def share_from_loss_rate(loss_rate: float, rtt: float) -> float:
    """Eq. (21): μ̄_i = 2/(λ·r_i²) packets/s (λ: congestion events per second, r_i in s)."""
    if loss_rate <= 0 or rtt <= 0:
        raise DimensionError(f"eq. (21) needs λ > 0 and r > 0 (got λ = {loss_rate}, r = {rtt})")
    return 2.0 / (loss_rate * rtt * rtt)


def flow_bound(bottleneck_pps: float, share_pps: float) -> int:
    """Eqs. (9)–(10): 1 ≤ m ≤ α = BW_bn/μ̄_i, α taken as an integer (floor)."""
    return math.floor(bottleneck_pps / share_pps)


def dimension(
    *,
    ssthresh: Sequence[float],
    rtt: Sequence[float],
    bandwidth_bps: float,
    packet_bytes: float,
    min_th: float,
    omega: float,
    max_p: float,
    p: float | None = None,
    window: Sequence[float] | None = None,
    share_bps: Sequence[float] | None = None,
    loss_rate: float | None = None,
) -> list[Quantity]:
    """Every §5 quantity for m flows (one entry per flow in ``ssthresh``; ``rtt`` one per flow or
    one for all), each naming its equation."""
    m = len(ssthresh)
    if m == 0:
        raise DimensionError("at least one flow (one --ssthresh per flow)")
    if len(rtt) == 1:
        rtt = list(rtt) * m
    if len(rtt) != m:
        raise DimensionError(f"{len(rtt)} RTTs for {m} flows: give one RTT, or one per flow")
    for name, v in (
        ("bandwidth", bandwidth_bps),
        ("packet size", packet_bytes),
        *((f"rtt[{i}]", r) for i, r in enumerate(rtt)),
    ):
        if not v > 0:
            raise DimensionError(f"{name} must be > 0 (got {v})")
    if not 0 <= omega <= 1:
        raise DimensionError(f"omega is an EWMA weight in [0, 1] (got {omega})")
    pkt_bits = 8.0 * packet_bytes
    bottleneck_pps = bandwidth_bps / pkt_bits
    out: list[Quantity] = []
    if loss_rate is not None:
        shares = [share_from_loss_rate(loss_rate, r) for r in rtt]
        eq, note = "eq. (21)", f"2/(lambda r_i^2), lambda = {loss_rate:g}/s"
    elif share_bps is not None:
        if len(share_bps) != m:
            raise DimensionError(f"{len(share_bps)} shares for {m} flows")
        shares, eq, note = [b / pkt_bits for b in share_bps], "input", "given"
    else:
        shares, eq, note = [bottleneck_pps / m] * m, "input", "bottleneck bandwidth / m"
    for i, s in enumerate(shares):
        out.append(Quantity(f"share[{i}]", s, "packets/s", eq, note))
    out.append(
        Quantity(
            "Q(t)_max",
            max_buffer(ssthresh, rtt, shares),
            "packets",
            "eq. (3)",
            "buffer that slow start up to SSthresh fills: sum(SSthresh_i - r_i mu_i)",
        )
    )
    p_used = max_p if p is None else p
    if window is None:
        windows = [r * s + min_th / m for r, s in zip(rtt, shares)]
        w_note = (
            "assumed: W_i = r_i mu_i + min_th/m (the window that brings the shared queue to min_th)"
        )
    else:
        if len(window) != m:
            raise DimensionError(f"{len(window)} windows for {m} flows")
        windows, w_note = list(window), "given"
    betas = [marking_wait(p_used, w) for w in windows]
    p_note = "assumed: p(t) = max_p" if p is None else "given"
    for i, (w, b) in enumerate(zip(windows, betas)):
        out.append(Quantity(f"W[{i}]", w, "packets", "eq. (5) input", w_note))
        out.append(
            Quantity(
                f"beta[{i}]",
                b,
                "window increases",
                "eq. (5)",
                f"1/(p W_i), p = {p_used:g} ({p_note})",
            )
        )
    out.append(
        Quantity("Q(t0)", min_th + sum(betas), "packets", "eq. (4)", "queue at the first mark")
    )
    out.append(
        Quantity("Q(t1)", min_th + sum(b + 1 for b in betas), "packets", "eq. (6)", "one RTT later")
    )
    out.append(
        Quantity(
            "Qbar_max",
            max_threshold(min_th, betas, omega),
            "packets",
            "eq. (8)",
            "suggested max_th; as printed it adds omega (a dimensionless EWMA weight) to beta_i (a count): dimensionally odd",
        )
    )
    if loss_rate is not None or len(set(shares)) == 1:
        out.append(
            Quantity(
                "alpha",
                flow_bound(bottleneck_pps, min(shares)),
                "flows",
                "eqs. (9)-(10)",
                "1 <= m <= alpha = BW_bn / mu_i",
            )
        )
    return out


_BW = re.compile(r"^\s*([0-9.eE+-]+)\s*([kKMG]?)(bps|b/s)?\s*$")
_SIZE = re.compile(r"^\s*([0-9.eE+-]+)\s*(B)?\s*$")


def parse_bandwidth(text: str) -> float:
    """``1.5Mbps``, ``64kbps``, ``1500000`` (bit/s)."""
    m = _BW.match(text)
    if not m:
        raise DimensionError(
            f"bandwidth '{text}': expected e.g. 1.5Mbps, 64kbps or bits per second"
        )
    return float(m.group(1)) * {"": 1.0, "k": 1e3, "K": 1e3, "M": 1e6, "G": 1e9}[m.group(2)]


def parse_bytes(text: str) -> float:
    m = _SIZE.match(text)
    if not m:
        raise DimensionError(f"packet size '{text}': expected e.g. 1040B")
    return float(m.group(1))
