"""Resolve a spec: follow `extends` (deep merge, the extending spec wins) and apply `--set`.

The result is one Located document whose nodes keep the file and position they came from, and
whose sha256 (over the resolved data) goes into the generated file's header.
"""

from __future__ import annotations

import hashlib
import json
import re
from pathlib import Path
from typing import Any

import yaml

from tfgen.errors import SpecError, SpecIssue
from tfgen.paths import project_root
from tfgen.spec.loader import Loc, Located, load_file, load_value, walk

LINE_BREAKS = "\n\r\x85\u2028\u2029"
# What the YAML loader refuses in a spec (its reader's own pattern), and line breaks.
UNPRINTABLE = re.compile(f"{yaml.reader.Reader.NON_PRINTABLE.pattern}|[{LINE_BREAKS}]")
MAX_EXTENDS = 50  # specs in one `extends` chain (a real chain is two or three long)


def resolve(path: Path, display: str, overrides: list[str] | tuple[str, ...] = ()) -> Located:
    """Load `path`, merge the specs it extends, then apply `dotted.path=value` overrides."""
    doc = _load_chain(path, display)
    for override in overrides:
        doc = _apply_override(doc, override)
    return doc


def resolved_sha256(doc: Located) -> str:
    canonical = json.dumps(doc.data, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _load_chain(path: Path, display: str) -> Located:
    """The spec and every spec it extends, merged (a loop, not recursion: chains may be long)."""
    docs: list[Located] = []
    chain: list[Path] = []
    while True:
        doc = load_file(path, display)
        docs.append(doc)
        chain.append(path.resolve())
        parent_ref = doc.data.get("extends")
        if parent_ref is None:
            break
        if not isinstance(parent_ref, str) or not parent_ref:
            raise SpecError(
                [doc.issue(("extends",), "`extends` takes the path of another spec (relative to this one)")]
            )
        parent_path = (path.parent / parent_ref).resolve()
        if parent_path in chain:
            cycle = " -> ".join(p.name for p in [*chain, parent_path])
            raise SpecError([doc.issue(("extends",), f"`extends` makes a cycle: {cycle}")])
        if not parent_path.exists():
            raise SpecError([doc.issue(("extends",), f"no such spec to extend: {parent_ref}")])
        if len(chain) >= MAX_EXTENDS:
            raise SpecError([doc.issue(("extends",), f"the `extends` chain is longer than {MAX_EXTENDS} specs")])
        display = _parent_display(display, parent_ref, parent_path)
        path = parent_path
    merged = docs.pop()
    while docs:
        doc = docs.pop()
        child_data = {k: v for k, v in doc.data.items() if k != "extends"}
        merged = _merge(merged, Located(child_data, doc.path, doc.values, doc.keys))
    return merged


def _parent_display(display: str, parent_ref: str, parent_path: Path) -> str:
    """How errors name an extended spec: relative to the project when inside it (as every spec
    is shown), else as the `extends` value gives it (`/etc/passwd` stays absolute)."""
    if Path(parent_ref).is_absolute():
        try:
            return parent_path.relative_to(project_root(Path.cwd().resolve())).as_posix()
        except ValueError:
            return parent_ref
    return _normalise(str(Path(display).parent / parent_ref).replace("\\", "/"))


def _normalise(display: str) -> str:
    parts: list[str] = []
    for part in display.split("/"):
        if part == ".." and parts and parts[-1] != "..":
            parts.pop()
        elif part not in (".", ""):
            parts.append(part)
    return "/".join(parts)


def _merged(base: Any, over: Any) -> Any:
    if isinstance(base, dict) and isinstance(over, dict):
        result = dict(base)
        for key, value in over.items():
            result[key] = _merged(base[key], value) if key in base else value
        return result
    return over


def _merge(parent: Located, child: Located) -> Located:
    data = _merged(parent.data, child.data)
    values, keys = {}, {}
    for loc, _ in walk(data):
        source = child if _owned_by(child.data, loc) else parent
        if loc in source.values:
            values[loc] = source.values[loc]
        if loc in source.keys:
            keys[loc] = source.keys[loc]
    return Located(data, child.path, values, keys)


def _owned_by(data: Any, loc: Loc) -> bool:
    """Whether the node at `loc` of the merged data comes from `data` (the extending spec)."""
    node = data
    for part in loc:
        if (isinstance(node, dict) and part in node) or (
            isinstance(node, list) and isinstance(part, int) and part < len(node)
        ):
            node = node[part]
        else:
            return False
    return True


def _apply_override(doc: Located, override: str) -> Located:
    label = f"--set {_shown(override)}"
    _require_one_printable_line(override, label)
    path_text, sep, raw = override.partition("=")
    if not sep or not path_text:
        raise SpecError([SpecIssue(label, 1, 1, "", "expected `dotted.path=value`")])
    loc: Loc = tuple(int(p) if p.isascii() and p.isdigit() else p for p in path_text.split("."))
    column = len(path_text) + 2
    value: Any = raw if _expects_string(loc) else _parse_value(raw, label, column, loc)
    return set_value(doc, loc, value, label, column)


def set_value(doc: Located, loc: Loc, value: Any, label: str, column: int = 1) -> Located:
    """`doc` with `value` at `loc` (missing mappings on the way made), its nodes located at `label`
    (line 1, `column`): `--set` and each trial of `tfgen sweep`; SpecError where `loc` cannot be."""
    path_text = ".".join(map(str, loc))
    data = _copy(doc.data)
    position = (label, 1, column)
    values = {k: v for k, v in doc.values.items() if k[: len(loc)] != loc}
    keys = {k: v for k, v in doc.keys.items() if k[: len(loc)] != loc}
    node = data
    for depth, part in enumerate(loc[:-1]):
        if isinstance(node, dict):
            if part not in node:  # a place `--set` makes: errors about it blame the argument
                node[part] = {}
                values[loc[: depth + 1]] = keys[loc[: depth + 1]] = (label, 1, 1)
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        else:
            raise SpecError([SpecIssue(label, 1, 1, ".".join(map(str, loc[: depth + 1])), "no such place in the spec")])
    last = loc[-1]
    if (isinstance(node, list) and isinstance(last, int) and last < len(node)) or isinstance(node, dict):
        node[last] = value
    else:
        raise SpecError([SpecIssue(label, 1, 1, path_text, "no such place in the spec")])
    for inner, _ in walk(value, loc):
        values[inner] = position
        keys[inner] = position
    return Located(data, doc.path, values, keys)


def _shown(text: str) -> str:
    """`text` with each character YAML refuses, and each line break, written as an escape: an
    error names the argument on one line, without its control characters acting on the terminal."""
    return UNPRINTABLE.sub(lambda match: match.group().encode("unicode_escape").decode("ascii"), text)


def _require_one_printable_line(override: str, label: str) -> None:
    """SpecError at the first character the YAML loader would refuse in a spec (ESC, NUL, ...) or
    that breaks the line: a `--set` argument is one line of text, whatever its field's type."""
    found = UNPRINTABLE.search(override)
    if found is None:
        return
    character = found.group()
    if character in LINE_BREAKS:
        message = f"the line break #x{ord(character):04x} is not allowed in a --set value (it is one line)"
    else:
        message = f"the control character #x{ord(character):04x} is not allowed in YAML"
    raise SpecError([SpecIssue(label, 1, len("--set ") + found.start() + 1, "", message)])


def _copy(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _copy(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_copy(v) for v in data]
    return data


def _parse_value(raw: str, label: str, column: int, loc: Loc) -> Any:
    """The value of `--set path=value`, read as YAML with the spec's own rules and limits."""
    return load_value(raw, label, column, loc) if raw.strip() else raw


def _expects_string(loc: Loc) -> bool:
    """Whether the schema types the field at `loc` as a plain string (then `--set` keeps it raw)."""
    from tfgen.spec.models import Spec
    from tfgen.spec.models.base import field_types

    current: list[Any] = [Spec]
    for part in loc:
        current = field_types(current, part)
    return bool(current) and all(kind is str for kind in current)
