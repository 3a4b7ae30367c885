"""Sweeps: a base scenario × a grid and/or zipped parameter lists × seeds, run on Dask.

A sweep file (docs/experiments.md)::

    [sweep]
    name = "bw"
    scenario = "../examples/scenarios/dumbbell-n10-droptail.toml"   # relative to this file
    seeds = [1, 2, 3]            # or: replications = 24  (seeds 1..24)
    level = 0.95                 # confidence level of the summaries
    traces = ["queue"]           # traces kept as Parquet beside the store (default none)

    [set]                        # applied to every run, typed TOML values
    "simulation.duration" = "10s"

    [grid]                       # every combination
    "topology.bottleneck.bandwidth" = ["5Mbps", "10Mbps"]

    [zip]                        # lists of one length, varied together (then crossed with the grid)
    "topology.bottleneck.delay" = ["10ms", "40ms"]
    "flows.0.count" = [1, 4]

``simulator`` may appear in ``[grid]``/``[zip]`` or ``[sweep]`` (``"rttlab"``, ``"ns3"``, any
engine of :mod:`rttlab.experiments.simulators`): it selects the engine instead of setting a
scenario key.

Instead of a scenario, a sweep may be an evaluate job (an ``[evaluate]`` table: estimators ×
parameters × trace files, :mod:`rttlab.experiments.evaluate_job`); its runs are replays (simulator
``"replay"``) whose scores go to the store's ``scores`` table.

The client submits one Dask task per run not yet in the store and writes every result the moment
it arrives (single writer); see :func:`execute`.
"""

from __future__ import annotations

import dataclasses
import itertools
import os
import time
import tomllib
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from rttlab import __version__, _core
from rttlab.experiments import simulators
from rttlab.experiments.evaluate_job import SCHEMA as EVALUATE_SCHEMA
from rttlab.experiments.evaluate_job import run_job, runs_of
from rttlab.experiments.runs import RunSpec
from rttlab.experiments.store import param_types
from rttlab.sim import versions
from rttlab.sim.scenario import Scenario
from rttlab.sim.versions import SCENARIO_SCHEMA, SCHEMA


class SweepError(Exception):
    """The sweep file is invalid: the message names the file and the key."""


@dataclass
class Sweep:
    name: str
    base: Scenario | None
    runs: list[RunSpec]
    level: float = 0.95
    traces: list[str] = field(default_factory=list)
    #: The swept parameter names, in file order (the summary's default ``--by``).
    keys: list[str] = field(default_factory=list)

    @classmethod
    def load(cls, path: str | Path) -> Sweep:
        p = Path(path)
        from rttlab.sim.scenario import toml_error

        text = ""
        try:
            text = p.read_text()
            doc = tomllib.loads(text)
        except OSError as e:
            raise SweepError(f"cannot read sweep {p}: {e.strerror or e}") from None
        except tomllib.TOMLDecodeError as e:
            raise SweepError(f"{p}: not valid TOML: {toml_error(text, e)}") from None
        return cls.from_dict(doc, base_dir=p.parent, source=str(p))

    @classmethod
    def from_dict(
        cls, doc: Mapping[str, Any], base_dir: Path = Path("."), source: str = "sweep"
    ) -> Sweep:
        def bad(key: str, reason: str) -> SweepError:
            return SweepError(f"{source}: {key}: {reason}")

        unknown = set(doc) - {"sweep", "set", "grid", "zip", "scenario", "evaluate"}
        if unknown:
            raise bad(
                sorted(unknown)[0],
                "unknown table (expected [sweep], [set], [grid], [zip], [scenario] or [evaluate])",
            )
        head = dict(doc.get("sweep", {}))
        if "evaluate" in doc:
            return cls._evaluate_job(doc, head, base_dir, source, bad)
        allowed = {"name", "scenario", "seeds", "replications", "level", "traces", "simulator"}
        for k in head:
            if k not in allowed:
                raise bad(
                    f"sweep.{k}", f"unknown key (expected one of {', '.join(sorted(allowed))})"
                )
        # The base scenario: a file (relative to the sweep file) or an inline [scenario] table.
        if "scenario" in doc and "scenario" in head:
            raise bad("scenario", "give sweep.scenario (a file) or a [scenario] table, not both")
        default_sim = head.get("simulator", simulators.DEFAULT)
        try:
            engine = simulators.get(default_sim)
        except KeyError as e:
            raise bad("sweep.simulator", e.args[0]) from None
        # An engine with scenarios of its own (e.g. ns-3's MANETs) reads them itself.
        kind: Any = engine.scenario or Scenario
        if "scenario" in doc:
            base = kind(dict(doc["scenario"]), source=f"{source} [scenario]")
        elif "scenario" in head:
            if not isinstance(head["scenario"], str):
                raise bad("sweep.scenario", "expected a file name")
            path = Path(head["scenario"])
            path = path if path.is_absolute() else base_dir / path
            try:
                text = path.read_text()
            except OSError as e:
                raise _core.ScenarioError(
                    f"cannot read scenario {path}: {e.strerror or e}"
                ) from None
            base = kind.from_toml(text, source=str(path))
        else:
            raise bad("sweep.scenario", "missing: name a scenario file or add a [scenario] table")
        name, level = _name_and_level(head, source, bad)
        traces = head.get("traces", [])
        known_traces = {
            "window",
            "rtt",
            "retransmissions",
            "drops",
            "marks",
            "queue",
            "arrival",
            "quench",
            "receive",
        }
        if not isinstance(traces, list) or any(t not in known_traces for t in traces):
            raise bad("sweep.traces", f"expected a list of {', '.join(sorted(known_traces))}")
        if "seeds" in head and "replications" in head:
            raise bad("sweep.seeds", "give seeds or replications, not both")
        if "seeds" in head:
            seeds = head["seeds"]
            if (
                not isinstance(seeds, list)
                or not seeds
                or any(isinstance(s, bool) or not isinstance(s, int) or s < 0 for s in seeds)
            ):
                raise bad("sweep.seeds", "expected a non-empty list of non-negative integers")
        elif "replications" in head:
            n = head["replications"]
            if isinstance(n, bool) or not isinstance(n, int) or n < 1:
                raise bad("sweep.replications", f"expected a positive integer, got {n!r}")
            seeds = list(range(1, n + 1))
        else:
            seeds = [None]  # the scenario's own seed
        common = dict(doc.get("set", {}))
        grid = dict(doc.get("grid", {}))
        zipped = dict(doc.get("zip", {}))
        for table, values in (("grid", grid), ("zip", zipped)):
            for k, v in values.items():
                if not isinstance(v, list) or not v:
                    raise bad(f"{table}.{k}", "expected a non-empty list of values")
        lengths = {len(v) for v in zipped.values()}
        if len(lengths) > 1:
            raise bad(
                "zip",
                f"lists of different lengths ({', '.join(f'{k}: {len(v)}' for k, v in zipped.items())})",
            )
        for k in set(grid) & set(zipped):
            raise bad(f"zip.{k}", "also in [grid]")
        points: list[dict[str, Any]] = []
        zip_rows = [dict(zip(zipped, vals)) for vals in zip(*zipped.values())] if zipped else [{}]
        for combo in itertools.product(*grid.values()) if grid else [()]:
            g = dict(zip(grid, combo))
            for z in zip_rows:
                points.append({**g, **z})
        keys = [*grid, *zipped]
        runs: list[RunSpec] = []
        seen: set[str] = set()
        base_with_common = base.with_(common)
        for point in points:
            sim = point.get("simulator", default_sim)
            try:
                point_engine = simulators.get(sim)
            except KeyError as e:
                raise bad("simulator", e.args[0]) from None
            if point_engine.own_scenarios != engine.own_scenarios:
                own = point_engine if point_engine.own_scenarios else engine
                raise bad(
                    "simulator",
                    f"{own.name!r} has scenarios of its own: set it in [sweep], not in [grid]/[zip]",
                )
            # A table before the keys inside it ("flows" before "flows.0.tcp.rto"), whichever of
            # [grid]/[zip] names it: the deeper key edits the table the shallower one set.
            overrides = {
                k: v
                for k, v in sorted(point.items(), key=lambda kv: kv[0].count("."))
                if k != "simulator"
            }
            for seed in seeds:
                s = base_with_common.with_(overrides)
                if seed is not None:
                    s = s.with_seed(seed)
                try:
                    h = point_engine.run_hash(s)
                except _core.ScenarioError as e:
                    where = ", ".join(f"{k}={v!r}" for k, v in point.items())
                    raise SweepError(
                        f"{source}: run ({where}{', ' if where else ''}seed={s.get('simulation.seed', 1)}): {e}"
                    ) from None
                if h in seen:
                    continue  # two points naming the same run (e.g. a parameter repeated)
                seen.add(h)
                params = {**point, "simulator": sim} if "simulator" in point else dict(point)
                runs.append(RunSpec(params=params, scenario=s, simulator=sim, hash=h))
        return cls(
            name=name, base=base, runs=runs, level=float(level), traces=list(traces), keys=keys
        )

    @classmethod
    def _evaluate_job(
        cls,
        doc: Mapping[str, Any],
        head: dict[str, Any],
        base_dir: Path,
        source: str,
        bad: Callable[[str, str], SweepError],
    ) -> Sweep:
        for k in head:
            if k not in ("name", "level"):
                raise bad(
                    f"sweep.{k}",
                    "an evaluate job takes name and level here; its inputs, estimators and settings go in [evaluate]",
                )
        if "scenario" in doc:
            raise bad("scenario", "a sweep is a scenario or an evaluate job, not both")
        name, level = _name_and_level(head, source, bad)
        for table in ("grid", "zip"):
            for k, v in dict(doc.get(table, {})).items():
                if not isinstance(v, list) or not v:
                    raise bad(f"{table}.{k}", "expected a non-empty list of values")
        zipped = dict(doc.get("zip", {}))
        if len({len(v) for v in zipped.values()}) > 1:
            raise bad(
                "zip",
                f"lists of different lengths ({', '.join(f'{k}: {len(v)}' for k, v in zipped.items())})",
            )
        runs, keys = runs_of(doc, base_dir, source, bad)
        return cls(name=name, base=None, runs=runs, level=float(level), keys=keys)


# ---- the task (runs on a worker) --------------------------------------------------------------


def run_one(task: Mapping[str, Any]) -> dict[str, Any]:
    """Run one scenario and return what the store keeps. Never raises for a failing run: the
    error (kind, one-line message) comes back as the outcome, so one bad point cannot stop a sweep.

    What the client already knows (the scenario's TOML, seed, name, simulator) does not travel
    back: :func:`outcome_of` joins it to the result (less to serialise on both sides)."""
    import socket

    out: dict[str, Any] = {
        "hash": task["hash"],
        "rttlab_version": __version__,
        "result_schema": SCHEMA,
        # The form the run's key was computed under (the client's: see task_of).
        "scenario_schema": task.get("scenario_schema", SCENARIO_SCHEMA),
        "worker": f"{socket.gethostname()}:{os.getpid()}",
    }
    wall0, cpu0 = time.perf_counter(), time.thread_time()
    try:
        if task.get("job") is not None:  # an evaluate job: estimators replayed over a trace
            out["result_schema"], out["scenario_schema"] = EVALUATE_SCHEMA, None
            out["simulator_version"] = __version__
            out.update(run_job(task["job"]))
            out["scores"] = to_ipc(out["scores"], hash_=task["hash"])
        else:
            engine = simulators.get(task["simulator"])
            result = engine.run(task["scenario"], tuple(task.get("traces", ())))
            out["simulator_version"] = engine.version()
            out.update(result_scalars(result))
            out["metrics"] = dict(result.metrics)
            # The core's Arrow tables, as Arrow IPC bytes: Dask ships bytes without pickling,
            # and the client (the only writer, the bottleneck of a sweep of short runs) hands
            # them to DuckDB without converting.
            out["flows"] = to_ipc(result.tables["flows"], hash_=task["hash"])
            out["channels"] = to_ipc(result.tables["channels"], hash_=task["hash"])
            out["traces"] = {
                k: to_ipc(v, keep_metadata=True)
                for k, v in result.tables.items()
                if k in task.get("traces", ())
            }
        out["status"] = "ok"
    except Exception as e:  # noqa: BLE001 - every failure is data about the run
        out["status"] = "error"
        out["error_kind"] = type(e).__name__
        out["error"] = (str(e).strip().splitlines() or [""])[0][:2000]
    out["cpu_s"] = time.thread_time() - cpu0
    out["wall_s"] = time.perf_counter() - wall0
    return out


def to_ipc(table: Any, keep_metadata: bool = False, hash_: str | None = None) -> bytes:
    """An Arrow table as IPC stream bytes, by default without its schema's documentation
    (flows and channels travel per run; the store's tables do not need it); with ``hash_``,
    the run's key as a first column ``hash``, as the store keeps it (added here, on the worker,
    so the client, the sweep's single writer, has less to do per run)."""
    import pyarrow as pa

    if not keep_metadata or hash_ is not None:
        columns, names = table.columns, table.column_names
        if hash_ is not None:
            columns, names = (
                [pa.array([hash_] * table.num_rows, pa.string()), *columns],
                ["hash", *names],
            )
        table = (
            pa.Table.from_arrays(columns, names=names)
            if not keep_metadata
            else pa.Table.from_arrays(columns, names=names, metadata=table.schema.metadata)
        )
    sink = pa.BufferOutputStream()
    with pa.ipc.new_stream(sink, table.schema) as w:
        w.write_table(table)
    return sink.getvalue().to_pybytes()


def result_scalars(result: Any) -> dict[str, Any]:
    """The scalar results of a run, as the ``runs`` table keeps them; what a simulator does not
    report (null, e.g. ns-3's per-flow retransmissions) is NULL, never zero. Computed on the
    Arrow tables (no pandas on the worker's hot path)."""
    import math

    import pyarrow.compute as pc

    def num(x: Any, kind: type = float) -> Any:
        if x is None:
            return None
        x = float(x)
        return None if math.isnan(x) else kind(x)

    flows, channels = result.tables["flows"], result.tables["channels"]
    b = channels.column("name").to_pylist().index(result.bottleneck)

    def at(col: str) -> Any:
        return channels.column(col)[b].as_py()

    def total(col: str) -> Any:
        c = flows.column(col)
        return None if c.null_count else num(pc.sum(c).as_py() or 0, int)

    goodput = (
        pc.min_max(flows.column("goodput_bps")).as_py()
        if flows.num_rows
        else {"min": None, "max": None}
    )
    overflow, aqm = at("drops_overflow"), at("drops_aqm")
    jain = result.jain_index
    return {
        "duration_s": float(result.duration),
        "events": int(result.events),
        "event_hash": result.event_hash or None,
        "goodput_bps": float(result.aggregate_goodput_bps),
        "jain_index": None if jain is None else num(jain),
        "utilisation": num(at("utilisation")),
        "drops": None if overflow is None or aqm is None else int(overflow + aqm),
        "marks": num(at("marks"), int),
        "retransmissions": total("retransmissions"),
        "timeouts": total("timeouts"),
        "min_flow_goodput_bps": num(goodput["min"]),
        "max_flow_goodput_bps": num(goodput["max"]),
    }


def task_of(sweep: Sweep, run: RunSpec) -> dict[str, Any]:
    if run.job is not None:
        import json

        return {
            "hash": run.hash,
            "simulator": run.simulator,
            "seed": None,
            "scenario": json.dumps(run.job, sort_keys=True),
            "name": run.job["input"],
            "job": run.job,
        }
    return {
        "hash": run.hash,
        "simulator": run.simulator,
        "seed": run.scenario.seed,
        "scenario": run.scenario.canonical_toml,
        "name": run.scenario.name,
        "traces": list(sweep.traces),
        "scenario_schema": versions.SCENARIO_SCHEMA,
    }


#: What the store keeps of a task itself (the rest of a run's row comes from the worker).
ECHOED = ("hash", "simulator", "seed", "scenario", "name")


def outcome_of(task: Mapping[str, Any], result: Any) -> dict[str, Any]:
    """A run's outcome as the store takes it: the task's own fields (:data:`ECHOED`) and the
    worker's result, or for a task that raised instead of returning (e.g. ``KilledWorker``: the
    run kept killing its worker) that exception as the run's error."""
    out = {k: task[k] for k in ECHOED}
    if isinstance(result, BaseException):
        out.update(
            status="error",
            error_kind=type(result).__name__,
            error=(str(result).splitlines() or [""])[0][:2000],
        )
    else:
        out.update(result)
    return out


# ---- the client --------------------------------------------------------------------------------


def as_stored(sweep: Sweep, store: Any, stored: set[str] | None = None) -> Sweep:
    """``sweep`` with each run under the key its result is stored under, the one lookup every
    reader of a store by computed hash goes through: a run's :attr:`~RunSpec.hash`, or — when
    that is not among ``stored`` (default: every run in ``store``) but the key the same run had
    under canonical form 1 is (a store written before form 2, docs/experiments.md "Canonical
    form") — that key. Memberships, skips and joins then use the stored key, so a store written
    before resumes with nothing to run. The form-1 key is computed only for runs whose key is not
    stored, and only when ``store`` holds runs keyed under form 1 (one query otherwise)."""
    if stored is None:
        stored = store.stored_hashes()
    missing = [
        r for r in sweep.runs if r.hash not in stored and hasattr(type(r.scenario), "form1_hash")
    ]
    if not missing:
        return sweep
    earlier = store.stored_hashes(scenario_schema=1) & stored
    if not earlier:
        return sweep
    keys = {}
    for r in missing:
        old = simulators.get(r.simulator).key(r.scenario.form1_hash)
        if old in earlier:
            keys[r.hash] = old
    if not keys:
        return sweep
    return dataclasses.replace(
        sweep,
        runs=[
            dataclasses.replace(r, hash=keys[r.hash]) if r.hash in keys else r for r in sweep.runs
        ],
    )


def planned(sweep: Sweep, store: Any, retry_failed: bool = False) -> tuple[Sweep, set[str]]:
    """The sweep under its stored keys (:func:`as_stored`) and the keys that count as stored:
    every run in ``store``, less those stored as failed when they are to run again (a failed
    run is run again under its current key)."""
    stored = store.stored_hashes()
    if retry_failed:
        stored -= store.stored_hashes(status="error")
    return as_stored(sweep, store, stored), stored


@dataclass
class Outcome:
    """What :func:`execute` did."""

    total: int
    skipped: int = 0
    ok: int = 0
    failed: int = 0
    interrupted: bool = False
    wall_s: float = 0.0
    #: Time the client spent writing results to the store, and the runs' own wall time on the workers.
    store_s: float = 0.0
    task_wall_s: float = 0.0
    #: The client's CPU time (its main thread) in those writes, and how many transactions they took.
    store_cpu_s: float = 0.0
    commits: int = 0
    errors: list[tuple[str, str, str]] = field(default_factory=list)  # (hash, kind, message)

    @property
    def ran(self) -> int:
        return self.ok + self.failed


def start_client(scheduler: str | None = None, workers: int | None = None):
    """A Dask client: to ``scheduler`` (an address such as ``tcp://host:8786`` or a scheduler
    file path) or to a new ``LocalCluster`` of ``workers`` single-threaded processes (default:
    one per core)."""
    from distributed import Client, LocalCluster

    if scheduler:
        if os.path.isfile(scheduler):
            return Client(scheduler_file=scheduler), None
        return Client(scheduler), None
    import dask

    n = workers or os.cpu_count() or 1
    # One process per worker, one thread each: the core releases the GIL, but a process per core
    # keeps each run's memory apart and matches a cluster's layout. No dashboard (needs bokeh).
    # Dask's housekeeping timers are slowed on the machine it shares with the runs: the
    # statistical profiler (a stack sample every 10 ms), the event-loop tick monitor (20 ms),
    # the memory and system monitors cost a worker several ms of CPU per 50 ms run
    # (BENCHMARKS.md). Workers read this config when they start; a cluster of your own keeps its own.
    quiet = {
        "distributed.worker.profile.enabled": False,
        "distributed.admin.tick.interval": "1s",
        "distributed.admin.system-monitor.interval": "2s",
        "distributed.worker.memory.monitor-interval": "1s",
        # Work stealing moves tasks queued on a busy worker to an idle one; here the scheduler
        # queues the runs itself and hands each single-threaded worker at most two at a time
        # (worker-saturation), so there is nothing to steal — only its per-task bookkeeping
        # in the scheduler, which runs in this (the client's) process.
        "distributed.scheduler.work-stealing": False,
    }
    with dask.config.set(quiet):
        cluster = LocalCluster(
            n_workers=n,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
            silence_logs=40,
        )
    return Client(cluster, direct_to_workers=True), cluster


#: Longest a result that reached the client waits for its transaction: what arrives within this
#: window is committed together (one DuckDB commit per window, not one per run).
COMMIT_EVERY_S = 0.5


def check_engines(runs: Sequence[RunSpec]) -> None:
    """:class:`SweepError` naming the first engine ``runs`` need that cannot run on this machine
    and what to install (before any run, instead of every run of it stored as failed)."""
    for name in sorted({r.simulator for r in runs}):
        try:
            engine = simulators.get(name)
        except KeyError:  # not a simulation engine (an evaluate sweep's replays)
            continue
        why = engine.missing() if engine.missing else None
        if why:
            need = sum(r.simulator == name for r in runs)
            raise SweepError(f"simulator {name}: {why} ({need} run{'s' * (need != 1)} need it)")


def execute(
    sweep: Sweep,
    store: Any,
    client: Any,
    *,
    on_result: Callable[[Outcome, dict[str, Any], bool], None] | None = None,
    retry_failed: bool = False,
) -> Outcome:
    """Run every run of ``sweep`` not yet in ``store`` on ``client``'s cluster.

    Outcomes are written to the store as they finish (this client is the only writer), those
    that finish within :data:`COMMIT_EVERY_S` of each other fetched in one gather and written in
    one transaction; then ``on_result(outcome, run_outcome, stored)`` is called (progress
    display). Ctrl-C or an error in the client fetches and commits what has finished before
    returning or raising; only the client process itself dying can lose that last half second,
    which a rerun computes again. A run whose
    worker dies is resubmitted by the scheduler to another worker; if it keeps killing workers
    it is stored as failed. Ctrl-C cancels what is pending and returns with ``interrupted``
    set; everything stored stays, and a rerun resumes from there."""
    from distributed import as_completed

    t0 = time.perf_counter()
    store.prepare_params(param_types([r.params for r in sweep.runs]))
    sweep, stored = planned(sweep, store, retry_failed)
    if retry_failed:  # this sweep's failed runs only: another sweep's in the same store stay
        failed = store.stored_hashes(status="error") & {r.hash for r in sweep.runs}
        if failed:
            store.db.execute(
                f"DELETE FROM runs WHERE hash IN ({', '.join('?' for _ in failed)})", list(failed)
            )
    todo = [r for r in sweep.runs if r.hash not in stored]
    check_engines(todo)
    result = Outcome(total=len(sweep.runs), skipped=len(sweep.runs) - len(todo))
    store.add_memberships(sweep.name, [(r.hash, r.params) for r in sweep.runs if r.hash in stored])
    by_hash = {r.hash: r for r in todo}
    pending: list[tuple[RunSpec, dict[str, Any]]] = []
    last_commit = time.perf_counter()

    def commit() -> None:
        nonlocal last_commit
        if pending:
            w0, c0 = time.perf_counter(), time.thread_time()
            wrote = store.write_runs(sweep.name, [(run.params, out) for run, out in pending])
            result.store_s += time.perf_counter() - w0
            result.store_cpu_s += time.thread_time() - c0
            result.commits += 1
            items = list(pending)
            pending.clear()
            for (run, out), w in zip(items, wrote):
                result.task_wall_s += out.get("wall_s") or 0.0
                if out["status"] == "ok":
                    result.ok += 1
                else:
                    result.failed += 1
                    result.errors.append(
                        (run.hash, out.get("error_kind", ""), out.get("error", ""))
                    )
                if on_result:
                    on_result(result, out, w)
        last_commit = time.perf_counter()

    futures: list[Any] = []
    finished: list[Any] = []  # futures done on the cluster, their results not yet fetched

    def fetch() -> None:
        """Fetch the finished runs' results in one gather (one request per worker holding
        some, not one per run: a fetch costs the client, the scheduler and the worker ~1 ms
        of CPU each, as much as storing a run) and queue them for the store."""
        ready = {f.key: f for f in finished if f.status == "finished"}
        # "skip": a result lost with its worker meanwhile is computed again (gather waits for
        # it); one that then fails comes back as None and is stored with the task's error.
        got = client.gather(ready, errors="skip") if ready else {}
        by_key = {k: v for k, v in got.items() if v is not None}
        while finished:  # popped one by one: an interrupted fetch never queues a run twice
            future = finished.pop()
            run = by_hash[future.key.removeprefix("rttlab-run-")]
            if future.key in by_key:
                out = by_key[future.key]
            elif future.status in (
                "error",
                "cancelled",
            ):  # e.g. KilledWorker: the run keeps killing its worker
                try:
                    out = future.exception()
                except Exception as e:  # noqa: BLE001 - cancelled: stored as the run's error
                    out = e
            else:  # finished, then lost with its worker before the fetch: computed again, back later
                arrived.add(future)
                continue
            pending.append((run, outcome_of(task_of(sweep, run), out)))
            future.release()

    try:
        try:
            # One graph update for the whole sweep (a submit per run costs the scheduler more);
            # still one task, and one key, per run.
            futures = (
                client.map(
                    run_one,
                    [task_of(sweep, r) for r in todo],
                    key=[f"rttlab-run-{r.hash}" for r in todo],
                    pure=False,
                )
                if todo
                else []
            )
            arrived = as_completed(futures)
            while not arrived.is_empty() or finished:
                # Results are fetched and stored together once per COMMIT_EVERY_S: the first
                # run to finish after a quiet spell at once, those behind it within the window.
                due = time.perf_counter() - last_commit >= COMMIT_EVERY_S
                if not arrived.is_empty():
                    finished.extend(arrived.next_batch(block=not finished and due))
                if finished and (due or arrived.is_empty()):
                    fetch()
                    commit()
                elif not due:
                    time.sleep(
                        min(0.05, max(0.0, last_commit + COMMIT_EVERY_S - time.perf_counter()))
                    )
        finally:
            # What finished is kept, however the loop ended (Ctrl-C, an error in the client):
            # the runs finished but not yet fetched are fetched first. A second Ctrl-C during
            # that fetch (say, a worker no longer answers) skips it; what was fetched is stored.
            try:
                if finished:
                    fetch()
            except (Exception, KeyboardInterrupt):  # noqa: BLE001 - the loop's own exception propagates
                pass
            commit()
    except KeyboardInterrupt:
        result.interrupted = True
        client.cancel([f for f in futures if not f.done()])
    result.wall_s = time.perf_counter() - t0
    return result


def _name_and_level(head: Mapping[str, Any], source: str, bad: Any) -> tuple[str, float]:
    """A sweep's `name` (default: the file's stem) and confidence `level`, checked."""
    name = head.get("name") or Path(source).stem
    if not isinstance(name, str):
        raise bad("sweep.name", "expected a string")
    level = head.get("level", 0.95)
    if isinstance(level, bool) or not isinstance(level, (int, float)) or not 0 < level < 1:
        raise bad("sweep.level", f"expected a confidence level in (0, 1), got {level!r}")
    return name, level
