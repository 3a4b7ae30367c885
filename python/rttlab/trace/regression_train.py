"""Fit the linear model of Baddam et al. 2018 (the ``regression`` estimator's, docs/algorithms.md
§10) on the flows of packet captures, with held-out MAPE per flow (``rttlab train regression``).

The model, in the project's feature order (its ``linear_regression.py``):
ŷ = b0 + b1·hops + b2·min_rtt + b3·max_rtt + b4·ttl, RTTs in ms. What each feature is here:

- **ttl**: the IP TTL (hop limit) of the far endpoint's packets as the capture saw them — the
  project used the reply TTL hping3 printed, i.e. the far host's packets at the prober. The far
  endpoint is the direction whose packets crossed more routers to reach the capture
  (``hops_rev`` vs ``hops_fwd``; a tie takes the responder, ``dst``, as hping3 measured replies);
  a connection without a TTL from both endpoints is left out (the far end cannot be told);
- **hops**: that direction's router count from its TTL (``hops_fwd``/``hops_rev``: the nearest
  common initial TTL 32/64/128/255 at or above it, minus it). The project counted tcptraceroute's
  lines instead; a capture holds no traceroute, so the TTL is the only hop count it gives;
- **min_rtt, max_rtt**: the minimum and maximum of a window of ``window`` consecutive path-RTT
  samples of the flow (25 = the project's ``hping3 -c 25``);
- **target**: ``mean`` (the default, the project's): the mean RTT of the same window — the report
  does not say what is predicted, its code regresses hping3's *average* RTT on that run's min/max
  (``sm.OLS(avg, add_constant([hops, min, max, ttl]))``); ``next``: the sample right after the
  window, what an RTT estimator has to predict (rttlab's ``form=rttlab`` uses the model so).

Windows slide by one sample. Hops and TTL are constant within a flow, so with few flows (or flows
sharing an initial TTL, where hops = initial − TTL exactly) their columns are collinear with the
intercept or each other: a column that adds no rank is left out (its coefficient fixed at 0) and
named in :attr:`Training.dropped`, rather than fitted as noise. ``path_features = False`` fits
min and max alone (hops and ttl fixed at 0): a per-flow constant lets the fit absorb each
training flow's offset, which need not carry over to another path (docs/train.md measures it).

Held-out validation (``split``): ``time`` (default) fits on the first ``train_fraction`` of each
flow's samples and scores the windows wholly after them (no sample shared with a training
window); ``flow`` leaves each flow out in turn (fit on the others, score it; needs two flows).
MAPE = mean |ŷ − y| / y × 100 over a flow's held-out windows, beside the published Cubic
coefficients' MAPE on the same windows. The coefficients returned are the fit on the training
part (``time``) or on every flow (``flow``), in the order ``-p regression.coef=`` takes.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import numpy as np

#: Column order of the design matrix and of the coefficients: [intercept, hops, min, max, ttl].
COLUMNS = ("intercept", "hops", "min_rtt", "max_rtt", "ttl")
#: The order columns are admitted when some add no rank: the per-window features first.
_ADMIT = (0, 2, 3, 1, 4)
#: The published Cubic coefficients (the estimator's defaults), the baseline each flow is scored against.
CUBIC = (-0.52218434, 0.01509783, 0.58899585, 0.41376639, 0.00157301)
TARGETS = ("mean", "next")
SPLITS = ("time", "flow")


class TrainError(ValueError):
    """Input that cannot be trained on: one line naming the file, flow or option."""


@dataclass
class Flow:
    """One connection's path-RTT series (ms) with the far endpoint's TTL and hop count."""

    capture: str
    conn: int
    src: str
    dst: str
    ttl: int
    hops: int
    rtt_ms: np.ndarray


@dataclass
class Training:
    coefficients: list[float]
    #: Columns left out of the fit (not identifiable on these flows): coefficient fixed at 0.
    dropped: list[str]
    target: str
    split: str
    window: int
    #: Whether hops and ttl were offered to the fit (``--no-path-features``: min and max only).
    path_features: bool
    #: One row per flow scored: capture, conn, src, dst, ttl, hops, samples, train/test windows,
    #: mape (held out, ours) and mape_cubic (the published Cubic coefficients, same windows).
    flows: list[dict[str, Any]]
    #: Flows not used, with the reason (too few samples, no TTL, ...).
    skipped: list[str] = field(default_factory=list)
    train_rows: int = 0
    test_rows: int = 0

    @property
    def coef_text(self) -> str:
        """The coefficients as ``-p regression.coef=`` (and a scenario's ``coef = "..."``) take them."""
        return ",".join(f"{b:.10g}" for b in self.coefficients)

    @property
    def mape(self) -> float:
        """Held-out MAPE over every scored window of every flow (%)."""
        return self._pooled("mape")

    @property
    def mape_cubic(self) -> float:
        """The published Cubic coefficients' MAPE on the same windows (%)."""
        return self._pooled("mape_cubic")

    def _pooled(self, key: str) -> float:
        """A per-flow MAPE pooled over flows, each weighted by its scored windows."""
        n = sum(r["test_windows"] for r in self.flows)
        return float(sum(r[key] * r["test_windows"] for r in self.flows) / n) if n else float("nan")


def capture_flows(path: str | Path) -> tuple[list[Flow], list[str]]:
    """The flows of one capture that have a path-RTT series, and a reason for each left out.
    Raises :class:`TrainError` when the capture has none at all, or none with an IP TTL."""
    from rttlab.trace.capture import path_samples, read_capture

    samples, connections = read_capture(path)
    series = path_samples(samples, connections)
    if series.empty:
        raise TrainError(
            f"{path}: no TCP connection with a path-RTT series (see `rttlab flows {path}`)"
        )
    flows, skipped = [], []
    conns = connections.set_index("conn")
    for conn, rows in series.groupby("conn", sort=True):
        c = conns.loc[conn]
        hops_fwd, hops_rev = _int(c["hops_fwd"]), _int(c["hops_rev"])
        if hops_fwd is None or hops_rev is None:
            skipped.append(
                f"{path}: connection {conn}: no IP TTL from {'either endpoint' if hops_fwd is None and hops_rev is None else 'one endpoint'} (TTL 0 or none), so no far-end TTL and hop count (features of the model)"
            )
            continue
        far_rev = hops_rev >= hops_fwd
        ttl, hops = (_int(c["ttl_rev"]), hops_rev) if far_rev else (_int(c["ttl_fwd"]), hops_fwd)
        flows.append(
            Flow(
                str(path),
                int(conn),
                str(c["src"]),
                str(c["dst"]),
                int(ttl),
                int(hops),
                rows["rtt"].to_numpy(dtype=float) * 1e3,
            )
        )
    if not flows:
        raise TrainError(
            f"{path}: no connection with IP TTLs from both endpoints (TTL 0 or missing; the far end's TTL and hop count are features of the model)"
        )
    return flows, skipped


def _int(x: Any) -> int | None:
    try:
        return None if x is None or x != x else int(x)
    except (TypeError, ValueError):
        return None


def windows(
    rtt_ms: np.ndarray, window: int, target: str
) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """Sliding windows of one series: (min, max, target) per window, and each window's last
    sample index + 1 (its end, exclusive; for ``next`` the target's index + 1)."""
    x = np.asarray(rtt_ms, dtype=float)
    n = len(x) - window + 1 if target == "mean" else len(x) - window
    if n <= 0:
        return np.empty((0, 2)), np.empty(0), np.empty(0, dtype=int)
    view = np.lib.stride_tricks.sliding_window_view(x, window)[:n]
    if target == "mean":
        y, end = view.mean(axis=1), np.arange(n) + window
    else:
        y, end = x[window : window + n], np.arange(n) + window + 1
    return np.column_stack([view.min(axis=1), view.max(axis=1)]), y, end


def design(flow: Flow, minmax: np.ndarray) -> np.ndarray:
    n = len(minmax)
    return np.column_stack(
        [
            np.ones(n),
            np.full(n, float(flow.hops)),
            minmax[:, 0],
            minmax[:, 1],
            np.full(n, float(flow.ttl)),
        ]
    )


def fit(x: np.ndarray, y: np.ndarray, path_features: bool = True) -> tuple[np.ndarray, list[str]]:
    """Least squares (NumPy's ``lstsq``) over the identifiable columns of ``x`` (n × 5, in
    :data:`COLUMNS` order); a column that adds no rank is dropped (coefficient 0) and named.
    ``path_features = False`` leaves hops and ttl out (coefficients 0) whatever their rank."""
    if len(y) < 2:
        raise TrainError(f"too few windows to fit: {len(y)}")
    scale = np.linalg.norm(x, axis=0)
    scale[scale == 0] = 1.0
    xs = x / scale
    kept: list[int] = []
    for j in _ADMIT if path_features else (0, 2, 3):
        if np.linalg.matrix_rank(xs[:, [*kept, j]], tol=1e-9 * np.sqrt(len(y))) > len(kept):
            kept.append(j)
    kept.sort()
    b = np.zeros(x.shape[1])
    b[kept] = np.linalg.lstsq(x[:, kept], y, rcond=None)[0]
    return b, [
        COLUMNS[j]
        for j in range(x.shape[1])
        if j not in kept and (path_features or j not in (1, 4))
    ]


def mape(b: Any, x: np.ndarray, y: np.ndarray) -> float:
    """Mean absolute percentage error of ŷ = x·b against y (%), over y > 0."""
    keep = y > 0
    return (
        float(np.mean(np.abs(x[keep] @ np.asarray(b, dtype=float) - y[keep]) / y[keep]) * 100)
        if keep.any()
        else float("nan")
    )


def train(
    paths: list[str | Path],
    window: int = 25,
    target: str = "mean",
    split: str = "time",
    train_fraction: float = 0.7,
    path_features: bool = True,
) -> Training:
    """Fit the model on the flows of ``paths`` and score it held out (module doc)."""
    _check_options(window, target, split, train_fraction)
    if not paths:
        raise TrainError("no capture given")
    return _train_paths(paths, window, target, split, train_fraction, path_features)


def _check_options(window: int, target: str, split: str, train_fraction: float) -> None:
    if target not in TARGETS:
        raise TrainError(f"--target: expected {' or '.join(TARGETS)}, got {target!r}")
    if split not in SPLITS:
        raise TrainError(f"--split: expected {' or '.join(SPLITS)}, got {split!r}")
    if window < 2:
        raise TrainError(f"--window: a window needs at least 2 samples (min and max), got {window}")
    if not 0 < train_fraction < 1:
        raise TrainError(
            f"--train-fraction: expected a fraction between 0 and 1, got {train_fraction}"
        )


def _train_paths(
    paths: list[str | Path],
    window: int,
    target: str,
    split: str,
    train_fraction: float,
    path_features: bool,
) -> Training:
    flows: list[Flow] = []
    skipped: list[str] = []
    for p in paths:
        f, s = capture_flows(p)
        flows += f
        skipped += s
    return train_flows(flows, window, target, split, train_fraction, skipped, path_features)


def train_flows(
    flows: list[Flow],
    window: int = 25,
    target: str = "mean",
    split: str = "time",
    train_fraction: float = 0.7,
    skipped: list[str] | None = None,
    path_features: bool = True,
) -> Training:
    """:func:`train` on flows already read (what the tests pin)."""
    _check_options(window, target, split, train_fraction)
    skipped = list(skipped or [])
    if not flows:
        raise TrainError("no flow to train on")
    # A flow scored held out by time needs a window or more on each side of its cut; left out
    # by flow, one window.
    need = window + (1 if target == "next" else 0)

    def enough(n: int) -> bool:
        cut = int(round(n * train_fraction))
        return min(cut, n - cut) >= need if split == "time" else n >= need

    usable = []
    for f in flows:
        if enough(len(f.rtt_ms)):
            usable.append(f)
        else:
            skipped.append(
                f"{f.capture}: connection {f.conn}: {len(f.rtt_ms)} path-RTT samples, too few for a {split} split with window {window}"
            )
    if not usable:
        least = next(n for n in range(need, 100 * need) if enough(n))
        raise TrainError(
            f"no flow has the {least} path-RTT samples a {split} split with window {window} needs (flows seen: {len(flows)}; try a smaller --window)"
        )
    if split == "flow" and len(usable) < 2:
        raise TrainError(
            f"--split flow: leaving flows out needs at least 2 usable flows, got {len(usable)} (use --split time)"
        )
    parts = [(f, *windows(f.rtt_ms, window, target)) for f in usable]
    rows: list[dict[str, Any]] = []
    if split == "time":
        train_x, train_y, tests = [], [], []
        for f, mm, y, end in parts:
            cut = int(round(len(f.rtt_ms) * train_fraction))
            start = end - need  # each window's first sample
            tr, te = end <= cut, start >= cut
            train_x.append(design(f, mm[tr]))
            train_y.append(y[tr])
            tests.append((f, design(f, mm[te]), y[te], int(tr.sum())))
        x, y = np.vstack(train_x), np.concatenate(train_y)
        if len(y) < 5:
            raise TrainError(
                f"only {len(y)} training windows for 5 coefficients (more samples, a smaller --window or a larger --train-fraction)"
            )
        b, dropped = fit(x, y, path_features)
        for f, xt, yt, ntr in tests:
            rows.append(_row(f, ntr, xt, yt, b))
        n_train = len(y)
    else:
        everything = [(f, design(f, mm), y) for f, mm, y, _ in parts]
        for i, (f, xt, yt) in enumerate(everything):
            x = np.vstack([d for j, (_, d, _) in enumerate(everything) if j != i])
            y = np.concatenate([t for j, (_, _, t) in enumerate(everything) if j != i])
            bi, _ = fit(x, y, path_features)
            rows.append(_row(f, len(y), xt, yt, bi))
        x, y = (
            np.vstack([d for _, d, _ in everything]),
            np.concatenate([t for _, _, t in everything]),
        )
        b, dropped = fit(x, y, path_features)
        n_train = len(y)
    return Training(
        coefficients=[float(v) for v in b],
        dropped=dropped,
        target=target,
        split=split,
        window=window,
        path_features=path_features,
        flows=rows,
        skipped=skipped,
        train_rows=n_train,
        test_rows=sum(r["test_windows"] for r in rows),
    )


def _row(f: Flow, n_train: int, xt: np.ndarray, yt: np.ndarray, b: Any) -> dict[str, Any]:
    return {
        "capture": Path(f.capture).name,
        "conn": f.conn,
        "src": f.src,
        "dst": f.dst,
        "ttl": f.ttl,
        "hops": f.hops,
        "samples": len(f.rtt_ms),
        "train_windows": n_train,
        "test_windows": len(yt),
        "mape": mape(b, xt, yt),
        "mape_cubic": mape(CUBIC, xt, yt),
    }
