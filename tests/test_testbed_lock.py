"""One real-time run per machine (python/rttlab/testbed/lock.py): a second run waits for the first
and says who holds the machine; the lock goes with its holder however that process ends."""

from __future__ import annotations

import subprocess
import sys
import threading
import time

from rttlab.testbed.lock import machine_lock

HOLD = """
import fcntl, os, sys, time
fd = os.open(sys.argv[1], os.O_RDWR | os.O_CREAT, 0o644)
fcntl.flock(fd, fcntl.LOCK_EX)
print("held", flush=True)
time.sleep(float(sys.argv[2]))
"""


def hold(path, seconds: float) -> subprocess.Popen:
    p = subprocess.Popen(
        [sys.executable, "-c", HOLD, str(path), str(seconds)], stdout=subprocess.PIPE, text=True
    )
    assert p.stdout.readline().strip() == "held"
    return p


def test_a_second_run_waits_for_the_first_and_names_it(tmp_path):
    path = tmp_path / "testbed.lock"
    first = hold(path, 30)
    said, entered = [], threading.Event()

    def second() -> None:
        with machine_lock(said.append, path=str(path)):
            entered.set()

    t = threading.Thread(target=second, daemon=True)
    t.start()
    time.sleep(0.5)
    assert not entered.is_set()  # still waiting
    assert len(said) == 1 and f"in use by pid {first.pid}" in said[0] and "waiting" in said[0]
    first.kill()  # a crashed holder: the kernel drops its lock with its descriptors
    first.wait()
    assert entered.wait(5)
    t.join(5)


def test_a_free_machine_is_taken_at_once_without_a_word(tmp_path):
    said = []
    with machine_lock(said.append, path=str(tmp_path / "testbed.lock")):
        pass
    assert said == []
