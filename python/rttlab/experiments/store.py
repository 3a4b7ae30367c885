"""The results store: one embedded DuckDB file, bulky series as Parquet beside it.

Tables (documented in docs/experiments.md):

- ``runs``: one row per run, keyed by its content hash (:attr:`rttlab.Scenario.hash`): the sweep
  that first ran it, the simulator, every swept parameter as a typed column named by its scenario
  path (``"topology.bottleneck.bandwidth"``), the canonical scenario (TOML), seed, versions, CPU and
  wall time, status (``ok`` / ``error``) with the error's kind and message, and the run's scalar
  results (aggregate goodput, Jain index, bottleneck utilisation, drops, ...).
- ``sweep_runs``: which sweeps contain which runs (a run shared by two sweeps is stored once).
- ``flows``, ``channels``: the simulator's per-flow and per-channel tables, with the run's hash.
- ``scores``: an evaluate job's run (one input through one estimator): its ``rttlab.evaluate``
  row (metrics of docs/metrics.md), with the run's hash.
- traces (window, rtt, queue, ...) when a sweep keeps them: ``STORE.series/HASH/NAME.parquet``.

One process writes (DuckDB locks the file); the runs that finished together are one
transaction, so a run is either stored whole or not at all, and a rerun of a sweep skips every
hash already in ``runs``.
"""

from __future__ import annotations

import datetime as _dt
import os
from collections.abc import Mapping
from pathlib import Path
from typing import Any

#: Columns of ``runs`` besides the parameters, with their DuckDB types.
RUN_COLUMNS: dict[str, str] = {
    "hash": "VARCHAR PRIMARY KEY",
    "sweep": "VARCHAR",
    "simulator": "VARCHAR",
    "seed": "BIGINT",
    "status": "VARCHAR",
    "error_kind": "VARCHAR",
    "error": "VARCHAR",
    "cpu_s": "DOUBLE",
    "wall_s": "DOUBLE",
    "worker": "VARCHAR",
    "finished_at": "TIMESTAMP",
    "rttlab_version": "VARCHAR",
    "simulator_version": "VARCHAR",
    "result_schema": "VARCHAR",
    "scenario_schema": "INTEGER",
    "scenario": "VARCHAR",
    "name": "VARCHAR",
    "duration_s": "DOUBLE",
    "events": "BIGINT",
    "event_hash": "VARCHAR",
    "goodput_bps": "DOUBLE",
    "jain_index": "DOUBLE",
    "utilisation": "DOUBLE",
    "drops": "BIGINT",
    "marks": "BIGINT",
    "retransmissions": "BIGINT",
    "timeouts": "BIGINT",
    "min_flow_goodput_bps": "DOUBLE",
    "max_flow_goodput_bps": "DOUBLE",
}


#: Columns of ``reproductions``: a comparison's reproduction as its report page shows it.
REPRODUCTION_COLUMNS: dict[str, str] = {
    "reproduction": "VARCHAR PRIMARY KEY",  # the comparison's name (comparisons.reproduction)
    "name": "VARCHAR",  # the reproduction file's name (several readings share it)
    "paper": "VARCHAR",  # by author and year
    "title": "VARCHAR",
    "source": "VARCHAR",
    "reading": "VARCHAR",  # NULL for a file declaring no readings
    "primary_reading": "BOOLEAN",
    "reading_what": "VARCHAR",
    "reading_says": "VARCHAR",
    "level": "DOUBLE",
    "tolerance": "DOUBLE",
    "note": "VARCHAR",
    "reports": "VARCHAR",  # JSON: the [[report]] tables (ours alone) and [[model]] tables
    "written_at": "TIMESTAMP",
}


class StoreError(Exception):
    """The store cannot be opened or written (locked by another writer, not a DuckDB file, ...)."""


def sql_type(value: Any) -> str:
    """The DuckDB column type of a parameter value (TOML types: bool, int, float, string, list)."""
    if isinstance(value, bool):
        return "BOOLEAN"
    if isinstance(value, int):
        return "BIGINT"
    if isinstance(value, float):
        return "DOUBLE"
    return "VARCHAR"


def unify(types: set[str]) -> str:
    """One column type for values of several types: integers widen to DOUBLE beside floats,
    anything else mixed is VARCHAR."""
    if len(types) == 1:
        return next(iter(types))
    if types <= {"BIGINT", "DOUBLE"}:
        return "DOUBLE"
    return "VARCHAR"


def param_types(rows: list[Mapping[str, Any]]) -> dict[str, str]:
    """The column type of every parameter over all of a sweep's runs."""
    seen: dict[str, set[str]] = {}
    for r in rows:
        for k, v in r.items():
            seen.setdefault(k, set()).add(sql_type(v))
    return {k: unify(t) for k, t in seen.items()}


def sql_value(value: Any) -> Any:
    """Lists and tables (rare as parameters) are stored as their JSON text."""
    if isinstance(value, (list, dict)):
        import json

        return json.dumps(value, sort_keys=True)
    return value


def quote(name: str) -> str:
    return '"' + name.replace('"', '""') + '"'


class Store:
    """A DuckDB results file. ``Store(path)`` opens it for writing (creating the tables);
    ``Store(path, read_only=True)`` for queries while nothing writes."""

    def __init__(self, path: str | Path, read_only: bool = False) -> None:
        import duckdb

        self.path = Path(path)
        if read_only and not self.path.is_file():
            raise StoreError(f"{self.path}: no such store")
        try:
            # The writer inserts a few dozen rows per commit: DuckDB's thread pool only adds
            # wake-ups to statements that small (≈ 17 % of the store's CPU, BENCHMARKS.md);
            # queries (read-only) keep every core.
            self.db = duckdb.connect(
                str(self.path), read_only=read_only, config={} if read_only else {"threads": 1}
            )
        except duckdb.Error as e:
            first = str(e).splitlines()[0] if str(e) else type(e).__name__
            raise StoreError(f"{self.path}: cannot open the store: {first}") from None
        self.read_only = read_only
        # Columns of runs and tables known to exist: looked up once, not per stored run.
        self._run_cols: set[str] = set()
        self._table_cols: dict[str, set[str]] = {}
        if not read_only:
            self._create()

    @property
    def series_dir(self) -> Path:
        return self.path.with_name(self.path.name + ".series")

    def _create(self) -> None:
        cols = ", ".join(f"{quote(k)} {t}" for k, t in RUN_COLUMNS.items())
        self.db.execute(f"CREATE TABLE IF NOT EXISTS runs ({cols})")
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS sweep_runs (sweep VARCHAR, hash VARCHAR, PRIMARY KEY (sweep, hash))"
        )
        # Reproductions write their published-vs-ours comparison here (one row per point and metric).
        self.db.execute(
            "CREATE TABLE IF NOT EXISTS comparisons (reproduction VARCHAR, point VARCHAR, metric VARCHAR, "
            "published DOUBLE, source VARCHAR, ours DOUBLE, ci_low DOUBLE, ci_high DOUBLE, n BIGINT, "
            "tolerance DOUBLE, matched BOOLEAN, PRIMARY KEY (reproduction, point, metric))"
        )
        # What `tolerance` is (a store written before this column reads NULL: relative): relative
        # (|ours / published − 1|), absolute (|ours − published|, in the metric's unit), at least
        # (ours ≥ published·(1 − tolerance)) or threshold (a claim's inequality, no tolerance).
        self.db.execute("ALTER TABLE comparisons ADD COLUMN IF NOT EXISTS tolerance_kind VARCHAR")
        # What a reproduction's report page needs besides its comparison rows (one row per stored
        # comparison, written by `rttlab reproduce`; a store written before this table has none,
        # and its report shows the comparison alone).
        cols = ", ".join(f"{quote(k)} {t}" for k, t in REPRODUCTION_COLUMNS.items())
        self.db.execute(f"CREATE TABLE IF NOT EXISTS reproductions ({cols})")

    def close(self) -> None:
        self.db.close()

    def __enter__(self) -> Store:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()

    # ---- reading ----------------------------------------------------------------------------

    def stored_hashes(
        self, status: str | None = None, scenario_schema: int | None = None
    ) -> set[str]:
        """The keys of the stored runs (with ``status``; keyed under ``scenario_schema``)."""
        where = [
            (c, v)
            for c, v in (("status", status), ("scenario_schema", scenario_schema))
            if v is not None
        ]
        sql = "SELECT hash FROM runs" + (
            " WHERE " + " AND ".join(f"{c} = ?" for c, _ in where) if where else ""
        )
        return {r[0] for r in self.db.execute(sql, [v for _, v in where]).fetchall()}

    def columns(self, table: str = "runs") -> list[str]:
        return [r[0] for r in self.db.execute(f"DESCRIBE {quote(table)}").fetchall()]

    def query(self, sql: str, params: list[Any] | None = None):  # -> pandas.DataFrame
        return self.db.execute(sql, params or []).df()

    def runs(self, sweep: str | None = None, scores: bool = False):  # -> pandas.DataFrame
        """The ``runs`` rows (of one sweep, by membership), oldest first; with ``scores``, each
        evaluate run's ``scores`` columns beside it (NULL for simulation runs)."""
        select, join = "r.*", ""
        if scores and "scores" in self.tables():
            extra = [c for c in self.columns("scores") if c not in ("hash", *self.columns("runs"))]
            select += "".join(f", sc.{quote(c)}" for c in extra)
            join = " LEFT JOIN scores sc USING (hash)"
        if sweep is None:
            return self.query(f"SELECT {select} FROM runs r{join} ORDER BY r.finished_at, r.hash")
        return self.query(
            f"SELECT {select} FROM runs r JOIN sweep_runs s USING (hash){join} WHERE s.sweep = ? ORDER BY r.finished_at, r.hash",
            [sweep],
        )

    def tables(self) -> set[str]:
        return {
            r[0]
            for r in self.db.execute("SELECT table_name FROM information_schema.tables").fetchall()
        }

    def flows(self, sweep: str):  # -> pandas.DataFrame
        """The per-flow rows of one sweep's runs (empty if no run stored any)."""
        exists = self.db.execute(
            "SELECT count(*) FROM information_schema.tables WHERE table_name = 'flows'"
        ).fetchone()[0]
        if not exists:
            import pandas as pd

            return pd.DataFrame({"hash": []})
        return self.query(
            "SELECT f.* FROM flows f JOIN sweep_runs s USING (hash) WHERE s.sweep = ? ORDER BY f.hash, f.flow",
            [sweep],
        )

    def latest_sweep(self) -> str | None:
        """The sweep whose last run finished last (None when the store holds no sweep)."""
        row = self.db.execute(
            "SELECT s.sweep FROM sweep_runs s JOIN runs r USING (hash) "
            "GROUP BY s.sweep ORDER BY max(r.finished_at) DESC NULLS LAST, s.sweep LIMIT 1"
        ).fetchone()
        return None if row is None else row[0]

    def sweeps(self) -> list[str]:
        return [
            r[0]
            for r in self.db.execute(
                "SELECT DISTINCT sweep FROM sweep_runs ORDER BY sweep"
            ).fetchall()
        ]

    # ---- writing ----------------------------------------------------------------------------

    def prepare_params(self, types: Mapping[str, str]) -> None:
        """Add a typed column for every parameter (``types`` from :func:`param_types`); widen
        an existing column when another sweep gives it wider values (BIGINT → DOUBLE → VARCHAR)."""
        have = dict(
            self.db.execute(
                "SELECT column_name, data_type FROM information_schema.columns WHERE table_name = 'runs'"
            ).fetchall()
        )
        for key, t in types.items():
            if key in RUN_COLUMNS:
                continue
            if key not in have:
                self.db.execute(f"ALTER TABLE runs ADD COLUMN {quote(key)} {t}")
            elif (wide := unify({have[key], t})) != have[key]:
                self.db.execute(f"ALTER TABLE runs ALTER {quote(key)} TYPE {wide}")

    def _ensure_param_columns(self, *rows: Mapping[str, Any]) -> None:
        """Add the columns that ``rows`` (parameters or a simulator's metrics) name and ``runs``
        lacks, typed over all of them; the known columns are cached, so a batch of runs whose
        columns exist costs no query."""
        if all(self._run_cols.issuperset(r) for r in rows):
            return
        self._run_cols = set(self.columns("runs"))
        missing = [{k: v for k, v in r.items() if k not in self._run_cols} for r in rows]
        if any(missing):
            self.prepare_params(param_types(missing))
            self._run_cols = set(self.columns("runs"))

    def add_memberships(self, sweep: str, items: list[tuple[str, Mapping[str, Any]]]) -> None:
        """Record that ``sweep`` contains each already stored run and fill in the parameter columns it names (they follow from the scenario, so never conflict), in one transaction (a resumed sweep of
        thousands of stored runs)."""
        if not items:
            return
        self._ensure_param_columns(*(params for _, params in items))
        self.db.execute("BEGIN")
        try:
            self.db.executemany(
                "INSERT INTO sweep_runs VALUES (?, ?) ON CONFLICT DO NOTHING",
                [[sweep, h] for h, _ in items],
            )
            for key in dict.fromkeys(k for _, params in items for k in params):
                values = [[sql_value(params[key]), h] for h, params in items if key in params]
                self.db.executemany(
                    f"UPDATE runs SET {quote(key)} = ? WHERE hash = ? AND {quote(key)} IS NULL",
                    values,
                )
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def write_runs(
        self, sweep: str, items: list[tuple[Mapping[str, Any], Mapping[str, Any]]]
    ) -> list[bool]:
        """Store runs that finished together in one transaction (one commit, not one per run):
        all of them or none. Rows go to DuckDB as Arrow tables, one statement per table for the
        whole batch: each DuckDB statement costs ~1 ms of CPU or more whatever its size, more than
        binding the rows (BENCHMARKS.md)."""
        import pyarrow as pa

        # A simulator's own scalar results (Result.metrics) become columns as parameters do.
        self._ensure_param_columns(
            *(params for params, _ in items),
            *(outcome.get("metrics") or {} for _, outcome in items),
        )
        now = _dt.datetime.now(_dt.UTC).replace(tzinfo=None)
        rows = []
        for params, outcome in items:
            row = {k: outcome.get(k) for k in RUN_COLUMNS if k in outcome}
            row["sweep"] = sweep
            row["finished_at"] = now
            row.update(
                {
                    k: (None if isinstance(v, float) and v != v else v)
                    for k, v in (outcome.get("metrics") or {}).items()
                    if k not in RUN_COLUMNS
                }
            )
            row.update({k: sql_value(v) for k, v in params.items()})
            traces = outcome.get("traces") or {}
            if traces:
                self._write_series(row["hash"], traces)
            rows.append(row)
        keys = list(dict.fromkeys(k for r in rows for k in r))
        batch = pa.table({k: [r.get(k) for r in rows] for k in keys})
        self.db.execute("BEGIN")
        try:
            self.db.register("_rows", batch)
            try:
                done = {
                    r[0]
                    for r in self.db.execute(
                        "INSERT INTO runs BY NAME SELECT * FROM _rows ON CONFLICT DO NOTHING RETURNING hash"
                    ).fetchall()
                }
                self.db.execute(
                    "INSERT INTO sweep_runs SELECT ?, hash FROM _rows ON CONFLICT DO NOTHING",
                    [sweep],
                )
            finally:
                self.db.unregister("_rows")
            for table in ("flows", "channels", "scores"):
                frames = [
                    _with_hash(outcome[table], row["hash"])
                    for row, (_, outcome) in zip(rows, items)
                    if row["hash"] in done and outcome.get(table) is not None
                ]
                if frames:
                    # One chunk: DuckDB's Arrow scan costs per chunk (~0.3 ms each), not per row.
                    self._insert_frame(
                        table, pa.concat_tables(frames, promote_options="default").combine_chunks()
                    )
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            self._table_cols.clear()  # a rolled-back ALTER leaves the cache ahead of the file
            self._run_cols = set()
            raise
        return [r["hash"] in done for r in rows]

    def _insert_frame(self, table: str, frame: Any) -> None:
        """Append an Arrow table that carries a ``hash`` column (the table created on first use).
        The table's columns are looked up once and cached (an information-schema query costs
        more than the insert)."""
        self.db.register("_frame", frame)
        try:
            have = self._table_cols.get(table)
            if have is None or not have.issuperset(frame.column_names):
                have = {
                    r[0]
                    for r in self.db.execute(
                        "SELECT column_name FROM information_schema.columns WHERE table_name = ?",
                        [table],
                    ).fetchall()
                }
                if not have:
                    self.db.execute(f"CREATE TABLE {quote(table)} AS SELECT * FROM _frame LIMIT 0")
                    have = set(frame.column_names)
                # A newer simulator may report more per-flow columns (e.g. what each flow ran): add
                # them, so older rows read NULL there instead of the insert failing.
                if missing := [n for n in frame.column_names if n not in have]:
                    types = dict(
                        self.db.execute(
                            "SELECT column_name, column_type FROM (DESCRIBE SELECT * FROM _frame)"
                        ).fetchall()
                    )
                    for name in missing:
                        self.db.execute(
                            f"ALTER TABLE {quote(table)} ADD COLUMN {quote(name)} {types[name]}"
                        )
                    have |= set(missing)
                self._table_cols[table] = have
            self.db.execute(f"INSERT INTO {quote(table)} BY NAME SELECT * FROM _frame")
        finally:
            self.db.unregister("_frame")

    def _write_series(self, hash_: str, traces: Mapping[str, Any]) -> None:
        out = self.series_dir / hash_
        out.mkdir(parents=True, exist_ok=True)
        import pyarrow.parquet as pq

        for name, table in traces.items():
            final = out / f"{name}.parquet"
            tmp = out / f".{name}.parquet.tmp"
            pq.write_table(as_table(table), tmp)
            os.replace(tmp, final)  # a reader never sees half a file

    def write_comparison(self, reproduction: str, rows: list[dict[str, Any]]) -> None:
        self.db.execute("BEGIN")
        try:
            self.db.execute("DELETE FROM comparisons WHERE reproduction = ?", [reproduction])
            for r in rows:
                self.db.execute(
                    "INSERT INTO comparisons BY NAME SELECT ? AS reproduction, ? AS point, ? AS metric, ? AS published, ? AS source, ? AS ours, "
                    "? AS ci_low, ? AS ci_high, ? AS n, ? AS tolerance, ? AS matched, ? AS tolerance_kind",
                    [
                        reproduction,
                        r["point"],
                        r["metric"],
                        r["published"],
                        r["source"],
                        r["ours"],
                        r["ci_low"],
                        r["ci_high"],
                        r["n"],
                        r["tolerance"],
                        r["matched"],
                        r.get("tolerance_kind", "relative"),
                    ],
                )
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def write_reproduction(self, row: Mapping[str, Any]) -> None:
        """A reproduction's row of ``reproductions`` (replacing the one of the same name)."""
        import json

        from rttlab.jsonable import clean

        values = {k: row.get(k) for k in REPRODUCTION_COLUMNS}
        values["reports"] = json.dumps(clean(row.get("reports") or {}), sort_keys=True)
        values["written_at"] = _dt.datetime.now(_dt.UTC).replace(tzinfo=None)
        self.db.execute("BEGIN")
        try:
            self.db.execute(
                "DELETE FROM reproductions WHERE reproduction = ?", [values["reproduction"]]
            )
            self.db.execute(
                f"INSERT INTO reproductions ({', '.join(quote(k) for k in values)}) VALUES ({', '.join('?' for _ in values)})",
                list(values.values()),
            )
            self.db.execute("COMMIT")
        except BaseException:
            self.db.execute("ROLLBACK")
            raise

    def series(self, hash_: str, name: str):  # -> pandas.DataFrame
        import pandas as pd

        path = self.series_dir / hash_ / f"{name}.parquet"
        if not path.is_file():
            raise StoreError(f"{path}: no {name!r} series stored for run {hash_}")
        return pd.read_parquet(path)


def as_table(frame: Any):  # -> pyarrow.Table
    """A table as a run's outcome carries it: Arrow IPC bytes (from a worker), Arrow or pandas."""
    import pyarrow as pa

    if isinstance(frame, (bytes, bytearray, memoryview)):
        return pa.ipc.open_stream(pa.py_buffer(frame)).read_all()
    return (
        frame if isinstance(frame, pa.Table) else pa.Table.from_pandas(frame, preserve_index=False)
    )


def _with_hash(frame: Any, hash_: str):  # -> pyarrow.Table
    """A run's per-flow or per-channel table (IPC bytes, pandas or Arrow) as Arrow, ``hash`` first."""
    import pyarrow as pa

    t = as_table(frame)
    if t.num_columns and t.column_names[0] == "hash":
        return t  # the worker added it (rttlab.experiments.sweep.run_one)
    return t.add_column(0, "hash", pa.array([hash_] * t.num_rows, pa.string()))
