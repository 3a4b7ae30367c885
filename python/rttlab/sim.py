"""Closed-loop simulation: run a scenario (TOML) in the Rust simulator, get DataFrames back.

    import rttlab
    result = rttlab.simulate("examples/scenarios/dumbbell-n10-droptail.toml", set=["simulation.duration=10s"])
    result.flows            # one row per flow: goodput_bps, retransmissions, timeouts, ...
    result.traces["rtt"]    # every RTT sample with the estimator's prediction before it

Times in traces are seconds (``time``, ``sample``, ``prediction``, ``srtt``, ``rto``); the loop
never leaves Rust, only columns cross.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import numpy as np
import pandas as pd

from rttlab import _core

if TYPE_CHECKING:
    from rttlab.scenario import Scenario

#: Version of the result layout; bumped when a column or key changes meaning.
SCHEMA = "rttlab.simulate/1"

_NS_COLUMNS = {"time_ns": "time", "sample_ns": "sample", "prediction_ns": "prediction", "srtt_ns": "srtt", "rto_ns": "rto"}


@dataclass
class Result:
    """What one simulation run produced."""

    name: str | None
    seed: int
    duration: float
    events: int
    event_hash: str
    aggregate_goodput_bps: float
    jain_index: float | None
    #: One row per flow.
    flows: pd.DataFrame
    #: One row per channel (one direction of a link); ``bottleneck`` names the data direction.
    channels: pd.DataFrame
    bottleneck: str
    #: window, rtt, retransmissions, drops, marks, queue — those the run kept.
    traces: dict[str, pd.DataFrame] = field(default_factory=dict)
    #: Scalar results beyond the common ones, stored as columns of the ``runs`` table (e.g. the
    #: MANET runs' prediction error and queue length, rttlab.manet); empty for rttlab's simulator.
    metrics: dict[str, float] = field(default_factory=dict)

    def summary(self) -> dict[str, Any]:
        """The versioned JSON summary (schema :data:`SCHEMA`, documented in docs/schema.md)."""
        b = self.channels.set_index("name").loc[self.bottleneck]
        flow_keys = [
            "flow",
            "goodput_bps",
            "throughput_bps",
            "offered_bps",
            "retransmissions",
            "retx_timeout",
            "retx_fast",
            "retx_spurious",
            "retx_necessary",
            "timeouts",
            "fast_recoveries",
            "ecn_reductions",
            "bytes_delivered",
        ]
        return {
            "schema": SCHEMA,
            "name": self.name,
            "seed": self.seed,
            "duration_s": self.duration,
            "events": self.events,
            "event_hash": self.event_hash,
            "aggregate_goodput_bps": self.aggregate_goodput_bps,
            "jain_index": self.jain_index,
            "bottleneck": {
                "name": self.bottleneck,
                "utilisation": float(b["utilisation"]),
                "drops_overflow": int(b["drops_overflow"]),
                "drops_aqm": int(b["drops_aqm"]),
                "drops_corruption": int(b["drops_corruption"]),
                "marks": int(b["marks"]),
            },
            # NaN (offered_bps of a bulk flow) is not JSON: null instead.
            "flows": [
                {k: (None if isinstance(v, float) and math.isnan(v) else v) for k, v in row.items()}
                for row in self.flows[flow_keys].to_dict(orient="records")
            ],
        }

    def plot(self, path: str | Path, max_flows: int = 10, max_points: int = 20_000) -> None:
        """Three panels over time: each flow's cwnd (segments), each flow's RTT samples and RTO,
        and the bottleneck queue (packets; RED's average too). Reads the traces only; at most
        ``max_flows`` flows are drawn, each thinned to ``max_points`` points."""
        import matplotlib

        missing = [t for t in ("window", "rtt", "queue") if t not in self.traces]
        if missing:
            raise ValueError(f"plot needs the {', '.join(missing)} trace(s); this run kept {', '.join(self.traces) or 'none'}")
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        fig, (cw, rtt, queue) = plt.subplots(3, 1, sharex=True, figsize=(11, 9), constrained_layout=True)
        window, samples = self.traces["window"], self.traces["rtt"]
        mss = 1448  # cwnd is drawn in segments of the default size; the axis says bytes otherwise
        flows = sorted(window["flow"].unique())[:max_flows]
        for f in flows:
            w = window[window["flow"] == f]
            w = w.iloc[:: max(1, len(w) // max_points)]
            cw.plot(w["time"], w["cwnd"] / mss, lw=0.8, label=f"flow {f}")
            s = samples[samples["flow"] == f]
            s = s.iloc[:: max(1, len(s) // max_points)]
            (line,) = rtt.plot(s["time"], s["sample"] * 1e3, ".", markersize=1.5)
            rtt.plot(w["time"], w["rto"] * 1e3, lw=0.8, color=line.get_color(), alpha=0.6)
        cw.set_ylabel(f"cwnd (segments of {mss} B)")
        rtt.set_ylabel("RTT sample · and RTO — (ms)")
        rtt.set_yscale("log")
        q = self.traces["queue"]
        b = self.channels.index[self.channels["name"] == self.bottleneck][0]
        q = q[q["channel"] == self.channels.loc[b, "channel"]]
        queue.plot(q["time"], q["packets"], lw=0.8, color="0.3", label="queue")
        if q["average"].notna().any():
            queue.plot(q["time"], q["average"], lw=1.2, color="tab:red", label="RED average")
        queue.set_ylabel(f"{self.bottleneck} (packets)")
        queue.set_xlabel("time (s)")
        if len(flows) <= 10:
            cw.legend(fontsize=7, ncol=5, loc="upper right")
        queue.legend(fontsize=7, loc="upper right")
        cw.set_title(f"{self.name or 'simulation'}: seed {self.seed}, {self.duration:g} s")
        fig.savefig(path)
        plt.close(fig)

    def write(self, directory: str | Path) -> list[Path]:
        """Write ``summary.json``, ``flows.parquet``, ``channels.parquet`` and one Parquet file
        per trace into ``directory`` (created if needed). Returns the paths written."""
        from rttlab.cli.common import clean

        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        (out / "summary.json").write_text(json.dumps(clean(self.summary()), indent=2) + "\n")
        written.append(out / "summary.json")
        for name, frame in {"flows": self.flows, "channels": self.channels, **self.traces}.items():
            path = out / f"{name}.parquet"
            frame.to_parquet(path, index=False)
            written.append(path)
        return written


def _frame(columns: Mapping[str, Any]) -> pd.DataFrame:
    data = {}
    for key, values in columns.items():
        if key in _NS_COLUMNS:
            arr = np.asarray(values)
            secs = arr.astype("float64") / 1e9
            if key == "prediction_ns":  # -1 marks "no prediction yet"
                secs[arr < 0] = np.nan
            data[_NS_COLUMNS[key]] = secs
        elif key in ("cause", "kind"):
            data[key] = pd.Categorical(values)
        else:
            data[key] = values
    return pd.DataFrame(data)


#: Trace names, as in ``Result.traces`` and ``--traces``.
TRACES = ("window", "rtt", "retransmissions", "drops", "marks", "queue")


def simulate(
    scenario: str | Path | Scenario,
    *,
    set: Iterable[str] | Mapping[str, Any] = (),  # noqa: A002 - mirrors the CLI's --set
    seed: int | None = None,
    traces: str | Iterable[str] = "all",
    progress: Callable[[float, float], Any] | None = None,
) -> Result:
    """Run a scenario: a :class:`rttlab.Scenario`, a file, or TOML text (a string containing a
    newline).

    ``set``: overrides applied before parsing, as ``key.path=value`` strings (read as by the CLI's
    ``--set``) or a mapping of paths to typed values (``{"topology.bottleneck.bandwidth": "20Mbps",
    "simulation.name": "123"}`` — a string stays a string). ``seed`` overrides ``simulation.seed``.
    ``traces``: which traces to keep — ``"all"`` (default), ``"none"`` (memory then stays bounded
    however long the run) or names from :data:`TRACES` (``"cwnd"`` and ``"retx"`` are accepted for
    ``window`` and ``retransmissions``), as a list or a comma-separated string; summaries do not
    depend on it. ``progress(simulated_s, end_s)`` is called every few milliseconds of work.
    Ctrl-C raises ``KeyboardInterrupt`` within milliseconds. Raises :class:`rttlab.ScenarioError`
    naming the offending key."""
    from rttlab.scenario import Scenario

    if isinstance(set, (str, bytes)):
        raise TypeError(f"set must be a list of 'key.path=value' strings or a mapping, got the string {set!r}: use set=[{set!r}]")
    path = None
    if isinstance(scenario, Scenario):
        path = scenario.source
        if isinstance(set, Mapping):
            scenario = scenario.with_(set)
            set = ()  # noqa: A001
        text = scenario.to_toml()
    elif isinstance(scenario, str) and "\n" in scenario:
        text = scenario
    else:
        path = Path(scenario)
        try:
            text = path.read_text()
        except OSError as e:
            raise _core.ScenarioError(f"cannot read scenario {path}: {e.strerror or e}") from None
        except UnicodeDecodeError as e:
            raise _core.ScenarioError(f"{path}: not UTF-8 text (invalid byte at offset {e.start})") from None
    if isinstance(set, Mapping):
        # Typed values: applied to the parsed table here, the whole table goes to the core.
        text = Scenario.from_toml(text, source=str(path) if path else None).with_(set).to_toml()
        set = ()  # noqa: A001
    overrides = [str(o) for o in set]
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise _core.ScenarioError(f"seed must be a non-negative integer, got {seed!r}")
        overrides.append(f"simulation.seed={seed}")
    keep = traces if isinstance(traces, str) else ",".join(traces)
    report = None if progress is None else (lambda now_ns, end_ns: progress(now_ns / 1e9, end_ns / 1e9))
    try:
        raw = _core.simulate(text, overrides, keep, report)
    except _core.ScenarioError as e:
        if path is None:
            raise
        raise _core.ScenarioError(f"{path}: {e}") from None
    flows = _frame(raw["flows"])
    flows["start"] = flows.pop("start_ns") / 1e9
    completed = flows.pop("completed_ns").astype("float64")
    flows["completed"] = np.where(completed < 0, np.nan, completed / 1e9)
    channels = _frame(raw["channels"])
    return Result(
        name=raw["name"],
        seed=int(raw["seed"]),
        duration=raw["duration_ns"] / 1e9,
        events=int(raw["events"]),
        event_hash=raw["event_hash"],
        aggregate_goodput_bps=float(raw["aggregate_goodput_bps"]),
        jain_index=raw["jain_index"],
        flows=flows,
        channels=channels,
        bottleneck=str(channels["name"].iloc[raw["bottleneck"]]),
        traces={name: _frame(cols) for name, cols in raw["traces"].items()},
    )


def components() -> list[dict[str, Any]]:
    """Every simulator component — queues, error models, applications, congestion controls — with
    its family, summary, source and parameters (name, kind, default, range, doc)."""
    return _core.components()

