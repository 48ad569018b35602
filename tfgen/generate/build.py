"""Build, check and diff generated files: render everything first, then write atomically."""

from __future__ import annotations

import contextlib
import difflib
import functools
import os
import re
import stat
import tempfile
from dataclasses import dataclass
from pathlib import Path

from tfgen.errors import SpecIssue, UsageError
from tfgen.generate.render import render
from tfgen.generate.runtime import vendored_runtime
from tfgen.generate.selfcheck import require_clean
from tfgen.paths import display_path, shown_path
from tfgen.spec.load import Issues, Loaded, load_spec
from tfgen.spec.resolve import resolved_sha256

# The sha256 of the spec a script was generated from: its SPEC_SHA256 constant.
HASH_LINE = re.compile(r'^SPEC_SHA256 = "([0-9a-f]{64})"', re.MULTILINE)
MAX_GENERATED_BYTES = 4 * 2**20  # a file at a generated path larger than this is not tfgen's
KINDS = {
    stat.S_IFIFO: "a FIFO",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
}


@dataclass(frozen=True)
class Target:
    """One spec and the file generated from it."""

    spec: Path | None  # None: a file of the support package shared by every script
    output: Path
    text: str  # the generated source
    spec_sha256: str


def plan_targets(
    specs: list[Path],
    out_dir: Path,
    overrides: list[str] | tuple[str, ...] = (),
    *,
    loaded: dict[Path, Loaded] | None = None,
    vendor: bool = False,
) -> list[Target]:
    """Render every spec; raise SpecError with the problems of all specs if any is invalid.
    `loaded`: specs already loaded (by load_spec), rendered as they are instead of loaded again;
    `vendor`: a copy of the runtime beside the scripts, which they import (`tfgen build --vendor`)."""
    targets, issues = [], Issues()
    given = {spec.resolve() for spec in specs}
    writers: dict[Path, Path] = {}  # output file -> the spec that writes it
    for spec_path in specs:
        shown = display_path(spec_path)
        output = out_dir / f"{spec_path.stem}.py"
        if output.resolve() in given:
            issues.found.append(
                SpecIssue(
                    shown,
                    1,
                    1,
                    "",
                    f"the generated script {display_path(output)} would overwrite a spec given to this command: rename the spec or pick another --out",
                )
            )
            continue
        first = writers.setdefault(output.resolve(), spec_path)
        if first.resolve() == spec_path.resolve() and first is not spec_path:
            continue  # the same spec twice: build it once
        if first is not spec_path:
            issues.found.append(
                SpecIssue(
                    shown,
                    1,
                    1,
                    "",
                    f"{display_path(first)} also writes {display_path(output)} (specs with the same name in one build): rename one",
                )
            )
            continue
        ready = (loaded or {}).get(spec_path) or issues.attempt(load_spec, spec_path, overrides)
        if ready and (target := issues.attempt(_script_target, spec_path, ready, output, vendor)):
            targets.append(target)
    issues.raise_any()
    # --vendor: one copy of the runtime beside the scripts, shared by all of them.
    for name, text in (_checked_runtime() if vendor else {}).items():
        targets.append(Target(None, out_dir / name, text, ""))
    return targets


@functools.cache
def _checked_runtime() -> dict[str, str]:
    """The vendored runtime's files, self-checked once per process (they do not depend on the spec)."""
    runtime = vendored_runtime()
    for name, text in runtime.items():
        require_clean(text, name, "tfgen's support package")
    return runtime


def _script_target(spec_path: Path, loaded: Loaded, output: Path, vendor: bool) -> Target:
    """The script generated from one valid spec."""
    shown, doc, spec = loaded
    sha = resolved_sha256(doc)
    # Where the script finds user modules beside the spec: relative, so the same bytes anywhere.
    spec_dir = Path(os.path.relpath(spec_path.resolve().parent, output.parent.resolve())).as_posix()
    text = render(spec, spec_path=shown, sha256=sha, spec_dir=spec_dir, vendored=vendor)
    require_clean(text, output.name, shown)
    return Target(spec_path, output, text, sha)


class OutputError(UsageError):
    """A file could not be written or read (exit code 2; nothing was changed)."""


def _temporary_pattern(path: Path) -> re.Pattern[str]:
    """The names `write_files` gives its temporary files for `path` (as tempfile.mkstemp makes them)."""
    return re.compile(rf"\.{re.escape(path.name)}\.[a-z0-9_]+\.tmp\Z")


def _mode(path: Path) -> int:
    """The mode to give `path`: its current one when it exists, else 0o666 less the umask."""
    try:
        return path.stat().st_mode & 0o7777
    except OSError:
        mask = os.umask(0o022)
        os.umask(mask)
        return 0o666 & ~mask


def _reason(error: OSError) -> str:
    return error.strerror or str(error)


def write_files(files: list[tuple[Path, str]]) -> None:
    """Write every file or none: stage each as a temporary file beside it, then rename them all
    into place; if a rename fails, restore what was renamed. Leftover temporary files of these
    paths (from a killed build) are removed first. Raises OutputError naming the file."""
    created: list[Path] = []  # folders made here, removed again on failure
    staged: list[tuple[Path, str, int]] = []  # (path, temporary, mode)
    previous: list[tuple[Path, bytes | None]] = []  # renamed so far, with their former bytes
    try:
        for path, _ in files:
            created.extend(_make_folder(path.parent))
        for path, _ in files:
            _remove_leftovers(path)
        formers = {}  # each file's bytes before the build (None: none), read before any rename
        for path, text in files:
            formers[path] = read_existing(path, "write")
            staged.append(_staged(path, text))
        for path, temporary, _ in staged:
            _rename(temporary, path)
            previous.append((path, formers[path]))
    except BaseException:
        _roll_back(created, staged, previous)
        raise


def _make_folder(folder: Path) -> list[Path]:
    """Create `folder` and its missing parents; the folders made, outermost first."""
    missing = [each for each in [folder, *folder.parents] if not each.exists()]
    try:
        folder.mkdir(parents=True, exist_ok=True)
    except FileExistsError:
        raise OutputError(f"{shown_path(folder)}: cannot create the output folder: a file is in the way") from None
    except OSError as error:
        raise OutputError(f"{shown_path(folder)}: cannot create the output folder: {_reason(error)}") from None
    return list(reversed(missing))


def _remove_leftovers(path: Path) -> None:
    """Remove the temporary files a killed build left beside `path`."""
    pattern = _temporary_pattern(path)
    try:
        leftovers = [entry for entry in os.scandir(path.parent) if pattern.match(entry.name)]
    except OSError as error:
        raise OutputError(f"{shown_path(path.parent)}: cannot list the output folder: {_reason(error)}") from None
    for entry in leftovers:
        Path(entry.path).unlink(missing_ok=True)


def _staged(path: Path, text: str) -> tuple[Path, str, int]:
    """`text` written to a temporary file beside `path`, with the mode `path` will have."""
    mode = _mode(path)
    try:
        return path, _stage(path, text.encode("utf-8"), mode), mode
    except OSError as error:
        raise OutputError(f"{shown_path(path)}: cannot write the generated file: {_reason(error)}") from None


def _rename(temporary: str, path: Path) -> None:
    try:
        os.replace(temporary, path)
    except OSError as error:
        raise OutputError(f"{shown_path(path)}: cannot write the generated file: {_reason(error)}") from None


def _roll_back(
    created: list[Path], staged: list[tuple[Path, str, int]], previous: list[tuple[Path, bytes | None]]
) -> None:
    """Undo a failed `write_files`: temporary files removed, renamed files restored, new folders removed."""
    for _, temporary, _ in staged:
        Path(temporary).unlink(missing_ok=True)
    for path, former in reversed(previous):
        _restore(path, former)
    for folder in reversed(created):
        with contextlib.suppress(OSError):
            folder.rmdir()


def _restore(path: Path, former: bytes | None) -> None:
    """Put back a file's former bytes (or remove it when it did not exist), best effort."""
    try:
        if former is None:
            path.unlink(missing_ok=True)
        else:
            os.replace(_stage(path, former, _mode(path)), path)
    except OSError:
        pass


def _stage(path: Path, data: bytes, mode: int) -> str:
    """Write `data` to a temporary file beside `path` (named for leftover clean-up) with `mode`."""
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "wb") as handle:
            handle.write(data)
        os.chmod(temporary, mode)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise
    return temporary


def write_atomically(path: Path, text: str) -> None:
    write_files([(path, text)])


def read_existing(path: Path, doing: str = "read") -> bytes | None:
    """The bytes of the file at `path` (links followed), or None when there is none. Only a
    regular file of at most MAX_GENERATED_BYTES is opened and read, so a FIFO, a device or a
    huge file at a generated path never hangs or exhausts tfgen: OutputError names the file."""
    where = f"{shown_path(path)}: cannot {doing} the generated file"
    try:
        _regular(os.stat(path), where)  # before opening: a FIFO's open blocks, a device's may act
        fd = os.open(path, os.O_RDONLY | os.O_NONBLOCK | getattr(os, "O_NOCTTY", 0))
    except FileNotFoundError:
        return None
    except OSError as error:
        raise OutputError(f"{where}: {_reason(error)}") from None
    try:
        _regular(os.fstat(fd), where)  # it may have been swapped since the stat
        data = _read_at_most(fd, MAX_GENERATED_BYTES + 1)
    except OSError as error:
        raise OutputError(f"{where}: {_reason(error)}") from None
    finally:
        os.close(fd)
    if len(data) > MAX_GENERATED_BYTES:
        raise OutputError(f"{where}: it is larger than {MAX_GENERATED_BYTES // 2**20} MiB (no generated file is)")
    return data


def _regular(status: os.stat_result, where: str) -> None:
    """OutputError unless `status` is a regular file's of at most MAX_GENERATED_BYTES."""
    if stat.S_ISDIR(status.st_mode):
        raise OutputError(f"{where}: it is a directory")
    if not stat.S_ISREG(status.st_mode):
        kind = KINDS.get(stat.S_IFMT(status.st_mode), "a special file")
        raise OutputError(f"{where}: it is {kind}, not a regular file")
    if status.st_size > MAX_GENERATED_BYTES:
        raise OutputError(f"{where}: it is larger than {MAX_GENERATED_BYTES // 2**20} MiB (no generated file is)")


def _read_at_most(fd: int, limit: int) -> bytes:
    chunks, size = [], 0
    while size < limit and (chunk := os.read(fd, min(2**20, limit - size))):
        chunks.append(chunk)
        size += len(chunk)
    return b"".join(chunks)


def current(target: Target) -> str | None:
    """The generated file on disk, or None when missing; OutputError when it cannot be read."""
    data = read_existing(target.output)
    try:
        return None if data is None else data.decode("utf-8")
    except UnicodeDecodeError:
        raise OutputError(
            f"{shown_path(target.output)}: cannot read the generated file: it is not UTF-8 text"
        ) from None


def problem(target: Target) -> str | None:
    """Why the file on disk differs from what build would write, or None if it matches."""
    existing = current(target)
    if existing is None:
        return "missing"
    if existing == target.text:
        return None
    recorded = HASH_LINE.search(existing)
    if target.spec is not None and recorded and recorded.group(1) != target.spec_sha256:
        return "stale (the spec changed since it was generated)"
    return "hand-edited or made by another tfgen version"


def unified_diff(target: Target) -> str:
    existing = current(target) or ""
    return "".join(
        difflib.unified_diff(
            existing.splitlines(keepends=True),
            target.text.splitlines(keepends=True),
            fromfile=f"a/{display_path(target.output)}",
            tofile=f"b/{display_path(target.output)}",
        )
    )
