"""Receiver-side loss discriminators (Biaz, mBiaz, Spike, ZigZag, ZBS; docs/algorithms.md §8.2-8.6) on
data arrivals: for every gap the receiver sees (a packet above the highest byte received so
far), each discriminator's verdict on the missing packets — ``congestion`` or ``corruption``.

    from rttlab.trace.discriminators import classify, classify_capture, score
    r = rttlab.simulate("examples/spectcp/lossy-link.toml", traces="all,receive")
    classify(r.traces["receive"])            # one row per gap, per flow
    classify_capture("receiver-side.pcap")   # one row per gap, per direction of each connection
    score("examples/spectcp/lossy-link.toml", seed=3)   # every discriminator scored on one run

Classification only: a capture holds no truth about why a packet was lost. On simulated runs
:func:`score` scores every discriminator, the sender-side ones (conditional Bernoulli, Vegas,
NTG, NDG, Veno, 2-bit) included, against the simulator's ground truth — as
``cargo run --release --example discriminators`` does per BER (docs/reproductions/spectcp.md, Fig. 8). A
capture should be taken at or near the receiver (capture time = arrival time); the send time is
the segment's TSval in nanoseconds (tick rate estimated per direction), so without RFC 7323
timestamps the one-way trip times are all 0 and only Biaz and mBiaz, which use arrival times
alone, are informative. Before a discriminator has history (T_min, a mean), it answers
``congestion``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

NAMES = ("biaz", "mbiaz", "spike", "zigzag", "zbs")


def _frame(d: dict[str, Any]) -> Any:
    import pandas as pd

    f = pd.DataFrame({k: d[k] for k in ("time", "from", "seq", "missing", *NAMES)})
    f["time"] = f["time"] / 1e9
    return f


def classify(arrivals: Any) -> Any:
    """Gaps and verdicts from a frame of arrivals in arrival order: the ``receive`` trace of a
    simulated run, or any frame with ``time`` and ``sent`` (seconds), ``seq`` and ``len`` (bytes)
    and optionally ``flow``. Returns one row per gap: ``flow`` (if given), ``time`` (s), ``from``
    and ``seq`` (the missing bytes), ``missing`` (packets) and one column per discriminator."""
    import pandas as pd

    from rttlab import _core

    groups = (
        arrivals.groupby("flow", sort=True) if "flow" in arrivals.columns else [(None, arrivals)]
    )
    out = []
    for flow, a in groups:
        d = _core.classify_arrivals(
            (a["time"] * 1e9).round().astype("uint64").tolist(),
            a["seq"].astype("uint64").tolist(),
            a["len"].astype("uint32").tolist(),
            (a["sent"] * 1e9).round().astype("uint64").tolist(),
        )
        f = _frame(d)
        if flow is not None:
            f.insert(0, "flow", flow)
        out.append(f)
    return (
        pd.concat(out, ignore_index=True)
        if out
        else _frame({k: [] for k in ("time", "from", "seq", "missing", *NAMES)})
    )


def classify_capture(path: str | Path) -> Any:
    """Gaps and verdicts for every direction of every TCP connection with data in a pcap/pcapng
    capture: ``src``, ``dst``, ``ts_hz`` (TSval ticks per second used, null without timestamps)
    and the columns of :func:`classify`; ``time`` is seconds from the capture's first data
    segment. Raises ``rttlab.InputError`` naming the file when it cannot be read."""
    import pandas as pd

    from rttlab import _core

    out = []
    for d in _core.capture_loss_classes(str(path)):
        f = _frame(d["gaps"])
        f.insert(0, "ts_hz", d["ts_hz"])
        f.insert(0, "dst", d["dst"])
        f.insert(0, "src", d["src"])
        out.append(f)
    return (
        pd.concat(out, ignore_index=True)
        if out
        else pd.DataFrame(columns=["src", "dst", "ts_hz", "time", "from", "seq", "missing", *NAMES])
    )


def score(scenario: Any, *, set: Any = (), seed: int | None = None) -> Any:  # noqa: A002 - as rttlab.simulate
    """Every loss discriminator scored open loop on one simulated run of ``scenario`` (a
    :class:`rttlab.Scenario`, a file, or TOML text; ``set`` and ``seed`` as :func:`rttlab.simulate`
    takes them) against the run's ground truth (each drop's cause: queue overflow or RED =
    congestion, bit errors or scheduled losses = corruption). Sender side: every data drop the
    sender answered with a resend, classified at that resend from the RTT samples and window so
    far; receiver side: every segment missing at a gap the receiver saw. One row per flow, side and
    discriminator: the four counts (``congestion_as_corruption`` … ) and ``misprediction`` (share of
    all losses misclassified), ``congestion_missed`` (share of congestion losses called
    corruption), ``corruption_missed`` (the reverse); NaN without such losses. The run's seed also
    seeds the Bernoulli predictor (as the example does). Raises :class:`rttlab.ScenarioError`
    naming the file or key."""
    import pandas as pd

    from rttlab import _core
    from rttlab.sim.run import scenario_input

    text, overrides, path = scenario_input(scenario, set, seed)
    try:
        d = _core.score_discriminators(text, overrides)
    except _core.ScenarioError as e:
        if path is None:
            raise
        # An override's error names its --set argument, not the file.
        raise (e if str(e).startswith("--set ") else _core.ScenarioError(f"{path}: {e}")) from None
    f = pd.DataFrame(d)
    congestion = f["congestion_as_congestion"] + f["congestion_as_corruption"]
    corruption = f["corruption_as_corruption"] + f["corruption_as_congestion"]
    f["misprediction"] = (f["congestion_as_corruption"] + f["corruption_as_congestion"]) / (
        congestion + corruption
    ).where(lambda x: x > 0)
    f["congestion_missed"] = f["congestion_as_corruption"] / congestion.where(lambda x: x > 0)
    f["corruption_missed"] = f["corruption_as_congestion"] / corruption.where(lambda x: x > 0)
    return f
