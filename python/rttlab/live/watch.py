"""The IO around :class:`rttlab.live.session.Session`: the program attached to a cgroup, its ring
buffer drained into the session, and a testbed scenario run inside a cgroup of its own."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

from rttlab.live import bpf, cgroup, events
from rttlab.live.session import Session

Records = Callable[[list[dict[str, Any]]], None]


class Watch:
    """The program on ``path`` (a cgroup v2 directory) feeding ``session``; :meth:`pump` drains
    the ring buffer. ``on_records`` sees what each event produced (``--json``)."""

    def __init__(
        self, path: str | Path, session: Session, on_records: Records | None = None
    ) -> None:
        bpf.check_root()
        self.path = cgroup.check(path)
        self.session = session
        self.on_records = on_records
        self.bad = 0
        self.program = bpf.LiveProgram(self.path, self._event)
        session.per_ack = self.program.per_ack

    def _event(self, data: bytes) -> None:
        try:
            e = events.parse(data)
        except ValueError:
            self.bad += 1
            return
        out = self.session.feed(e)
        if self.on_records and out:
            self.on_records(out)

    def pump(self, timeout_ms: int = 0) -> int:
        n = self.program.poll(timeout_ms)
        self.session.overruns = self.program.overruns()
        return n

    def close(self) -> None:
        self.program.close()

    def __enter__(self) -> Watch:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def run_testbed(
    scenario: str | Path,
    session: Session,
    overrides: Sequence[str] = (),
    on_records: Records | None = None,
    on_tick: Callable[[float, float], None] | None = None,
    out_dir: str | Path | None = None,
    prepare: Callable[[dict[str, Any]], None] | None = None,
) -> Any:
    """Run a testbed scenario with the program on a fresh cgroup holding this process — and so
    the traffic generators it starts, whose sockets are created there — for the whole run.
    Everything (program, cgroup) is gone afterwards, however the run ends; a SIGKILLed run's
    empty cgroup is removed by the next run. ``prepare``: as :func:`rttlab.testbed.run`'s (called
    once the namespaces are set up, before any traffic). Returns the testbed's result."""
    from rttlab.testbed import run as testbed_run

    with cgroup.RunCgroup() as cg, Watch(cg.path, session, on_records) as w:
        cg.enter()

        def tick(now: float, total: float) -> None:
            w.pump(0)
            if on_tick:
                on_tick(now, total)

        result = testbed_run(scenario, overrides, out_dir=out_dir, progress=tick, prepare=prepare)
        # The last events (FIN exchange, final ACKs) after the generators stopped.
        for _ in range(3):
            w.pump(20)
        return result
