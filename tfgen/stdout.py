"""The commands' standard output when its reader stops reading (`tfgen build | head -1`).

A closed pipe is the reader's choice, not a failure of the command: what the command still
prints is dropped, and it runs on to its own verdict and exit code (a build that wrote every file
exits 0; `check` with a stale file exits 1), with no message and no traceback. Git and the
coreutils die of SIGPIPE instead (status 141), which `set -o pipefail` then counts as a failure of a
command that did its work; tfgen's exit codes stay the documented 0, 1 and 2.
"""

from __future__ import annotations

import contextlib
import os
import sys
from collections.abc import Iterator
from typing import Any, TextIO


class ReaderMayLeave:
    """`stream` (sys.stdout) that drops its text once its reader has gone (EPIPE)."""

    def __init__(self, stream: TextIO):
        self.stream = stream
        self.gone = False

    def write(self, text: str) -> int:
        self.attempt(self.stream.write, text)
        return len(text)

    def flush(self) -> None:
        self.attempt(self.stream.flush)

    def attempt(self, action, *args: Any) -> None:
        if self.gone:
            return
        try:
            action(*args)
        except BrokenPipeError:
            self.leave()

    def leave(self) -> None:
        """From now on, nothing: the descriptor points at /dev/null, so that what the stream's
        buffer still holds is flushed there (at exit too) rather than failing again."""
        self.gone = True
        with contextlib.suppress(OSError, ValueError, AttributeError):  # a stream without a descriptor
            devnull = os.open(os.devnull, os.O_WRONLY)
            os.dup2(devnull, self.stream.fileno())
            os.close(devnull)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.stream, name)


@contextlib.contextmanager
def reader_may_leave() -> Iterator[None]:
    """sys.stdout made a ReaderMayLeave while a command runs, flushed before it is put back."""
    stream = sys.stdout
    sys.stdout = ReaderMayLeave(stream)
    try:
        yield
    finally:
        sys.stdout.flush()
        sys.stdout = stream
