"""rttlab._proc: whether a process another run left behind still lives."""

from __future__ import annotations

import os
import subprocess
import sys

from rttlab._proc import alive


def test_this_process_is_alive_and_a_reaped_child_is_not():
    assert alive(os.getpid())
    child = subprocess.Popen([sys.executable, "-c", "pass"])
    child.wait()  # reaped: its pid names no process (until the kernel reuses it, far off)
    assert not alive(child.pid)
