"""Load YAML safely while remembering where every node is, so errors can point at it."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import yaml

from .errors import SpecError, SpecIssue

Loc = tuple[Any, ...]
PLAIN_TAGS = ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")


Pos = tuple[str, int, int]  # file, line, column (1-based)


@dataclass
class Located:
    """Plain Python data from YAML plus the position of each value and each mapping key.

    Positions carry their file: a spec that `extends` another holds nodes of both.
    """

    data: Any
    path: str
    values: dict[Loc, Pos] = field(default_factory=dict)
    keys: dict[Loc, Pos] = field(default_factory=dict)

    def position(self, loc: Loc, *, key: bool = False) -> Pos:
        """Best position for `loc`: the node itself, else its nearest existing ancestor."""
        loc = tuple(loc)
        if key and loc in self.keys:
            return self.keys[loc]
        while loc not in self.values and loc:
            loc = loc[:-1]
        return self.values.get(loc, (self.path, 1, 1))

    def issue(self, loc: Loc, message: str, *, key: bool = False) -> SpecIssue:
        return SpecIssue(*self.position(loc, key=key), dotted(loc), message)


def dotted(loc: Loc) -> str:
    return ".".join(str(part) for part in loc)


def _mark(node: yaml.Node) -> tuple[int, int]:
    return node.start_mark.line + 1, node.start_mark.column + 1


class _Builder:
    def __init__(self, path: str):
        self.path = path
        self.values: dict[Loc, Pos] = {}
        self.keys: dict[Loc, Pos] = {}
        self.issues: list[SpecIssue] = []
        self._scalars = yaml.SafeLoader("")

    def build(self, node: yaml.Node, loc: Loc) -> Any:
        self.values[loc] = (self.path, *_mark(node))
        if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and node.tag not in PLAIN_TAGS:
            self.located(node, loc, f"YAML tag {node.tag} is not allowed (specs hold plain data only)")
            return None
        if isinstance(node, yaml.MappingNode):
            self._scalars.flatten_mapping(node)  # resolve YAML merge keys (<<) like SafeLoader does
            result: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                key = self.scalar(key_node, loc)
                if isinstance(key, (list, dict)):
                    self.located(key_node, loc, "a mapping key must be a plain scalar")
                    continue
                if key in result:
                    _, line, column = self.keys[loc + (key,)]
                    self.located(
                        key_node,
                        loc + (key,),
                        f"duplicate key `{key}` (first given at line {line}, column {column})",
                    )
                    continue
                self.keys[loc + (key,)] = (self.path, *_mark(key_node))
                result[key] = self.build(value_node, loc + (key,))
            return result
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, loc + (i,)) for i, item in enumerate(node.value)]
        return self.scalar(node, loc)

    def scalar(self, node: yaml.Node, loc: Loc) -> Any:
        if not isinstance(node, yaml.ScalarNode):
            return self.build(node, loc)
        try:
            return self._scalars.construct_object(node, deep=True)
        except yaml.constructor.ConstructorError:
            self.located(node, loc, f"YAML tag {node.tag} is not allowed (specs hold plain data only)")
            return None

    def located(self, node: yaml.Node, loc: Loc, message: str) -> None:
        line, column = _mark(node)
        self.issues.append(SpecIssue(self.path, line, column, dotted(loc), message))


def load_text(text: str, path: str) -> Located:
    """Parse YAML text; raise SpecError for syntax errors, duplicate keys and unsafe tags."""
    try:
        node = yaml.compose(text, Loader=yaml.SafeLoader)
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        raise SpecError([SpecIssue(path, line, column, "", f"YAML syntax error: {problem}")]) from None
    if node is None:
        raise SpecError([SpecIssue(path, 1, 1, "", "the spec is empty")])
    builder = _Builder(path)
    data = builder.build(node, ())
    if builder.issues:
        raise SpecError(builder.issues)
    if not isinstance(data, dict):
        raise SpecError([SpecIssue(path, 1, 1, "", "a spec must be a YAML mapping of sections")])
    return Located(data, path, builder.values, builder.keys)


def load_file(path: Path, display: str) -> Located:
    try:
        text = path.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise SpecError([SpecIssue(display, 1, 1, "", "no such spec file")]) from None
    except (OSError, UnicodeDecodeError) as exc:
        raise SpecError([SpecIssue(display, 1, 1, "", f"cannot read the spec: {exc}")]) from None
    return load_text(text, display)


def walk(node: Any, loc: Loc = ()):
    """Every (location, value) of plain YAML data, parents before children."""
    yield loc, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from walk(value, loc + (key,))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from walk(value, loc + (i,))
