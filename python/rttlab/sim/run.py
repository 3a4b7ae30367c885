"""Closed-loop simulation: run a scenario (TOML) in the Rust simulator, get its tables back.

    import rttlab
    result = rttlab.simulate("examples/scenarios/dumbbell-n10-droptail.toml", set=["simulation.duration=10s"])
    result.flows            # one row per flow: goodput_bps, retransmissions, timeouts, ...
    result.traces["rtt"]    # every RTT sample with the estimator's prediction before it

Times in traces are seconds (``time``, ``sample``, ``prediction``, ``srtt``, ``rto``); the loop
never leaves Rust, only columns cross: every table leaves the core as an Arrow record batch (the
Arrow C stream interface, no copy) in the schema defined once in ``src/sim/tables.rs``
(:func:`schema`, docs/schema.md). ``result.tables`` holds them as ``pyarrow.Table``; the pandas
frames ``result.flows``, ``result.channels`` and ``result.traces`` are made from them on first use.
"""

from __future__ import annotations

import json
import math
from collections.abc import Callable, Iterable, Mapping
from dataclasses import dataclass, field
from functools import cache, cached_property
from pathlib import Path
from typing import Any

import pandas as pd
import pyarrow as pa

from rttlab import _core
from rttlab.jsonable import clean
from rttlab.sim.scenario import Scenario
from rttlab.sim.versions import SCHEMA


@cache
def _schemas() -> dict[str, pa.Schema]:
    return {name: pa.schema(s) for name, s in _core.result_schemas()}


def schema(table: str) -> pa.Schema:
    """The Arrow schema of a result table (``flows``, ``channels`` or a trace name), as the core
    defines it (``src/sim/tables.rs``): column types, and each field's ``unit`` and ``doc`` in its
    metadata. docs/schema.md lists the same."""
    try:
        return _schemas()[table]
    except KeyError:
        raise ValueError(f"no result table {table!r} (known: {', '.join(_schemas())})") from None


def conform(table: str, columns: Mapping[str, Any]) -> pa.Table:
    """A table in the schema of ``table`` from the columns a simulator reports (lists or arrays);
    columns it does not report are null — never zero (ns-3's results, :mod:`rttlab.peers.ns3.dumbbell`)."""
    s = schema(table)
    unknown = set(columns) - set(s.names)
    if unknown:
        raise ValueError(f"{table}: no column(s) {', '.join(sorted(unknown))} in the result schema")
    n = len(next(iter(columns.values()))) if columns else 0
    arrays = [
        pa.array(columns[f.name], type=f.type, from_pandas=True)
        if f.name in columns
        else pa.nulls(n, f.type)
        for f in s
    ]
    return pa.Table.from_arrays(arrays, schema=s)


@dataclass(frozen=True, eq=False)
class Result:
    """What one simulation run produced (:func:`rttlab.simulate`). ``tables`` is the result as
    Arrow (flows, channels and the traces kept, in the schemas of :func:`schema`); ``flows``,
    ``channels`` and ``traces`` are the same as DataFrames, made on first use; the scalars are
    fields; :meth:`summary` is the versioned JSON."""

    name: str | None
    seed: int
    duration: float
    events: int
    event_hash: str
    aggregate_goodput_bps: float
    jain_index: float | None
    #: ``flows``, ``channels`` and the traces kept, as Arrow tables.
    tables: dict[str, pa.Table]
    #: The name of the channel that is the bottleneck's data direction.
    bottleneck: str
    #: Scalar results beyond the common ones, stored as columns of the ``runs`` table (e.g. the
    #: MANET runs' prediction error and queue length, rttlab.papers.nunes_experts.manet); empty for rttlab's simulator.
    metrics: dict[str, float] = field(default_factory=dict)
    #: For a run stopped early (Ctrl-C): the simulated time it was meant to reach, s. Its
    #: ``duration`` is then where it stopped, and every table and rate covers only that much.
    #: None for a run that completed.
    interrupted_end: float | None = None

    @cached_property
    def flows(self) -> pd.DataFrame:
        """One row per flow."""
        return self.tables["flows"].to_pandas()

    @cached_property
    def channels(self) -> pd.DataFrame:
        """One row per channel (one direction of a link); ``bottleneck`` names the data direction."""
        return self.tables["channels"].to_pandas()

    @cached_property
    def traces(self) -> dict[str, pd.DataFrame]:
        """window, rtt, retransmissions, drops, marks, queue and the per-packet arrival, quench,
        receive — those the run kept."""
        return {
            k: self.tables[k].to_pandas() for k in (*TRACES, *PER_PACKET_TRACES) if k in self.tables
        }

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
        doc = {
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
        if self.interrupted_end is not None:
            # Only in a partial result, so a completed run's summary is unchanged.
            doc["interrupted"] = {"at_s": self.duration, "end_s": self.interrupted_end}
        return doc

    def plot(self, path: str | Path, max_flows: int = 10, max_points: int = 20_000) -> None:
        """Three panels over time: each flow's cwnd (segments), each flow's RTT samples and RTO,
        and the bottleneck queue (packets; RED's average too). Reads the traces only; at most
        ``max_flows`` flows are drawn, each thinned to ``max_points`` points."""
        import matplotlib

        missing = [t for t in ("window", "rtt", "queue") if t not in self.traces]
        if missing:
            raise ValueError(
                f"plot needs the {', '.join(missing)} trace(s); this run kept {', '.join(self.traces) or 'none'}"
            )
        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        from rttlab.palette import EXTENDED, SAMPLE_GREY, colour

        fig, (cw, rtt, queue) = plt.subplots(
            3, 1, sharex=True, figsize=(11, 9), constrained_layout=True
        )
        window, samples = self.traces["window"], self.traces["rtt"]
        mss = 1448  # cwnd is drawn in segments of the default size; the axis says bytes otherwise
        flows = sorted(window["flow"].unique())[:max_flows]
        # Flows running different congestion controls take their control's fixed colour
        # (rttlab.palette); flows that all run the same one are told apart by flow.
        ccs = dict(zip(self.flows["flow"], self.flows["cc"])) if "cc" in self.flows else {}
        by_cc = len({ccs.get(f) for f in flows}) > 1
        labelled: set[str] = set()
        for i, f in enumerate(flows):
            c = colour(str(ccs[f])) if by_cc else EXTENDED[i % len(EXTENDED)]
            name = str(ccs[f]) if by_cc else f"flow {f}"
            w = window[window["flow"] == f]
            w = w.iloc[:: max(1, len(w) // max_points)]
            cw.plot(
                w["time"],
                w["cwnd"] / mss,
                lw=0.8,
                color=c,
                label=name if name not in labelled else None,
            )
            labelled.add(name)
            s = samples[samples["flow"] == f]
            s = s.iloc[:: max(1, len(s) // max_points)]
            rtt.plot(s["time"], s["sample"] * 1e3, ".", markersize=1.5, color=SAMPLE_GREY, zorder=1)
            rtt.plot(
                w["time"],
                w["rto"] * 1e3,
                lw=0.8,
                color=c,
                alpha=0.8,
                zorder=2,
                drawstyle="steps-post",
            )
        cw.set_ylabel(f"cwnd ({mss}-B segments)")
        rtt.set_ylabel("RTT (dots), RTO (ms)")
        rtt.set_yscale("log")
        q = self.traces["queue"]
        b = self.channels.index[self.channels["name"] == self.bottleneck][0]
        q = q[q["channel"] == self.channels.loc[b, "channel"]]
        queue.plot(q["time"], q["packets"], lw=0.8, color="0.2", label="queue")
        if q["average"].notna().any():
            queue.plot(q["time"], q["average"], lw=1.2, color=EXTENDED[1], label="RED average")
        queue.set_ylabel(f"queue at {self.bottleneck} (packets)")
        queue.set_xlabel("time (s)")
        if len(labelled) <= 10:
            cw.legend(fontsize=7, ncol=5, loc="upper right")
        queue.legend(fontsize=7, loc="upper right")
        cw.set_title(f"{self.name or 'simulation'}: seed {self.seed}, {self.duration:g} s")
        fig.savefig(path)
        plt.close(fig)

    def write(self, directory: str | Path) -> list[Path]:
        """Write ``summary.json``, ``flows.parquet``, ``channels.parquet`` and one Parquet file
        per trace into ``directory`` (created if needed). Returns the paths written."""
        out = Path(directory)
        out.mkdir(parents=True, exist_ok=True)
        written = []
        (out / "summary.json").write_text(json.dumps(clean(self.summary()), indent=2) + "\n")
        written.append(out / "summary.json")
        import pyarrow.parquet as pq

        for name, table in self.tables.items():
            path = out / f"{name}.parquet"
            pq.write_table(table, path)
            written.append(path)
        return written


#: Trace names, as in ``Result.traces`` and ``--traces``: what ``"all"`` keeps.
TRACES = ("window", "rtt", "retransmissions", "drops", "marks", "queue")
#: Per-packet traces, kept only when named (``"all,arrival,quench"``, ``"all,receive"``):
#: ``arrival`` has one row per packet offered to a monitored queue, ``quench`` one per source
#: quench sent, ``receive`` one per data packet that reached its receiver (what receiver-side loss
#: discriminators read).
PER_PACKET_TRACES = ("arrival", "quench", "receive")


def scenario_input(
    scenario: Any, set: Iterable[str] | Mapping[str, Any] = (), seed: int | None = None
) -> tuple[str, list[str], Path | None]:  # noqa: A002
    """What the core runs for ``scenario`` (a :class:`rttlab.Scenario`, a file, or TOML text), its
    ``set`` overrides and ``seed`` (as :func:`simulate` takes them): the TOML text, the override
    strings, and the file to name in errors (None for text)."""
    if isinstance(set, (str, bytes)):
        raise TypeError(
            f"set must be a list of 'key.path=value' strings or a mapping, got the string {set!r}: use set=[{set!r}]"
        )
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
            raise _core.ScenarioError(
                f"{path}: not UTF-8 text (invalid byte at offset {e.start})"
            ) from None
    if isinstance(set, Mapping):
        # Typed values: applied to the parsed table here, the whole table goes to the core.
        text = Scenario.from_toml(text, source=str(path) if path else None).with_(set).to_toml()
        set = ()  # noqa: A001
    overrides = [str(o) for o in set]
    if seed is not None:
        if isinstance(seed, bool) or not isinstance(seed, int) or seed < 0:
            raise _core.ScenarioError(f"seed must be a non-negative integer, got {seed!r}")
        overrides.append(f"simulation.seed={seed}")
    return text, overrides, path


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
    however long the run) or names from :data:`TRACES` and :data:`PER_PACKET_TRACES` (``"cwnd"``
    and ``"retx"`` are accepted for ``window`` and ``retransmissions``; ``"all"`` keeps
    :data:`TRACES` only, ``"all,arrival,quench"`` or ``"all,receive"`` add per-packet ones), as a
    list or a comma-separated string; summaries do not
    depend on it. ``progress(simulated_s, end_s)`` is called every few milliseconds of work.
    Ctrl-C raises :class:`Interrupted` (a ``KeyboardInterrupt``) within milliseconds, holding the
    partial result. Raises :class:`rttlab.ScenarioError`
    naming the offending key."""
    text, overrides, path = scenario_input(scenario, set, seed)
    keep = traces if isinstance(traces, str) else ",".join(traces)
    report = (
        None if progress is None else (lambda now_ns, end_ns: progress(now_ns / 1e9, end_ns / 1e9))
    )
    try:
        raw = _core.simulate(text, overrides, keep, report)
    except _core.ScenarioError as e:
        if path is None:
            raise
        # An override's error names its --set argument, not the file.
        raise (e if str(e).startswith("--set ") else _core.ScenarioError(f"{path}: {e}")) from None
    # The core's tables cross as Arrow streams: pa.table takes their buffers as they are.
    tables = {"flows": pa.table(raw["flows"]), "channels": pa.table(raw["channels"])}
    tables.update((name, pa.table(t)) for name, t in raw["traces"].items())
    names = tables["channels"].column("name")
    stopped = raw.get("interrupted")
    result = Result(
        interrupted_end=stopped["end_ns"] / 1e9 if stopped else None,
        name=raw["name"],
        seed=int(raw["seed"]),
        duration=raw["duration_ns"] / 1e9,
        events=int(raw["events"]),
        event_hash=raw["event_hash"],
        aggregate_goodput_bps=float(raw["aggregate_goodput_bps"]),
        jain_index=raw["jain_index"],
        tables=tables,
        bottleneck=str(names[raw["bottleneck"]]),
    )
    if stopped:
        error = stopped["error"]
        if isinstance(error, KeyboardInterrupt):
            raise Interrupted(result) from None
        raise error
    return result


class Interrupted(KeyboardInterrupt):
    """Ctrl-C during :func:`simulate`: a ``KeyboardInterrupt`` that carries what was simulated
    until then (``result``, a :class:`Result` whose ``duration`` is where the run stopped and
    ``interrupted_end`` where it was meant to end)::

        try:
            result = rttlab.simulate(path)
        except rttlab.sim.Interrupted as stop:
            result = stop.result  # partial
    """

    def __init__(self, result: Result) -> None:
        super().__init__(
            f"simulation interrupted at {result.duration:g} s of {result.interrupted_end:g} s"
        )
        self.result = result


def components() -> list[dict[str, Any]]:
    """Every simulator component — queues, error models, applications, agents, congestion
    controls, loss recovery, RTO policies, spurious-timeout detection and response, loss
    discriminators — with its
    family, summary, source and parameters (name, kind, default, range, doc): ``_core.catalogue()``
    without the estimators, which ``rttlab.estimators.catalog()`` lists."""
    keys = ("name", "kind", "default", "range", "doc")
    return [
        {
            "name": e["name"],
            "summary": e["summary"],
            "source": e["source"],
            "params": [{k: p[k] for k in keys} for p in e["params"]],
            "family": e["family"],
        }
        for e in _core.catalogue()
        if e["family"] != "estimator"
    ]
