"""Processes and threads, below every layer: whether another run's process still lives (the
testbed's namespaces ``rtb<pid>-…`` and ``rttlab live``'s cgroups ``rttlab-live-<pid>-…`` both
tell a dead run's leftovers by its pid without importing each other), and long core calls that
Ctrl-C can still stop (:func:`interruptible`)."""

from __future__ import annotations

import os
from collections.abc import Callable
from typing import Any, TypeVar

T = TypeVar("T")


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


def interruptible(fn: Callable[..., T], *args: Any, **kwargs: Any) -> T:
    """``fn(*args, **kwargs)`` — a long core call that releases the GIL — run in a daemon thread
    while the main thread waits where Ctrl-C reaches it: Python runs signal handlers only in the
    main thread and only between bytecodes, so a core call made from the main thread would
    delay Ctrl-C until it returns (11 s for `rttlab evaluate` on 5 M samples). The abandoned
    call finishes or dies with the process; its result is not needed. Off the main thread (a
    worker's own call) ``fn`` simply runs."""
    import threading

    if threading.current_thread() is not threading.main_thread():
        return fn(*args, **kwargs)
    box: dict[str, Any] = {}

    def work() -> None:
        try:
            box["value"] = fn(*args, **kwargs)
        except BaseException as e:  # noqa: BLE001 - handed to the caller as is
            box["error"] = e

    t = threading.Thread(target=work, name="rttlab-core", daemon=True)
    t.start()
    while t.is_alive():
        t.join(0.05)
    if "error" in box:
        raise box["error"]
    return box["value"]
