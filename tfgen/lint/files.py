"""Finding and reading the files to lint: regular files only, bounded in size, decoded as Python does."""

from __future__ import annotations

import io
import os
import stat
import tokenize
from pathlib import Path

MAX_BYTES = 2 * 1024 * 1024
LIMIT_TEXT = "2 MiB"
SKIP_DIRS = {"__pycache__", "node_modules", "site-packages"}
KINDS = (
    (stat.S_ISDIR, "a directory"),
    (stat.S_ISFIFO, "a FIFO"),
    (stat.S_ISCHR, "a character device"),
    (stat.S_ISBLK, "a block device"),
    (stat.S_ISSOCK, "a socket"),
)


def shown(path) -> str:
    """A path as one unforgeable token of a one-line message: as it is, or quoted with Python's escapes
    (`'a\\nb.py'`) when it holds a newline or another unprintable character, a backslash, or starts with a quote."""
    text = str(path)
    if text.isprintable() and "\\" not in text and not text.startswith(("'", '"')):
        return text
    return repr(text)


class LintInputError(Exception):
    """A path that cannot be read or parsed (exit 2); the message is already located."""


def _kept_dir(name: str) -> bool:
    return not name.startswith(".") and name not in SKIP_DIRS and not name.endswith(".egg-info")


def _walk(root: Path, errors: list[str]) -> list[Path]:
    """Every `*.py` under `root`; a folder that cannot be listed is an error, not silently skipped."""

    def unreadable(error: OSError) -> None:
        errors.append(f"{shown(error.filename or root)}: error: cannot read directory: {error.strerror or error}")

    files = []
    for folder, dirs, names in os.walk(root, onerror=unreadable):
        dirs[:] = sorted(d for d in dirs if _kept_dir(d))
        files.extend(Path(folder) / n for n in sorted(names) if n.endswith(".py"))
    return files


def python_files(paths, errors: list[str]) -> list[Path]:
    """The files named, and the `*.py` files under the directories named; problems go to `errors`."""
    files = []
    for raw in paths:
        path = Path(raw)
        try:
            info = path.stat()
        except FileNotFoundError:
            errors.append(f"{shown(raw)}: error: no such file or directory")
            continue
        except OSError as error:
            errors.append(f"{shown(raw)}: error: cannot read: {error.strerror or error}")
            continue
        if stat.S_ISDIR(info.st_mode):
            files.extend(_walk(path, errors))
        else:
            files.append(path)
    return files


def _kind(mode: int) -> str:
    return next((name for test, name in KINDS if test(mode)), "not a regular file")


def _check_regular(display: str, info: os.stat_result) -> None:
    if not stat.S_ISREG(info.st_mode):
        raise LintInputError(f"{display}: error: not a regular file ({_kind(info.st_mode)}), not linted")
    if info.st_size > MAX_BYTES:
        raise LintInputError(f"{display}: error: file is {info.st_size} bytes, over the {LIMIT_TEXT} lint limit")


def read_bytes(path: Path) -> bytes:
    """At most MAX_BYTES of a regular file (after following links); anything else is a located error."""
    display = shown(path)
    try:
        _check_regular(display, path.stat())
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_CLOEXEC", 0))
    except OSError as error:
        raise LintInputError(f"{display}:1:1: error: cannot read: {error.strerror or error}") from None
    with os.fdopen(fd, "rb") as handle:
        _check_regular(display, os.fstat(fd))  # the path may have changed since the first look
        data = handle.read(MAX_BYTES + 1)
    if len(data) > MAX_BYTES:
        raise LintInputError(f"{display}: error: file is over {MAX_BYTES} bytes, over the {LIMIT_TEXT} lint limit")
    return data


def decode(data: bytes, display: str) -> str:
    """The source text, decoded as Python does: a UTF-8 BOM or a PEP 263 coding cookie, else UTF-8."""
    try:
        encoding, _ = tokenize.detect_encoding(io.BytesIO(data).readline)
        text = data.decode(encoding)
    except SyntaxError as error:
        raise LintInputError(f"{display}:1:1: error: cannot read: {error.msg}") from None
    except (UnicodeDecodeError, LookupError) as error:
        raise LintInputError(f"{display}:1:1: error: cannot read: {error}") from None
    return text.replace("\r\n", "\n").replace("\r", "\n")


def read_source(path: Path) -> str:
    return decode(read_bytes(path), shown(path))
