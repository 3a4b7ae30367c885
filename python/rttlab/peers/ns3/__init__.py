"""ns-3 3.44 (the ``ns3`` extra) as a peer: :mod:`.dumbbell` runs an rttlab scenario in ns-3 (the
simulator ``ns3`` of a sweep); :mod:`.rtt` puts rttlab's estimators inside ns-3's TCP (C++ in
``rtt_estimator.cc``, compiled by cppyy on first use)."""

from __future__ import annotations

TYPE_CHECKING = False
if TYPE_CHECKING:
    from typing import Any


def import_ns() -> Any:
    """The ns-3 wheel's bindings (``from ns import ns``), the same whatever directory the
    process was started from.

    At import the wheel looks for its libraries in ``PATH``, ``LD_LIBRARY_PATH``, its own folders
    and the current directory, searched recursively (``ns3/ns/__init__.py``,
    ``_search_libraries``): started from a directory that holds other Python environments (``/tmp``
    with two venvs), it finds every module twice and fails with "There are multiple build
    profiles for module 'applications'". So the import runs from a private empty directory and
    the previous one is restored after it. The search runs once per process (the wheel caches
    it), so only the first call pays for the detour."""
    import os
    import sys
    import tempfile

    if "ns3.ns" in sys.modules:  # already loaded: no new search
        from ns import ns

        return ns
    try:
        here: str | None = os.getcwd()
    except OSError:  # the start directory was deleted: nothing to return to
        here = None
    with tempfile.TemporaryDirectory(prefix="rttlab-ns3-import-") as empty:
        os.chdir(empty)
        try:
            with _quiet_jit():
                from ns import ns
        finally:
            if here is not None:
                os.chdir(here)
    return ns


#: What cppyy's JIT prints at every import of the wheel: static initialisers it could not run
#: (ns-3 3.44's own message, two lines per process). rttlab's ns-3 comparisons are validated with
#: it (tests/test_ns3.py), so it is summarised in one line instead of shown on every run.
JIT_NOISE = "[runStaticInitializersOnce]: Failed to materialize symbols"


def _quiet_jit() -> Any:
    """Capture what the import writes to file descriptor 2 (C++ writes there, past Python's
    ``sys.stderr``): :data:`JIT_NOISE` lines are counted and summarised in one line, anything
    else is passed on as it came."""
    import contextlib
    import os
    import sys
    import tempfile

    @contextlib.contextmanager
    def capture():
        sys.stderr.flush()
        saved = os.dup(2)
        with tempfile.TemporaryFile() as sink:
            os.dup2(sink.fileno(), 2)
            try:
                yield
            finally:
                sys.stderr.flush()
                os.dup2(saved, 2)
                os.close(saved)
                sink.seek(0)
                lines = sink.read().decode(errors="replace").splitlines()
                noise = [line for line in lines if line.startswith(JIT_NOISE)]
                for line in lines:
                    if not line.startswith(JIT_NOISE):
                        print(line, file=sys.stderr)
                if noise:
                    print(
                        f"rttlab: ns-3: cppyy's JIT could not run {len(noise)} static initialiser(s) at import "
                        "(ns-3 3.44's own 'Failed to materialize symbols' message; the ns-3 comparisons are validated with it)",
                        file=sys.stderr,
                    )

    return capture()
