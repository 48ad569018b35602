"""Load YAML safely while remembering where every node is, so errors can point at it."""

from __future__ import annotations

import datetime
import re
import stat
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, ClassVar

import yaml

from tfgen.errors import SpecError, SpecIssue

Loc = tuple[Any, ...]
PLAIN_TAGS = ("tag:yaml.org,2002:map", "tag:yaml.org,2002:seq")


Pos = tuple[str, int, int]  # file, line, column (1-based)

# Limits for YAML that may be hostile (a spec is a few kilobytes and a few hundred nodes): the
# file's size, the nesting depth, the values built in all (aliases and merge keys included) and
# the values built through aliases (a "billion laughs" document expands a few anchors 10**9 times).
MAX_BYTES = 1024 * 1024
MAX_DEPTH = 100
MAX_NODES = 20_000
MAX_ALIAS_NODES = 5_000


class _SpecLoader(yaml.SafeLoader):
    """SafeLoader without YAML 1.1's sexagesimal numbers (`1:30` stays a string, not 90), and
    with a cap on nesting depth (PyYAML's composer recurses: 500 levels are a RecursionError)."""

    yaml_implicit_resolvers: ClassVar[dict] = {
        first: [
            (tag, regexp)
            for tag, regexp in resolvers
            if tag not in ("tag:yaml.org,2002:int", "tag:yaml.org,2002:float")
        ]
        for first, resolvers in yaml.SafeLoader.yaml_implicit_resolvers.items()
    }

    def __init__(self, stream: str):
        super().__init__(stream)
        self.depth = 0
        self.nodes = 0

    def compose_node(self, parent, index):
        self.depth += 1
        self.nodes += 1
        try:
            if self.nodes > MAX_NODES:
                mark = self.peek_event().start_mark
                raise _Limit(mark.line + 1, mark.column + 1, f"the spec holds more than {MAX_NODES} values")
            if self.depth > MAX_DEPTH:
                mark = self.peek_event().start_mark
                raise _Limit(mark.line + 1, mark.column + 1, f"the YAML nests deeper than {MAX_DEPTH} levels")
            return super().compose_node(parent, index)
        finally:
            self.depth -= 1


# YAML 1.1 integers and floats as SafeLoader reads them, less the base-60 forms (`1:30`), plus
# YAML 1.2's exponent without a dot (`1e-4`), which users write and expect to be a number.
_SpecLoader.add_implicit_resolver(
    "tag:yaml.org,2002:int",
    re.compile(r"""^(?:[-+]?0b[0-1_]+|[-+]?0[0-7_]+|[-+]?(?:0|[1-9][0-9_]*)|[-+]?0x[0-9a-fA-F_]+)$""", re.VERBOSE),
    list("-+0123456789"),
)
_SpecLoader.add_implicit_resolver(
    "tag:yaml.org,2002:float",
    re.compile(
        r"""^(?:[-+]?(?:[0-9][0-9_]*)\.[0-9_]*(?:[eE][-+]?[0-9]+)?|\.[0-9][0-9_]*(?:[eE][-+]?[0-9]+)?"""
        r"""|[-+]?[0-9][0-9_]*[eE][-+]?[0-9]+"""  # YAML 1.2's `1e-4`, a string to YAML 1.1
        r"""|[-+]?\.(?:inf|Inf|INF)|\.(?:nan|NaN|NAN))$""",
        re.VERBOSE,
    ),
    list("-+0123456789."),
)


class _Limit(Exception):
    """A size limit hit while composing (line and column 1-based)."""

    def __init__(self, line: int, column: int, message: str):
        super().__init__(message)
        self.line, self.column, self.message = line, column, message


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
    def __init__(self, path: str, offset: tuple[int, int] = (0, 0)):
        self.path = path
        self.offset = offset  # (lines, columns) to add: a `--set` value sits inside its argument
        self.values: dict[Loc, Pos] = {}
        self.keys: dict[Loc, Pos] = {}
        self.issues: list[SpecIssue] = []
        self._scalars = _SpecLoader("")
        self.built = 0  # values built, aliases expanded
        self.through_alias = 0  # values built again because an alias repeats them
        self._seen: set[int] = set()
        self._open: set[int] = set()  # the nodes being built (an alias to one of them is a loop)
        self._inside_alias = 0

    def pos(self, node: yaml.Node) -> Pos:
        line, column = _mark(node)
        return (self.path, line + self.offset[0], column + (self.offset[1] if line == 1 else 0))

    def build(self, node: yaml.Node, loc: Loc) -> Any:
        if id(node) in self._open:
            self.located(node, loc, "a YAML alias refers to a node that contains it")
            return None
        repeated = id(node) in self._seen and isinstance(node, (yaml.MappingNode, yaml.SequenceNode))
        self._seen.add(id(node))
        self._open.add(id(node))
        self._inside_alias += repeated
        try:
            return self._build(node, loc)
        finally:
            self._inside_alias -= repeated
            self._open.discard(id(node))

    def _count(self, node: yaml.Node, loc: Loc) -> None:
        self.built += 1
        self.through_alias += self._inside_alias > 0
        if self.through_alias > MAX_ALIAS_NODES:
            raise _Limit(*self.pos(node)[1:], f"YAML aliases expand to more than {MAX_ALIAS_NODES} values")
        if self.built > MAX_NODES:
            raise _Limit(*self.pos(node)[1:], f"the spec holds more than {MAX_NODES} values")

    def _build(self, node: yaml.Node, loc: Loc) -> Any:
        self._count(node, loc)
        self.values[loc] = self.pos(node)
        if isinstance(node, (yaml.MappingNode, yaml.SequenceNode)) and node.tag not in PLAIN_TAGS:
            self.located(node, loc, f"YAML tag {node.tag} is not allowed (specs hold plain data only)")
            return None
        if isinstance(node, yaml.MappingNode):
            self.flatten(node)  # resolve YAML merge keys (<<) like SafeLoader does
            result: dict[Any, Any] = {}
            for key_node, value_node in node.value:
                key = self.scalar(key_node, loc)
                if isinstance(key, (list, dict)):
                    self.located(key_node, loc, "a mapping key must be a plain scalar")
                    continue
                if key in result:
                    _, line, column = self.keys[(*loc, key)]
                    self.located(
                        key_node,
                        (*loc, key),
                        f"duplicate key `{key}` (first given at line {line}, column {column})",
                    )
                    continue
                self.keys[(*loc, key)] = self.pos(key_node)
                result[key] = self.build(value_node, (*loc, key))
            return result
        if isinstance(node, yaml.SequenceNode):
            return [self.build(item, (*loc, i)) for i, item in enumerate(node.value)]
        return self.scalar(node, loc)

    def flatten(self, node: yaml.MappingNode, depth: int = 0) -> None:
        """Resolve YAML merge keys (`<<`) as SafeLoader does, under the same caps: merges of
        aliases multiply too (`<<: [*a, *a, ...]` over a few levels is another bomb)."""
        if depth > MAX_DEPTH:
            raise _Limit(*self.pos(node)[1:], f"YAML merge keys nest deeper than {MAX_DEPTH} levels")
        merge: list[tuple[yaml.Node, yaml.Node]] = []
        pairs: list[tuple[yaml.Node, yaml.Node]] = []
        for key_node, value_node in node.value:
            if key_node.tag != "tag:yaml.org,2002:merge":
                if key_node.tag == "tag:yaml.org,2002:value":
                    key_node.tag = "tag:yaml.org,2002:str"
                pairs.append((key_node, value_node))
                continue
            sources = value_node.value if isinstance(value_node, yaml.SequenceNode) else [value_node]
            for source in reversed(sources):
                if source is node or id(source) in self._open:
                    raise _Limit(*self.pos(source)[1:], "a YAML merge key (<<) refers to a node that contains it")
                if not isinstance(source, yaml.MappingNode):
                    raise _Limit(*self.pos(source)[1:], "a merge key (<<) takes a mapping or a list of mappings")
                self.flatten(source, depth + 1)
                merge.extend(source.value)
                if len(merge) > MAX_ALIAS_NODES:
                    raise _Limit(*self.pos(node)[1:], f"YAML merge keys expand to more than {MAX_ALIAS_NODES} values")
        node.value = merge + pairs

    def scalar(self, node: yaml.Node, loc: Loc) -> Any:
        if not isinstance(node, yaml.ScalarNode):
            return self.build(node, loc)
        try:
            value = self._scalars.construct_object(node, deep=True)
        except yaml.constructor.ConstructorError:
            self.located(node, loc, f"YAML tag {node.tag} is not allowed (specs hold plain data only)")
            return None
        if isinstance(value, bytes):
            self.located(node, loc, "YAML binary data (!!binary) is not allowed (specs hold plain data only)")
            return None
        if isinstance(value, (datetime.date, datetime.datetime)):
            self.located(node, loc, f"`{node.value}` is a YAML timestamp, not plain data: quote it to make it a string")
            return None
        return value

    def located(self, node: yaml.Node, loc: Loc, message: str) -> None:
        self.issues.append(SpecIssue(*self.pos(node), dotted(loc), message))


def _reader_error(exc: yaml.reader.ReaderError, text: str, path: str) -> SpecIssue:
    position = max(0, min(exc.position, len(text)))
    line = text.count("\n", 0, position) + 1
    column = position - (text.rfind("\n", 0, position) + 1) + 1
    character = exc.character if isinstance(exc.character, str) else chr(exc.character)
    return SpecIssue(path, line, column, "", f"the control character #x{ord(character):04x} is not allowed in YAML")


def _compose(text: str, path: str, offset: tuple[int, int] = (0, 0)) -> yaml.Node | None:
    def issue(line: int, column: int, message: str) -> SpecError:
        return SpecError([SpecIssue(path, line + offset[0], column + (offset[1] if line == 1 else 0), "", message)])

    try:
        loader = _SpecLoader(text)
        try:
            return loader.get_single_node()
        finally:
            loader.dispose()
    except _Limit as limit:
        raise issue(limit.line, limit.column, limit.message) from None
    except yaml.reader.ReaderError as exc:
        found = _reader_error(exc, text, path)
        raise issue(found.line, found.column, found.message) from None
    except yaml.MarkedYAMLError as exc:
        mark = exc.problem_mark or exc.context_mark
        line, column = (mark.line + 1, mark.column + 1) if mark else (1, 1)
        problem = exc.problem or exc.context or "invalid YAML"
        raise issue(line, column, f"YAML syntax error: {problem}") from None
    except yaml.YAMLError as exc:
        raise issue(1, 1, f"YAML error: {exc}") from None


def _build(node: yaml.Node, path: str, offset: tuple[int, int] = (0, 0), loc: Loc = ()) -> _Builder:
    builder = _Builder(path, offset)
    try:
        builder.data = builder.build(node, loc)
    except _Limit as limit:
        raise SpecError([SpecIssue(path, limit.line, limit.column, "", limit.message)]) from None
    if builder.issues:
        raise SpecError(builder.issues)
    return builder


def load_text(text: str, path: str) -> Located:
    """Parse YAML text; raise SpecError for syntax errors, duplicate keys, unsafe tags and
    documents past the size limits."""
    node = _compose(text, path)
    if node is None:
        raise SpecError([SpecIssue(path, 1, 1, "", "the spec is empty")])
    builder = _build(node, path)
    if not isinstance(builder.data, dict):
        raise SpecError([SpecIssue(path, 1, 1, "", "a spec must be a YAML mapping of sections")])
    return Located(builder.data, path, builder.values, builder.keys)


def load_value(text: str, label: str, column: int, loc: Loc = ()) -> Any:
    """One `--set` value (for `loc`), read as a spec value is (errors point into the argument `label`)."""
    node = _compose(text, label, (0, column - 1))
    return None if node is None else _build(node, label, (0, column - 1), loc).data


def load_file(path: Path, display: str) -> Located:
    try:
        if stat.S_ISFIFO(path.stat().st_mode) or stat.S_ISSOCK(path.stat().st_mode):
            # Opening a FIFO would wait for a writer forever.
            raise SpecError(
                [SpecIssue(display, 1, 1, "", "cannot read the spec: it is a FIFO or a socket, not a file")]
            )
        with path.open("rb") as handle:
            raw = handle.read(MAX_BYTES + 1)  # never the whole stream: `extends: /dev/zero`
    except FileNotFoundError:
        raise SpecError([SpecIssue(display, 1, 1, "", "no such spec file")]) from None
    except IsADirectoryError:
        raise SpecError([SpecIssue(display, 1, 1, "", "cannot read the spec: it is a directory")]) from None
    except OSError as exc:
        raise SpecError([SpecIssue(display, 1, 1, "", f"cannot read the spec: {exc.strerror or exc}")]) from None
    if len(raw) > MAX_BYTES:
        raise SpecError(
            [SpecIssue(display, 1, 1, "", f"the spec is larger than {MAX_BYTES // 1024} KiB (the limit for a spec)")]
        )
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        line = raw.count(b"\n", 0, exc.start) + 1
        column = exc.start - (raw.rfind(b"\n", 0, exc.start) + 1) + 1
        raise SpecError([SpecIssue(display, line, column, "", "cannot read the spec: it is not UTF-8 text")]) from None
    return load_text(text, display)


def walk(node: Any, loc: Loc = ()):
    """Every (location, value) of plain YAML data, parents before children."""
    yield loc, node
    if isinstance(node, dict):
        for key, value in node.items():
            yield from walk(value, (*loc, key))
    elif isinstance(node, list):
        for i, value in enumerate(node):
            yield from walk(value, (*loc, i))
