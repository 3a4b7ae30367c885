"""Processes other runs left behind: whether one still lives. Below every layer, so the testbed
(namespaces named ``rtb<pid>-…``) and ``rttlab live`` (cgroups named ``rttlab-live-<pid>-…``)
both tell a dead run's leftovers by its pid without importing each other."""

from __future__ import annotations

import os


def alive(pid: int) -> bool:
    """Whether process ``pid`` exists (signal 0 probes without signalling; a process of another
    user refuses it, and so exists)."""
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True
