"""`--deep` for csv sources: each file is there and its header (row 1) names every column
the spec maps (read as the generated script reads it; relative paths start at the working
directory)."""

from __future__ import annotations

import csv
from collections.abc import Iterator
from pathlib import Path
from typing import Any

from tfgen.errors import SpecIssue
from tfgen.spec.loader import Loc, Located
from tfgen.spec.models import Spec

HEADER_BYTES = 2**20  # of a file's first line read (a longer header is refused)


def deep(doc: Located, spec: Spec, loc: Loc, source: Any) -> list[SpecIssue]:
    """The problems with a csv source's file or header."""
    return [doc.issue(where, message) for where, message in _source_problems(source, loc)]


def _source_problems(source, loc: Loc) -> Iterator[tuple[Loc, str]]:
    path = Path(source.path)
    if not path.is_file():
        yield (*loc, "path"), f"no file {source.path} (a relative path starts at the working directory)"
        return
    header, problem = _header(path, source.delimiter)
    if problem:
        yield (*loc, "path"), f"{source.path}: {problem}"
        return
    for field in ("x", "y"):
        mapping = getattr(source, field)
        named = mapping if isinstance(mapping, dict) else {None: mapping}
        for name, columns in named.items():
            where = (*loc, field) if name is None else (*loc, field, name)
            for column in [columns] if isinstance(columns, str) else columns:
                if column not in header:
                    yield where, f"{source.path} has no column `{column}` (its header: {', '.join(header)})"


def _header(path: Path, delimiter: str) -> tuple[list[str], str | None]:
    """The column names of the file's first line, or why it has none."""
    try:
        with path.open("rb") as file:
            line = file.readline(HEADER_BYTES + 1)
    except OSError as error:
        return [], f"cannot be read ({error.strerror})"
    if len(line) > HEADER_BYTES:
        return [], "row 1 (the header) is over 1 MiB long: not a header"
    try:
        text = line.decode("utf-8-sig").rstrip("\r\n")
    except UnicodeDecodeError:
        return [], "row 1 (the header) is not UTF-8 text"
    if not text:
        return [], "row 1 is empty: a csv source needs a header row naming its columns"
    if "\r" in text:  # the whole file is one line to the script's tf.data
        return [], "its lines end in a carriage return (CR) only: save it with LF (or CRLF) line endings"
    try:
        return next(csv.reader([text], delimiter=delimiter)), None
    except csv.Error as error:
        return [], f"row 1 (the header) is not CSV: {error}"
