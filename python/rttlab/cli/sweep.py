"""``rttlab sweep``: run a sweep file on Dask, every run into a DuckDB store.

Imports of dask, duckdb and pandas happen inside the command, so ``rttlab --help`` stays fast."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import typer

from rttlab.cli.common import console, fail, stderr


def run_sweep(
    sweep: Any,
    store_path: Path,
    scheduler: str | None,
    workers: int | None,
    retry_failed: bool = False,
    quiet: bool = False,
) -> Any:
    """Open the store, start or join the cluster, run, show progress; returns the Outcome.
    Shared by ``rttlab sweep`` and ``rttlab reproduce``."""
    from rich.progress import (
        BarColumn,
        MofNCompleteColumn,
        Progress,
        TextColumn,
        TimeElapsedColumn,
        TimeRemainingColumn,
    )

    from rttlab.experiments.store import Store, StoreError
    from rttlab.experiments.sweep import SweepError, check_engines, execute, planned, start_client

    try:
        store = Store(store_path)
    except StoreError as e:
        fail(str(e))
    with store:
        # Each run under the key it is stored under (a store written before canonical form 2
        # keeps its runs under their form-1 keys); failed runs that are to run again do not count.
        sweep, stored = planned(sweep, store, retry_failed)
        todo = len(sweep.runs) - len(stored & {r.hash for r in sweep.runs})
        if not quiet:
            console.print(
                f"sweep [bold]{sweep.name}[/]: {len(sweep.runs)} runs, {len(sweep.runs) - todo} already in {store_path}, {todo} to run"
                + (
                    f" on {scheduler}"
                    if scheduler
                    else f" on a local cluster of {workers or 'one worker per core'}"
                    + (" workers" if workers else "")
                ),
                highlight=False,
            )
        try:
            check_engines([r for r in sweep.runs if r.hash not in stored])
        except SweepError as e:
            fail(str(e))
        if todo == 0:
            from rttlab.experiments.sweep import Outcome

            store.add_memberships(sweep.name, [(r.hash, r.params) for r in sweep.runs])
            return Outcome(total=len(sweep.runs), skipped=len(sweep.runs))
        try:
            client, cluster = start_client(scheduler, workers)
        except OSError as e:
            fail(f"--scheduler {scheduler}: cannot connect: {e}")
        live = console.is_terminal and not quiet
        progress = Progress(
            TextColumn("{task.description}"),
            BarColumn(),
            MofNCompleteColumn(),
            TextColumn("[red]{task.fields[failed]} failed"),
            TimeElapsedColumn(),
            TextColumn("ETA"),
            TimeRemainingColumn(),
            console=console,
            disable=not live,
            # Redrawn twice a second, not ten times: the bar is drawn by the client, whose CPU
            # time is taken from the runs on a small machine (BENCHMARKS.md).
            refresh_per_second=2,
        )
        task = progress.add_task(sweep.name, total=todo, failed=0)

        def on_result(outcome: Any, out: dict[str, Any], wrote: bool) -> None:
            progress.update(task, completed=outcome.ran, failed=outcome.failed)
            if not live and not quiet:
                # Logs and pipes get one line per run instead of a redrawn bar.
                status = (
                    out["status"]
                    if out["status"] == "ok"
                    else f"error {out.get('error_kind', '')}: {out.get('error', '')}"
                )
                console.print(
                    f"run {outcome.ran}/{todo} {out['hash'][:12]} {status} ({out.get('cpu_s', 0):.2f} CPU-s)",
                    highlight=False,
                    markup=False,
                )

        try:
            with progress:
                outcome = execute(
                    sweep, store, client, on_result=on_result, retry_failed=retry_failed
                )
        finally:
            try:
                client.close(timeout=10)
                if cluster is not None:
                    cluster.close(timeout=10)
            except Exception:  # noqa: BLE001 - shutting down after Ctrl-C; the store is already safe
                pass
    if not quiet:
        rate = (
            f", {outcome.ran / outcome.wall_s:.1f} runs/s"
            if outcome.wall_s > 0 and outcome.ran
            else ""
        )
        console.print(
            f"{outcome.ok} ok, {outcome.failed} failed, {outcome.skipped} skipped (already stored) in {outcome.wall_s:.1f} s{rate}",
            highlight=False,
            soft_wrap=True,
        )
        for h, kind, message in outcome.errors[:10]:
            stderr.print(
                f"  failed {h[:12]}: {kind}: {message}",
                highlight=False,
                markup=False,
                soft_wrap=True,
            )
        if len(outcome.errors) > 10:
            stderr.print(
                f"  ... and {len(outcome.errors) - 10} more (rttlab results query \"SELECT hash, error FROM runs WHERE status = 'error'\")"
            )
    return outcome


def exit_if_runs_failed(sweep: Any, store_path: Path | Any, hint: str) -> None:
    """Exit with status 1 and a count when the store (a path, or a Store already open) holds
    runs of ``sweep`` as failed (this time, or earlier and not run again): a command whose runs
    failed never reads as a success."""
    from rttlab.experiments.store import Store
    from rttlab.experiments.sweep import as_stored

    if isinstance(store_path, Store):
        failed = len(
            store_path.stored_hashes("error") & {r.hash for r in as_stored(sweep, store_path).runs}
        )
    else:
        with Store(store_path, read_only=True) as store:
            failed = len(
                store.stored_hashes("error") & {r.hash for r in as_stored(sweep, store).runs}
            )
    if failed:
        stderr.print(
            f"rttlab: {failed} of {len(sweep.runs)} runs of {sweep.name} failed; they are stored with their error "
            f"(rttlab results query \"SELECT hash, error_kind, error FROM runs WHERE status = 'error'\"){hint}",
            highlight=False,
            markup=False,
            soft_wrap=True,
        )
        raise typer.Exit(1)


def sweep(
    file: Path = typer.Argument(
        ...,
        help="Sweep file (TOML): [sweep] scenario, seeds; [set]; [grid]; [zip]. See docs/experiments.md.",
        show_default=False,
    ),
    store: Path = typer.Option(
        Path("results.duckdb"),
        "--store",
        help="DuckDB file the runs are written to (created if missing).",
    ),
    scheduler: str = typer.Option(
        None,
        "--scheduler",
        help="Dask scheduler address (tcp://host:8786) or scheduler file; default: a local cluster.",
    ),
    workers: int = typer.Option(
        None,
        "--workers",
        "-w",
        min=1,
        help="Worker processes of the local cluster (default: one per core).",
    ),
    retry_failed: bool = typer.Option(
        False,
        "--retry-failed",
        help="Run again the runs stored as failed (default: skip them like the rest).",
    ),
) -> None:
    """Run every parameter point × seed of a sweep on Dask; each finished run is stored at once.

    A rerun skips the runs already in the store (resume after Ctrl-C or a crash); a failing run
    is stored with its error and the sweep goes on (listed at the end; exit status 1 when any run
    of the sweep is stored as failed). Ctrl-C stops cleanly with exit status 130."""
    if scheduler and workers:
        fail(
            "--scheduler and --workers: give one (workers belong to the cluster behind a scheduler)"
        )
    from rttlab.experiments.sweep import Sweep, SweepError

    try:
        spec = Sweep.load(file)
    except SweepError as e:
        fail(str(e))
    outcome = run_sweep(spec, store, scheduler, workers, retry_failed)
    if outcome.interrupted:
        stderr.print(
            f"rttlab: interrupted: {outcome.ran} runs stored this time; rerun the same command to resume"
        )
        raise typer.Exit(130)
    exit_if_runs_failed(spec, store, "; --retry-failed runs them again")


def register(app: typer.Typer) -> None:
    app.command("sweep")(sweep)
