"""The one-line summary of a run's bottleneck, as `simulate` and `testbed` (both sides of
`--compare`) print it: one wording and one set of units for the same numbers."""

from __future__ import annotations

from typing import Any


def bottleneck_line(summary: dict[str, Any], label: str | None = None, extra: str = "") -> str:
    """``[LABEL: ]aggregate goodput 9.46 Mb/s, Jain index 0.9980; bottleneck NAME: utilisation
    94.6 %, drops 12 overflow / 0 AQM / 0 corruption, 3 ECN marks[EXTRA]`` from a result's
    ``summary()`` (rttlab.sim.Result and the testbed's result share its layout)."""
    from rttlab.units import rate

    b = summary["bottleneck"]
    # A channel is a link and a direction ("bottleneck>": the link named bottleneck, forward).
    link = b["name"].rstrip("<>")
    way = {">": " (forward)", "<": " (reverse)"}.get(b["name"][-1:], "")
    name = ("bottleneck" if link == "bottleneck" else f"bottleneck {link}") + way
    jain = "—" if summary["jain_index"] is None else f"{summary['jain_index']:.4f}"
    return (
        f"{label + ': ' if label else ''}aggregate goodput {rate(summary['aggregate_goodput_bps'])}, Jain index {jain}; "
        f"{name}: utilisation {b['utilisation']:.1%}, drops {b['drops_overflow']:,} overflow / "
        f"{b['drops_aqm']:,} AQM / {b['drops_corruption']:,} corruption, {b['marks']:,} ECN marks{extra}"
    )
