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
            from ns import ns
        finally:
            if here is not None:
                os.chdir(here)
    return ns
