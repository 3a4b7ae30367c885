"""Words and units for the columns figures and reports show: an axis reads "aggregate goodput
(Mb/s)", never ``goodput_bps``; and swept values such as ``"20Mbps"`` as numbers, so a figure
puts 5 Mb/s before 20 Mb/s on a numeric axis.

One table for every figure (evaluate, simulate, the report, the papers' figures) so a quantity
is named the same everywhere.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Quantity:
    """What a column holds: its name in words, the unit it is shown in, and the factor from the
    stored value (SI: seconds, bits per second, fractions) to that unit."""

    words: str
    unit: str = ""
    scale: float = 1.0

    def label(self) -> str:
        return f"{self.words} ({self.unit})" if self.unit else self.words


#: Columns of the results store (runs, scores, flows) and of rttlab.evaluate's rows.
QUANTITIES: dict[str, Quantity] = {
    "goodput_bps": Quantity("aggregate goodput", "Mb/s", 1e-6),
    "aggregate_goodput_bps": Quantity("aggregate goodput", "Mb/s", 1e-6),
    "min_flow_goodput_bps": Quantity("smallest flow's goodput", "Mb/s", 1e-6),
    "max_flow_goodput_bps": Quantity("largest flow's goodput", "Mb/s", 1e-6),
    "flows.goodput_bps": Quantity("flow goodput", "Mb/s", 1e-6),
    "offered_bps": Quantity("offered load", "Mb/s", 1e-6),
    "jain_index": Quantity("Jain's fairness index"),
    "utilisation": Quantity("bottleneck utilisation", "%", 100.0),
    "drops": Quantity("bottleneck drops", "packets"),
    "marks": Quantity("ECN marks", "packets"),
    "retransmissions": Quantity("retransmissions", "segments"),
    "flows.retransmissions": Quantity("retransmissions per flow", "segments"),
    "timeouts": Quantity("retransmission timeouts"),
    "flows.timeouts": Quantity("timeouts per flow"),
    "cpu_s": Quantity("CPU time per run", "s"),
    "wall_s": Quantity("wall time per run", "s"),
    "duration_s": Quantity("simulated time", "s"),
    # rttlab.evaluate's metrics (docs/metrics.md).
    "mae_s": Quantity("mean absolute error of the RTT forecast", "ms", 1e3),
    "mae_after_s": Quantity("mean absolute error after the sample", "ms", 1e3),
    "mae_ticks": Quantity("mean absolute error", "ticks"),
    "mape": Quantity("mean absolute percentage error", "%"),
    "under_prediction_rate": Quantity("under-prediction rate", "%", 100.0),
    "bad_timeouts": Quantity("bad (spurious) timeouts"),
    "bad_timeout_rate": Quantity("bad-timeout rate", "%", 100.0),
    "wait_mean_s": Quantity("mean wait W after a loss", "s"),
    "wait_p99_s": Quantity("99th-percentile wait W", "s"),
    "lost_wait_mean_s": Quantity("mean wait W on lost segments", "s"),
    "samples": Quantity("scored samples"),
    # Parameters swept most often: the scenario's path in words.
    "topology.bottleneck.bandwidth": Quantity("bottleneck bandwidth", "Mb/s", 1e-6),
    "topology.bottleneck.delay": Quantity("bottleneck delay", "ms", 1e3),
    "topology.bottleneck.buffer": Quantity("bottleneck buffer"),
    "topology.bottleneck.error.per": Quantity("packet error rate"),
    "topology.flows": Quantity("number of flows"),
    "tcp.cc": Quantity("congestion control"),
    "tcp.rto.policy": Quantity("RTO policy"),
    "estimator": Quantity("estimator"),
    "min_rto": Quantity("RTO floor", "s"),
    "tick": Quantity("tick", "ms", 1e3),
    "seed": Quantity("seed"),
}


def quantity(column: str) -> Quantity:
    """The column's :class:`Quantity`; an unknown column is named by its words (dots and
    underscores as spaces, a ``_s``/``_bps`` suffix read as its unit)."""
    if column in QUANTITIES:
        return QUANTITIES[column]
    name = column.rsplit(".", 1)[-1] if column.count(".") >= 2 else column
    for suffix, unit, scale in (
        ("_bps", "Mb/s", 1e-6),
        ("_s", "s", 1.0),
        ("_ms", "ms", 1.0),
        ("_pct", "%", 1.0),
    ):
        if name.endswith(suffix):
            return Quantity(name[: -len(suffix)].replace("_", " ").replace(".", " "), unit, scale)
    return Quantity(name.replace("_", " ").replace(".", " "))


def axis_label(column: str) -> str:
    """``"aggregate goodput (Mb/s)"`` for ``goodput_bps``: words, then the unit in brackets."""
    return quantity(column).label()


def numeric(value: Any) -> float | None:
    """A swept value as a number in SI units — ``"20Mbps"`` → 2e7 (bit/s), ``"20ms"`` → 0.02 (s),
    ``"1500B"`` → 1500, ``"100p"`` → 100, a number → itself — or None if it is not a quantity
    (a name such as ``"cubic"``, a boolean)."""
    if isinstance(value, bool) or value is None:
        return None
    if isinstance(value, (int, float)):
        return None if isinstance(value, float) and math.isnan(value) else float(value)
    if not isinstance(value, str):
        return None
    try:
        return float(value)
    except ValueError:
        pass
    from rttlab import _core

    # The scenario files' own parsers (src/sim/units.rs), so a figure reads a value as a run did.
    return _core.parse_quantity(value.strip())


def sig(value: float, digits: int = 3) -> str:
    """``value`` to ``digits`` significant figures, without an exponent for everyday magnitudes
    (``0.000633`` → ``0.000633``, ``18925600`` → ``1.89e+07``); NaN as an em dash."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return "—"
    if value == 0:
        return "0"
    if math.isinf(value):
        return "∞" if value > 0 else "−∞"
    # Round first, then read the magnitude: 0.09999 rounds to 0.100, not "0.1000".
    value = float(f"{value:.{digits - 1}e}")
    magnitude = math.floor(math.log10(abs(value)))
    if -5 <= magnitude < 6:
        return f"{value:.{max(0, digits - 1 - magnitude)}f}"
    return f"{value:.{digits - 1}e}"


def sort_key(value: Any) -> tuple[int, float, str]:
    """Orders a parameter's values: quantities by their number (5Mbps before 20Mbps), then
    names alphabetically, missing values last."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return (2, 0.0, "")
    x = numeric(value)
    return (0, x, "") if x is not None else (1, 0.0, str(value))
