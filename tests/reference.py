"""Independent plain-Python/NumPy references of two estimators, written from docs/algorithms.md (not
from the Rust code). Tests use them as oracles; benchmarks/bench_replay.py times them as the peer.
"""

from __future__ import annotations

import numpy as np


def rfc6298(
    rtts: np.ndarray,
    *,
    min_rto: float = 1.0,
    max_rto: float = 60.0,
    g: float = 0.001,
    k: float = 4.0,
    initial: float = 1.0,
):
    """RFC 6298 §2 in float seconds. Returns (prediction, rto) in force *before* each sample."""
    n = len(rtts)
    pred = np.full(n, np.nan)
    rto_in_force = np.empty(n)
    srtt = rttvar = None
    rto = min(max(initial, min_rto), max_rto)
    for i, r in enumerate(rtts):
        rto_in_force[i] = rto
        if srtt is not None:
            pred[i] = srtt
            rttvar = 0.75 * rttvar + 0.25 * abs(srtt - r)
            srtt = 0.875 * srtt + 0.125 * r
        else:
            srtt, rttvar = r, r / 2
        rto = min(max(srtt + max(g, k * rttvar), min_rto), max_rto)
    return pred, rto_in_force


def fixed_share(
    rtts: np.ndarray,
    *,
    tick: float,
    n: int = 100,
    eta: float = 2.0,
    alpha: float = 0.08,
    clamp: bool = False,
):
    """Nunes et al. Table I, one NumPy-vectorised trial per sample. Returns predictions (s) made
    before each sample. ``tick`` (s) has no default: the paper does not print one (docs/algorithms.md
    §6.2). ``clamp``: a sample above the top expert is fed as the top expert."""
    i = np.arange(1, n + 1)
    x = 1.0 + 128.0 * 2.0 ** ((i - n) / 4.0)
    w = np.full(n, 1.0 / n)
    out = np.empty(len(rtts))
    for t, r in enumerate(rtts):
        y = r / tick
        if clamp:
            y = min(y, x[-1])
        out[t] = (w @ x) / w.sum() * tick
        loss = np.where(x >= y, (x - y) ** 2, 2.0 * y)
        w = w * np.exp(-eta * (loss - loss.min()))
        w = w / w.sum()
        w = (1 - alpha) * w + alpha / n
    return out
