"""Tuning runs as sweeps: every point ``rttlab tune --store FILE`` replays is a run in the store.

A point is one estimator at one parameter setting (and timer floor) replayed over the tuning
data (every input trace, pooled, as :func:`rttlab.trace.tune.tune` replays it). It becomes a row
of ``runs`` (simulator ``"tune"``; its parameters as columns, as an evaluate sweep's:
``estimator``, ``NAME.PARAM`` on the runs of estimator ``NAME``, ``min_rto`` for the timer's
floor, and ``default`` true on the estimator's defaults) and its metrics a row of ``scores``
(docs/metrics.md). The run's key hashes the tuning data's *content* (times, RTTs, streams,
losses), the estimator, its parameters, the floor and the rttlab version, so

- a rerun of the same tuning (same inputs, estimators, budget, seed) finds every point stored and
  replays nothing; an interrupted one replays only what it had not stored (the search is
  deterministic for a seed, so it asks for the same points again); another target or confidence
  replays nothing for a grid (the grid does not depend on them) and what the search newly visits
  for differential evolution;
- ``rttlab results summary --sweep NAME`` and ``rttlab report`` read it like any sweep; what
  only the tuning knows (its target, the recommendation, the validation) is one row of the
  table ``tunings`` (:func:`write_tuning`).

Where the points are replayed: here (the core, one thread per timer floor) for a batch of little
work, on Dask — the sweep layer's own cluster (:func:`rttlab.experiments.sweep.start_client`) or
the scheduler given — when a batch holds more than :data:`DASK_WORK` sample-replays or a cluster
was asked for. The batch is cut into a few tasks per worker, each replaying many points in one
call into the core (one task per point would cost more in Dask's bookkeeping than the replay);
the data go to every worker once. The client is the only writer: each batch's points are one
transaction. The points a held-out validation (``--validate``) searches are stored the same way
under the sweep ``NAME.validation``.
"""

from __future__ import annotations

import hashlib
import json
import math
import os
import socket
import time
from collections.abc import Mapping
from typing import Any

from rttlab import __version__
from rttlab.trace.tune_search import (
    METRIC_COLUMNS,
    TIMER_FLOOR,
    Dim,
    Trace,
    fmt_value,
    replay_points,
    sentence,
)

#: The simulator name of a tuning point's run, and the layout of its ``scores`` row.
SIMULATOR = "tune"
SCHEMA = "rttlab.tune-point/1"
#: Sample-replays (points × samples) in one batch above which it goes to Dask by itself: below
#: it, starting a local cluster (a few seconds) costs more than it saves.
DASK_WORK = 200_000_000
#: Columns of the ``tunings`` table: one row per tuning run (sweep), what the report needs.
TUNINGS = {
    "sweep": "VARCHAR PRIMARY KEY",
    "run_key": "VARCHAR",
    "inputs": "VARCHAR",
    "samples": "BIGINT",
    "estimators": "VARCHAR",
    "target": "DOUBLE",
    "confidence": "DOUBLE",
    "budget": "BIGINT",
    "seed": "BIGINT",
    "recommendation_hash": "VARCHAR",
    "recommendation": "VARCHAR",
    "doc": "VARCHAR",
    "finished_at": "TIMESTAMP",
}
INTS = {"samples", "bad_timeouts", "lost_segments"}


def trace_digest(trace: Trace) -> str:
    """The tuning data's content: what a point's result depends on besides its setting."""
    import numpy as np

    h = hashlib.sha256()
    for a in (trace.times_ns, trace.rtts_ns):
        h.update(np.ascontiguousarray(a, dtype=np.uint64).tobytes())
    h.update(
        json.dumps(
            [
                list(map(int, trace.starts)),
                [bool(x) for x in trace.timestamps],
                [[int(s), int(t)] for s, t in trace.losses],
            ]
        ).encode()
    )
    return h.hexdigest()


def point_params(
    name: str, point: Mapping[str, float], dims: list[Dim], fixed: Mapping[str, str]
) -> tuple[dict[str, str], float]:
    """A point's estimator parameters as the command line writes them, and its timer floor (s)."""
    kinds = {d.key: d.kind for d in dims}
    params = {**fixed, **{k: fmt_value(kinds[k], v) for k, v in point.items() if k != TIMER_FLOOR}}
    return params, float(point.get(TIMER_FLOOR, 0.0))


def point_hash(
    digest: str, name: str, params: Mapping[str, str], floor: float, default: bool
) -> str:
    key = {
        "kind": "tune",
        "data_sha256": digest,
        "estimator": name,
        "params": dict(sorted(params.items())),
        "timer_floor_s": floor,
        "default": default,
        "rttlab": __version__,
        "result_schema": SCHEMA,
    }
    return hashlib.sha256(
        json.dumps(key, sort_keys=True, separators=(",", ":")).encode()
    ).hexdigest()[:40]


def run_params(name: str, params: Mapping[str, str], floor: float, default: bool) -> dict[str, Any]:
    """The run's parameter columns (an evaluate sweep's names: ``NAME.PARAM``, ``min_rto``)."""
    out: dict[str, Any] = {"estimator": name, "default": default}
    out.update({f"{name}.{k}": v for k, v in params.items()})
    if floor:
        out["min_rto"] = fmt_value("duration", floor)
    return out


def replay_chunk(
    trace: Trace, name: str, points: list[dict[str, float]], dims: list[Dim], fixed: dict[str, str]
) -> dict[str, Any]:
    """Replay some points of one estimator (on a Dask worker): their rows, and the cost."""
    import dataclasses

    import numpy as np

    wall0, cpu0 = time.perf_counter(), time.thread_time()
    # Arrays that came over the wire may sit misaligned in the message's buffer: the core takes
    # aligned, contiguous ones (a copy here, once per task, only where needed).
    aligned = {
        k: np.require(getattr(trace, k), dtype=np.uint64, requirements=["C", "A"])
        for k in ("times_ns", "rtts_ns")
    }
    rows = replay_points(
        dataclasses.replace(trace, **aligned), name, points, dims, fixed, threads=1
    )
    return {
        "rows": rows,
        "wall_s": time.perf_counter() - wall0,
        "cpu_s": time.thread_time() - cpu0,
        "worker": f"{socket.gethostname()}:{os.getpid()}",
    }


class StoredReplay:
    """A :data:`rttlab.trace.tune_search.Replay` that keeps every point in a results store.

    ``dask``: ``"auto"`` (a batch of more than :data:`DASK_WORK` sample-replays), ``"always"``
    or ``"never"``; ``scheduler``/``workers`` as ``rttlab sweep`` takes them. Counts what it did
    in :attr:`found` (points read from the store) and :attr:`replayed` (points computed), and
    :attr:`tasks` (Dask tasks sent)."""

    def __init__(
        self,
        store: Any,
        sweep: str,
        *,
        dask: str = "auto",
        scheduler: str | None = None,
        workers: int | None = None,
        _shared: dict[str, Any] | None = None,
    ) -> None:
        if dask not in ("auto", "always", "never"):
            raise ValueError(f"dask: expected auto, always or never, got {dask!r}")
        self.store, self.sweep, self.dask = store, sweep, dask
        self.scheduler, self.workers = scheduler, workers
        # The cluster and the data sent to it, shared with the validation's replay.
        self._shared = (
            _shared
            if _shared is not None
            else {
                "client": None,
                "cluster": None,
                "scattered": {},
                "digests": {},
                "counts": {"found": 0, "replayed": 0, "tasks": 0},
            }
        )

    @property
    def found(self) -> int:
        return self._shared["counts"]["found"]

    @property
    def replayed(self) -> int:
        return self._shared["counts"]["replayed"]

    @property
    def tasks(self) -> int:
        return self._shared["counts"]["tasks"]

    @property
    def used_dask(self) -> bool:
        return self._shared["client"] is not None

    def validation(self) -> StoredReplay:
        """The replay of the held-out validation's searches: the same store, its own sweep."""
        return StoredReplay(
            self.store,
            f"{self.sweep}.validation",
            dask=self.dask,
            scheduler=self.scheduler,
            workers=self.workers,
            _shared=self._shared,
        )

    def close(self) -> None:
        client, cluster = self._shared["client"], self._shared["cluster"]
        self._shared["client"] = self._shared["cluster"] = None
        self._shared["scattered"].clear()
        if client is not None:
            client.close()
        if cluster is not None:
            cluster.close()

    def __enter__(self) -> StoredReplay:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    def _digest(self, trace: Trace) -> str:
        # Traces live as long as the tuning: their id is theirs for that long.
        cached = self._shared["digests"].get(id(trace))
        if cached is None or cached[0] is not trace:
            cached = (trace, trace_digest(trace))
            self._shared["digests"][id(trace)] = cached
        return cached[1]

    def stored(self, hashes: list[str]) -> dict[str, dict[str, Any]]:
        """The metric rows of the points already stored, by hash."""
        if not hashes or "scores" not in self.store.tables():
            return {}
        import pyarrow as pa

        cols = ", ".join(f"sc.{c}" for c in METRIC_COLUMNS)
        self.store.db.register("_wanted", pa.table({"hash": hashes}))
        try:
            got = self.store.db.execute(
                f"SELECT r.hash, {cols} FROM runs r JOIN scores sc USING (hash) JOIN _wanted w USING (hash) WHERE r.status = 'ok'"
            ).fetchall()
        finally:
            self.store.db.unregister("_wanted")
        out = {}
        for h, *values in got:
            out[h] = {
                c: (
                    None
                    if v is None or (isinstance(v, float) and math.isnan(v))
                    else int(v)
                    if c in INTS
                    else float(v)
                )
                for c, v in zip(METRIC_COLUMNS, values)
            }
        return out

    def __call__(
        self,
        trace: Trace,
        name: str,
        points: list[dict[str, float]],
        dims: list[Dim],
        fixed: dict[str, str],
        threads: int | None = None,
    ) -> list[dict[str, Any]]:
        digest = self._digest(trace)
        default = not dims  # the point {} of no dimension: the estimator's defaults
        made = [point_params(name, p, dims, fixed) for p in points]
        hashes = [point_hash(digest, name, params, floor, default) for params, floor in made]
        have = self.stored(list(dict.fromkeys(hashes)))
        todo = [i for i, h in enumerate(dict.fromkeys(hashes)) if h not in have]
        unique = list(dict.fromkeys(hashes))
        first = {h: hashes.index(h) for h in unique}
        todo_idx = [first[unique[i]] for i in todo]
        self._shared["counts"]["found"] += len(unique) - len(todo_idx)
        self._join([h for h in unique if h in have])
        if todo_idx:
            todo_points = [points[i] for i in todo_idx]
            work = len(todo_points) * len(trace.rtts_ns)
            if self.dask == "always" or (
                self.dask == "auto" and (work > DASK_WORK or self.scheduler or self.workers)
            ):
                rows, costs = self._on_dask(trace, digest, name, todo_points, dims, fixed)
            else:
                wall0, cpu0 = time.perf_counter(), time.process_time()
                rows = replay_points(trace, name, todo_points, dims, fixed, threads)
                each = (
                    (time.perf_counter() - wall0) / len(rows),
                    (time.process_time() - cpu0) / len(rows),
                )
                costs = [
                    {
                        "wall_s": each[0],
                        "cpu_s": each[1],
                        "worker": f"{socket.gethostname()}:{os.getpid()}",
                    }
                ] * len(rows)
            self._write(
                trace,
                name,
                [made[i] for i in todo_idx],
                [hashes[i] for i in todo_idx],
                default,
                rows,
                costs,
            )
            self._shared["counts"]["replayed"] += len(rows)
            for i, row in zip(todo_idx, rows):
                have[hashes[i]] = row
        return [dict(have[h]) for h in hashes]

    def _join(self, hashes: list[str]) -> None:
        """Make stored points members of this sweep. Their parameter columns were written with
        the run (the key fixes them), so only ``sweep_runs`` gets rows: one statement, not
        :meth:`Store.add_memberships`' per-column updates (seconds for a thousand points)."""
        if not hashes:
            return
        import pyarrow as pa

        self.store.db.register("_members", pa.table({"hash": hashes}))
        try:
            self.store.db.execute(
                "INSERT INTO sweep_runs SELECT ?, hash FROM _members ON CONFLICT DO NOTHING",
                [self.sweep],
            )
        finally:
            self.store.db.unregister("_members")

    def _client(self) -> Any:
        if self._shared["client"] is None:
            from rttlab.experiments.sweep import start_client

            self._shared["client"], self._shared["cluster"] = start_client(
                self.scheduler, self.workers
            )
        return self._shared["client"]

    def _on_dask(
        self,
        trace: Trace,
        digest: str,
        name: str,
        points: list[dict[str, float]],
        dims: list[Dim],
        fixed: dict[str, str],
    ) -> tuple[list[dict[str, Any]], list[dict[str, Any]]]:
        client = self._client()
        data = self._shared["scattered"].get(digest)
        if data is None:  # the data go to every worker once, not with every task
            data = client.scatter(trace, broadcast=True, hash=False)
            self._shared["scattered"][digest] = data
        workers = max(1, sum(client.nthreads().values()))
        # A few tasks per worker: each replays its points in one call into the core.
        size = max(1, math.ceil(len(points) / (2 * workers)))
        chunks = [points[i : i + size] for i in range(0, len(points), size)]
        futures = [
            client.submit(replay_chunk, data, name, chunk, dims, fixed, pure=False)
            for chunk in chunks
        ]
        self._shared["counts"]["tasks"] += len(futures)
        rows, costs = [], []
        for chunk, out in zip(chunks, client.gather(futures)):
            rows += out["rows"]
            costs += [
                {
                    "wall_s": out["wall_s"] / len(chunk),
                    "cpu_s": out["cpu_s"] / len(chunk),
                    "worker": out["worker"],
                }
            ] * len(chunk)
        return rows, costs

    def _write(
        self,
        trace: Trace,
        name: str,
        made: list[tuple[dict[str, str], float]],
        hashes: list[str],
        default: bool,
        rows: list[dict[str, Any]],
        costs: list[dict[str, Any]],
    ) -> None:
        """The new points as runs, one transaction (all of them or none)."""
        import pyarrow as pa

        items = []
        for (params, floor), h, row, cost in zip(made, hashes, rows, costs):
            setting = sentence(name, params, floor) + (" (defaults)" if default else "")
            cols: dict[str, Any] = {
                "input": trace.name,
                "input_kind": trace.kind,
                "estimator": name,
                "label": setting,
                "floor_s": floor,
                **row,
            }
            types = {c: (pa.int64() if c in INTS else pa.float64()) for c in METRIC_COLUMNS} | {
                "floor_s": pa.float64()
            }
            scores = pa.table(
                {
                    "hash": pa.array([h], pa.string()),
                    **{k: pa.array([v], type=types.get(k, pa.string())) for k, v in cols.items()},
                }
            )
            outcome = {
                "hash": h,
                "simulator": SIMULATOR,
                "seed": None,
                "name": trace.name,
                "status": "ok",
                "scenario": json.dumps(
                    {
                        "estimator": name,
                        "params": params,
                        "timer_floor_s": floor,
                        "default": default,
                        "data": trace.name,
                    },
                    sort_keys=True,
                ),
                "rttlab_version": __version__,
                "simulator_version": __version__,
                "result_schema": SCHEMA,
                "scores": scores,
                **cost,
            }
            items.append((run_params(name, params, floor, default), outcome))
        self.store.write_runs(self.sweep, items)


def write_tuning(store: Any, sweep: str, tuning: Any) -> None:
    """What the report needs of a tuning besides its points: one row of ``tunings`` (replaced
    by a rerun of the same sweep): the target, the fit on all data (and its run's hash), the
    methods, notes and validation (as the JSON of ``rttlab tune --json``, without the fronts:
    those are the stored points)."""
    import datetime as dt

    from rttlab.jsonable import clean

    cols = ", ".join(f'"{k}" {t}' for k, t in TUNINGS.items())
    store.db.execute(f"CREATE TABLE IF NOT EXISTS tunings ({cols})")
    # The point stored in the sweep is the fit on all data (the fronts' star); the
    # cross-validated recommendation, which may come from a fold's search or be a default, is in
    # the doc ("recommendation", "cross_validation").
    rec = tuning.fit
    rec_hash = None
    if rec is not None:
        found = store.db.execute(
            "SELECT hash FROM scores JOIN sweep_runs USING (hash) WHERE sweep_runs.sweep = ? AND scores.label = ?",
            [sweep, rec["setting"]],
        ).fetchone()
        rec_hash = found[0] if found else None
    doc = {
        k: v for k, v in tuning.to_json().items() if k not in ("fronts", "joint_front", "defaults")
    }
    s = tuning.settings
    store.db.execute("DELETE FROM tunings WHERE sweep = ?", [sweep])
    store.db.execute(
        f"INSERT INTO tunings VALUES ({', '.join('?' for _ in TUNINGS)})",
        [
            sweep,
            tuning.run_key(),
            " + ".join(tuning.inputs),
            int(tuning.samples),
            ",".join(tuning.methods),
            s.target,
            s.confidence,
            s.budget,
            s.seed,
            rec_hash,
            None if rec is None else rec["setting"],
            json.dumps(clean(doc), sort_keys=True),
            dt.datetime.now(dt.UTC).replace(tzinfo=None),
        ],
    )
