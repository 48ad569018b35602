"""Resolve a spec: follow `extends` (deep merge, the extending spec wins) and apply `--set`.

The result is one Located document whose nodes keep the file and position they came from, and
whose sha256 (over the resolved data) goes into the generated file's header.
"""

from __future__ import annotations

import hashlib
import json
import typing
from pathlib import Path
from typing import Any

import yaml

from .errors import SpecError, SpecIssue
from .loader import Loc, Located, load_file, walk


def resolve(path: Path, display: str, overrides: list[str] | tuple[str, ...] = ()) -> Located:
    """Load `path`, merge the specs it extends, then apply `dotted.path=value` overrides."""
    doc = _load_chain(path, display, [])
    for override in overrides:
        doc = _apply_override(doc, override)
    return doc


def resolved_sha256(doc: Located) -> str:
    canonical = json.dumps(doc.data, sort_keys=True, ensure_ascii=False, default=str)
    return hashlib.sha256(canonical.encode("utf-8")).hexdigest()


def _load_chain(path: Path, display: str, chain: list[Path]) -> Located:
    doc = load_file(path, display)
    parent_ref = doc.data.get("extends")
    if parent_ref is None:
        return doc
    if not isinstance(parent_ref, str) or not parent_ref:
        raise SpecError([doc.issue(("extends",), "`extends` takes the path of another spec (relative to this one)")])
    parent_path = (path.parent / parent_ref).resolve()
    if parent_path in chain + [path.resolve()]:
        cycle = " -> ".join(p.name for p in chain + [path.resolve(), parent_path])
        raise SpecError([doc.issue(("extends",), f"`extends` makes a cycle: {cycle}")])
    if not parent_path.exists():
        raise SpecError([doc.issue(("extends",), f"no such spec to extend: {parent_ref}")])
    parent_display = str(Path(display).parent / parent_ref).replace("\\", "/")
    parent = _load_chain(parent_path, _normalise(parent_display), chain + [path.resolve()])
    child_data = {k: v for k, v in doc.data.items() if k != "extends"}
    return _merge(parent, Located(child_data, doc.path, doc.values, doc.keys))


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
        if isinstance(node, dict) and part in node:
            node = node[part]
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        else:
            return False
    return True


def _apply_override(doc: Located, override: str) -> Located:
    label = f"--set {override}"
    path_text, sep, raw = override.partition("=")
    if not sep or not path_text:
        raise SpecError([SpecIssue(label, 1, 1, "", "expected `dotted.path=value`")])
    loc: Loc = tuple(int(p) if p.isdigit() else p for p in path_text.split("."))
    value: Any = raw if _expects_string(loc) else _parse_value(raw, label, len(path_text) + 2)
    data = _copy(doc.data)
    node = data
    for depth, part in enumerate(loc[:-1]):
        if isinstance(node, dict):
            node = node.setdefault(part, {})
        elif isinstance(node, list) and isinstance(part, int) and part < len(node):
            node = node[part]
        else:
            raise SpecError([SpecIssue(label, 1, 1, ".".join(map(str, loc[: depth + 1])), "no such place in the spec")])
    last = loc[-1]
    if isinstance(node, list) and isinstance(last, int) and last < len(node):
        node[last] = value
    elif isinstance(node, dict):
        node[last] = value
    else:
        raise SpecError([SpecIssue(label, 1, 1, path_text, "no such place in the spec")])
    values = {k: v for k, v in doc.values.items() if k[: len(loc)] != loc}
    keys = {k: v for k, v in doc.keys.items() if k[: len(loc)] != loc}
    position = (label, 1, len(path_text) + 2)
    for inner, _ in walk(value, loc):
        values[inner] = position
        keys[inner] = position
    return Located(data, doc.path, values, keys)


def _copy(data: Any) -> Any:
    if isinstance(data, dict):
        return {k: _copy(v) for k, v in data.items()}
    if isinstance(data, list):
        return [_copy(v) for v in data]
    return data


def _parse_value(raw: str, label: str, column: int) -> Any:
    try:
        return yaml.safe_load(raw) if raw.strip() else raw
    except yaml.YAMLError as exc:
        raise SpecError([SpecIssue(label, 1, column, "", f"the value is not valid YAML: {exc}")]) from None


def _expects_string(loc: Loc) -> bool:
    """Whether the schema types the field at `loc` as a plain string (then `--set` keeps it raw)."""
    from pydantic import BaseModel

    from .spec import Spec
    from .spec.base import unwrap

    current: list[Any] = [Spec]
    for part in loc:
        following: list[Any] = []
        for kind in current:
            if isinstance(kind, type) and issubclass(kind, BaseModel) and part in kind.model_fields:
                following.extend(unwrap(kind.model_fields[part].annotation))
            elif typing.get_origin(kind) is dict:
                following.extend(unwrap(typing.get_args(kind)[1]))
            elif typing.get_origin(kind) is list:
                following.extend(unwrap(typing.get_args(kind)[0]))
        current = following
    return bool(current) and all(kind is str for kind in current)
