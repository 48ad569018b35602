"""Child processes run in their own session, so that a whole group can be signalled at once."""

from __future__ import annotations

import contextlib
import os
import subprocess


def kill_group(process: subprocess.Popen, number: int) -> None:
    """Send signal `number` to the process group of `process`, started in its own session (so the
    group's id is its pid): its children too, even after `process` itself exited."""
    with contextlib.suppress(ProcessLookupError, PermissionError):  # no process of the group is left
        os.killpg(process.pid, number)
