"""Build, check and diff generated files: render everything first, then write atomically."""

from __future__ import annotations

import difflib
import os
import re
import tempfile
from dataclasses import dataclass
from pathlib import Path

from .errors import SpecError
from .errors import SpecIssue
from .render import RUNTIME_FILE, render, render_runtime
from .resolve import resolve, resolved_sha256
from .validate import validate

HASH_LINE = re.compile(r"^# Spec sha256: ([0-9a-f]{64})$", re.MULTILINE)


@dataclass(frozen=True)
class Target:
    """One spec and the file generated from it."""

    spec: Path | None  # None: the support module shared by every script
    output: Path
    text: str  # the generated source
    spec_sha256: str


def project_root(start: Path) -> Path:
    """The nearest ancestor holding .git or pyproject.toml (spec paths in headers are relative to it)."""
    for folder in [start, *start.parents]:
        if (folder / ".git").exists() or (folder / "pyproject.toml").exists():
            return folder
    return start


def display_path(path: Path) -> str:
    """The spec's path as written in headers and errors: relative to the project, POSIX style."""
    resolved = path.resolve()
    root = project_root(Path.cwd().resolve())
    try:
        return resolved.relative_to(root).as_posix()
    except ValueError:
        return path.name


def plan_targets(specs: list[Path], out_dir: Path, overrides: list[str] | tuple[str, ...] = ()) -> list[Target]:
    """Render every spec; raise SpecError with the problems of all specs if any is invalid."""
    targets, issues = [], []
    for spec_path in specs:
        shown = display_path(spec_path)
        if f"{spec_path.stem}.py" == RUNTIME_FILE:
            issues.append(SpecIssue(shown, 1, 1, "", f"a spec named `{spec_path.name}` would overwrite the support module {RUNTIME_FILE}: rename it"))
            continue
        try:
            doc = resolve(spec_path, shown, overrides)
            spec = validate(doc)
        except SpecError as error:
            issues.extend(error.issues)
            continue
        sha = resolved_sha256(doc)
        targets.append(Target(spec_path, out_dir / f"{spec_path.stem}.py", render(spec, spec_path=shown, sha256=sha), sha))
    if issues:
        raise SpecError(issues)
    # One support module beside the scripts, shared by all of them.
    return [*targets, Target(None, out_dir / RUNTIME_FILE, render_runtime(), "")]


def write_atomically(path: Path, text: str) -> None:
    path.parent.mkdir(parents=True, exist_ok=True)
    fd, temporary = tempfile.mkstemp(dir=path.parent, prefix=f".{path.name}.", suffix=".tmp")
    try:
        with os.fdopen(fd, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        os.replace(temporary, path)
    except BaseException:
        Path(temporary).unlink(missing_ok=True)
        raise


def current(target: Target) -> str | None:
    try:
        return target.output.read_text(encoding="utf-8")
    except FileNotFoundError:
        return None


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
