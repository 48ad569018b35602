"""Child processes run in their own session, so that a whole group can be signalled at once; and
waiting until a process stopped by SIGSTOP has stopped."""

from __future__ import annotations

import contextlib
import os
import subprocess
import time
from pathlib import Path


def kill_group(process: subprocess.Popen, number: int) -> None:
    """Send signal `number` to the process group of `process`, started in its own session (so the
    group's id is its pid): its children too, even after `process` itself exited."""
    with contextlib.suppress(ProcessLookupError, PermissionError):  # no process of the group is left
        os.killpg(process.pid, number)


def wait_until_stopped(pid: int, timeout: float) -> bool:
    """Whether every thread of process `pid` stopped within `timeout` seconds (SIGSTOP reaches
    them one by one, so one may still finish what it was doing). Reads the threads' states in
    /proc (Linux); where there is none, returns True at once."""
    tasks = Path(f"/proc/{pid}/task")
    deadline = time.monotonic() + timeout
    while tasks.exists():
        states = []
        for task in tasks.iterdir():
            with contextlib.suppress(OSError, IndexError):  # a thread that has just ended
                states.append((task / "stat").read_text().rsplit(")", 1)[1].split()[0])
        if all(state in "tTXZ" for state in states):  # stopped, or ending
            return True
        if time.monotonic() > deadline:
            return False
        time.sleep(0.001)
    return True
