"""The guards of a run's folder: the lock one run holds on it for as long as its process
lives (`hold`), and what `--fresh` may remove (`is_tfgen_run`, `remove`)."""

import errno
import fcntl
import json
import os
import shutil

from .errors import UserError
from .regular_files import open_lock, read_regular

# Held (flock) by the run writing the folder, for as long as its process lives.
LOCK_FILE = ".tfgen.lock"
HELD = {}  # folder (resolved) -> the descriptor of its lock file, held by this process


def hold(folder):
    """Hold `folder` for this process (an exclusive flock of its lock file, released by the
    OS on any exit); UserError naming the pid when another run holds it."""
    folder.mkdir(parents=True, exist_ok=True)
    key = os.path.realpath(folder)
    if key in HELD:  # main() run again in this process
        return
    path = folder / LOCK_FILE
    descriptor = open_lock_file(path)
    try:
        fcntl.flock(descriptor, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        pid = os.pread(descriptor, 32, 0).decode(errors="replace").strip() or "unknown"
        os.close(descriptor)
        wait = "wait for it to end, or pass another --output-dir"
        raise UserError(
            f"{folder} is in use by another run (pid {pid}): {wait}"
        ) from None
    HELD[key] = descriptor
    if fcntl.fcntl(descriptor, fcntl.F_GETFL) & os.O_ACCMODE == os.O_RDWR:
        os.ftruncate(descriptor, 0)
        os.pwrite(descriptor, f"{os.getpid()}\n".encode(), 0)


def open_lock_file(path):
    """A descriptor of the lock file `path` (created if missing); read-only in a folder that
    cannot be written (a finished run still says so there; a read-only one still locks).
    UserError naming it when it is a link or not a regular file (a FIFO).
    """
    try:
        return open_lock(path, os.O_RDWR | os.O_CREAT)
    except OSError as error:
        if (
            error.errno not in (errno.EACCES, errno.EPERM, errno.EROFS)
            or not path.exists()
        ):
            raise
    return open_lock(path, os.O_RDONLY)


def remove(path):
    """Remove the file, link or folder `path`; UserError naming what could not be removed."""
    try:
        if path.is_dir() and not path.is_symlink():
            shutil.rmtree(path, onerror=not_removed)
        else:
            path.unlink()
    except OSError as error:
        not_removed(None, path, (type(error), error, None))


def not_removed(function, path, info):
    """`shutil.rmtree`'s error handler: UserError naming `path` and why."""
    why = getattr(info[1], "strerror", None) or type(info[1]).__name__
    stop = "fix that and pass --fresh again"
    raise UserError(f"{path}: cannot be removed ({why}); {stop}") from None


def is_tfgen_run(path):
    """Whether `path` is a run.json that tfgen wrote (its `tfgen` and `spec_sha256` keys);
    UserError naming it when it is not a regular file."""
    try:
        record = json.loads(read_regular(path))
    except (OSError, ValueError):  # (not a regular file: UserError, naming it)
        return False
    return isinstance(record, dict) and {"tfgen", "spec_sha256"} <= record.keys()
