"""How tfgen shows paths: relative to the project (the nearest folder with .git or pyproject.toml)."""

from __future__ import annotations

from pathlib import Path


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


def shown_path(path: Path) -> str:
    """A file tfgen writes or reads, for messages: relative to the project, else as given."""
    try:
        return path.resolve().relative_to(project_root(Path.cwd().resolve())).as_posix()
    except (ValueError, OSError):
        return path.as_posix()
