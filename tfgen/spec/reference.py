"""The spec reference, `docs/spec-reference.md`, rendered from the spec's JSON Schema.

The schema is what `tfgen schema` prints: every field's type, default, description and example
come from the pydantic models (`tfgen/spec/models/`). The explanations that need more than a field's
description are the sections' prose, in `tfgen/spec/reference_text.py` (a data source's, in its unit's `docs`). `scripts/generate_spec_reference.py`
writes the file; `tests/spec/test_docs.py` fails when the committed file differs from what this gives.
"""

from __future__ import annotations

import json
import re
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from tfgen.sources import SOURCES
from tfgen.spec import reference_text
from tfgen.spec.schema import schema

REFERENCE_PATH = "docs/spec-reference.md"

# The placeholder of a mapping's key in a dotted path; any other mapping's is `<name>`.
KEY_PLACEHOLDERS = {"targets": "<output>", "losses": "<output>", "metrics": "<output>", "model.outputs": "<output>"}
ITEM_PLACEHOLDER = "<i>"
# Where a definition used in several places is documented; elsewhere its fields are not repeated.
# `adapt` is refused on the layers of `data.train.preprocess`/`augment`, so LayerSpec lives here
# (and the residual block, which model.branches holds first).
HOMES = {"LayerSpec": f"model.layers.{ITEM_PLACEHOLDER}", "Residual": f"model.layers.{ITEM_PLACEHOLDER}"}
TYPE_NAMES = {"LayerSpec": "Keras layer", "LossSpec": "Keras loss", "Residual": "`{residual: [...]}`"}
PLAIN_STRING = re.compile(r"[A-Za-z_][A-Za-z0-9_./<>*+-]*\Z")
YAML_WORDS = {"true", "false", "null", "yes", "no", "on", "off", "y", "n", "~"}


@dataclass(frozen=True)
class Section:
    """One heading of the reference: the top-level fields it documents, and its prose."""

    title: str
    roots: tuple[str, ...]
    after: str = ""


def data_text() -> str:
    """`data`'s prose: each registered source's paragraph (its unit's `docs`), then the rest."""
    return "\n\n".join([*(unit.docs.strip() for unit in SOURCES.values()), reference_text.DATA.strip()])


SECTIONS = (
    Section(
        "Top level",
        ("name", "seed", "output_dir", "precision", "deterministic", "extends"),
        after=reference_text.TOP_LEVEL,
    ),
    Section("`data`", ("data",), after=data_text()),
    Section("`model` and `targets`", ("model", "targets"), after=reference_text.MODEL),
    Section("`losses`, `metrics`, `optimizer`", ("losses", "metrics", "optimizer")),
    Section(
        "`algorithm`, `networks`, `optimizers`",
        ("algorithm", "networks", "optimizers"),
        after="What a step does, and the networks and optimizers of an algorithm that trains several: "
        "[docs/algorithms.md](algorithms.md).",
    ),
    Section("`train`", ("train",), after=reference_text.TRAIN),
    Section("`algorithm`", ("algorithm",), after=reference_text.ALGORITHM),
    Section("`loss_weighting` and `debug`", ("loss_weighting", "debug")),
    Section("`strategy`", ("strategy",), after=reference_text.STRATEGY),
    Section("`checkpoint`", ("checkpoint",), after=reference_text.CHECKPOINT),
    Section("`logging`", ("logging",)),
    Section(
        "`sweep`", ("sweep",), after="Read by `tfgen sweep` only (docs/sweeps.md); the generated script ignores it."
    ),
)


@dataclass(frozen=True)
class Row:
    """One field of the reference."""

    path: str
    type: str
    default: str
    example: str
    description: str
    group: str = ""  # the `type:` of the union member it belongs to (the sources), or ""


class Walker:
    """Turns the JSON Schema into rows, each shared definition expanded once."""

    def __init__(self, document: dict[str, Any]):
        self.document = document
        self.definitions: dict[str, Any] = document["$defs"]
        self.homes: dict[str, str] = {}  # definition -> the dotted path where its fields are listed

    def definition(self, node: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
        if "$ref" not in node:
            return None
        name = node["$ref"].rsplit("/", 1)[-1]
        return name, self.definitions[name]

    def section_rows(self, root: str) -> list[Row]:
        node = self.document["properties"][root]
        found = self.definition(node)
        if found and "properties" in found[1]:
            self.homes[found[0]] = root
            return list(self.object_rows(found[1], root + ".", ""))
        return list(self.field_rows(root, node, root in self.document.get("required", []), ""))

    def object_rows(self, model: dict[str, Any], prefix: str, group: str) -> Iterator[Row]:
        required = model.get("required", [])
        for name, node in model["properties"].items():
            yield from self.field_rows(prefix + name, node, name in required, group)

    def field_rows(self, path: str, node: dict[str, Any], required: bool, group: str) -> Iterator[Row]:
        if "discriminator" in node:
            yield from self.union_rows(path, node, required)
            return
        children: list[Row] = []
        shared: list[tuple[str, str]] = []  # (where it is held here, where its fields are listed)
        for where, name, model in self.nested(path, node):
            home = HOMES.get(name, where)
            if home != where:  # documented at its home
                if not is_keras_object(model):
                    shared.append((where, home))
                continue
            if name in self.homes:
                if not is_keras_object(model):
                    shared.append((where, self.homes[name]))
                continue
            self.homes[name] = where
            children.extend(self.definition_rows(where, model, group))
        description = node.get("description", "")
        if shared and not children:
            where, home = shared[0]
            description += f" ({'fields' if where == path else 'each item has the fields'} of `{home}`)"
        yield Row(path, type_text(node, self), default_text(node, required), example_text(node), description, group)
        yield from children

    def union_rows(self, path: str, node: dict[str, Any], required: bool) -> Iterator[Row]:
        """A discriminated union (the sources): each member's fields filed under its `type`."""
        members = [self.definition(member) for member in node["oneOf"]]
        description = node.get("description", "")
        if all(name in self.homes for name, _ in members):
            description += f" (fields of `{self.homes[members[0][0]]}`)"
            members = []
        yield Row(path, type_text(node, self), default_text(node, required), example_text(node), description)
        for name, model in members:
            self.homes[name] = path
            yield from self.object_rows(model, path + ".", model["properties"]["type"]["const"])

    def definition_rows(self, where: str, model: dict[str, Any], group: str) -> Iterator[Row]:
        if is_keras_object(model):
            for key, node in keras_object_keys(model).items():
                yield from self.field_rows(f"{where}.{key}", node, False, group)
            return
        yield from self.object_rows(model, where + ".", group)

    def nested(self, path: str, node: dict[str, Any]) -> Iterator[tuple[str, str, dict[str, Any]]]:
        """(dotted path, definition name, definition) of the objects a field holds."""
        found = self.definition(node)
        if found:
            yield path, found[0], found[1]
        if node.get("type") == "object" and "properties" in node:
            yield path, path, node  # an object written out in place (`adapt: {batches: N}`)
        for member in node.get("anyOf", []) + node.get("oneOf", []):
            yield from self.nested(path, member)
        if isinstance(node.get("items"), dict):
            yield from self.nested(f"{path}.{ITEM_PLACEHOLDER}", node["items"])
        if isinstance(node.get("additionalProperties"), dict):
            yield from self.nested(f"{path}.{KEY_PLACEHOLDERS.get(path, '<name>')}", node["additionalProperties"])


def is_keras_object(model: dict[str, Any]) -> bool:
    """A Keras object's schema: a class name, or a mapping with `type` and any arguments."""
    members = model.get("anyOf", [])
    return any(member.get("type") == "string" for member in members) and any(
        member.get("additionalProperties") is True for member in members
    )


def keras_object_keys(model: dict[str, Any]) -> dict[str, Any]:
    """The keys tfgen reads on a Keras object, besides `type` (its constructor arguments aside)."""
    for member in model["anyOf"]:
        if member.get("type") == "object":
            return {key: node for key, node in member.get("properties", {}).items() if key != "type"}
    return {}


def type_text(node: dict[str, Any], walker: Walker) -> str:
    """A field's type in words, from its schema node."""
    found = walker.definition(node)
    if found:
        return definition_text(*found)
    if "discriminator" in node:
        return "one of: " + ", ".join(f"`type: {key}`" for key in node["discriminator"]["mapping"])
    members = node.get("anyOf") or node.get("oneOf")
    if members:
        return union_text(members, walker)
    if "enum" in node:
        return " or ".join(f"`{value}`" for value in node["enum"])
    if "const" in node:
        return f"`{node['const']}`"
    kind = node.get("type")
    if kind in KIND_TEXT:
        return KIND_TEXT[kind](node, walker)
    return kind or "any value"


def definition_text(name: str, model: dict[str, Any]) -> str:
    """A named model's type: its own words, a Keras object, or a mapping."""
    if name in TYPE_NAMES:
        return TYPE_NAMES[name]
    return "Keras object" if is_keras_object(model) else "mapping"


def union_text(members: list[dict[str, Any]], walker: Walker) -> str:
    """Each member's type once, joined by "or", null last."""
    parts = [type_text(member, walker) for member in members if member.get("type") != "null"]
    if any(member.get("type") == "null" for member in members):
        parts.append("null")
    return " or ".join(dict.fromkeys(parts))


def list_text(node: dict[str, Any], walker: Walker) -> str:
    items = node.get("items", {})
    text = f"list of {grouped(type_text(items, walker))}" if items else "list"
    return text + (f" (at least {node['minItems']})" if "minItems" in node else "")


def mapping_text(node: dict[str, Any], walker: Walker) -> str:
    values = node.get("additionalProperties")
    text = f"mapping of name to {grouped(type_text(values, walker))}" if isinstance(values, dict) else "mapping"
    return text + (f" (at least {node['minProperties']})" if "minProperties" in node else "")


def number_text(node: dict[str, Any], walker: Walker) -> str:
    return node["type"] + bounds_text(node)


def string_text(node: dict[str, Any], walker: Walker) -> str:
    if "pattern" in node:
        return f"string matching `{node['pattern']}`"
    return "non-empty string" if node.get("minLength") == 1 else "string"


KIND_TEXT = {  # a JSON Schema `type` in words
    "array": list_text,
    "object": mapping_text,
    "integer": number_text,
    "number": number_text,
    "string": string_text,
}


def grouped(text: str) -> str:
    """A union inside a list or mapping type, parenthesised."""
    outside = re.sub(r"\([^()]*\)", "", text)
    return f"({text})" if " or " in outside else text


def bounds_text(node: dict[str, Any]) -> str:
    parts = []
    for key, sign in (("minimum", ">="), ("exclusiveMinimum", ">"), ("maximum", "<="), ("exclusiveMaximum", "<")):
        if key in node:
            parts.append(f"{sign} {node[key]}")
    return f" {', '.join(parts)}" if parts else ""


def default_text(node: dict[str, Any], required: bool) -> str:
    if required:
        return "required"
    if "default" not in node:
        return "none"
    return f"`{flow(node['default'])}`"


def example_text(node: dict[str, Any]) -> str:
    examples = node.get("examples")
    return f"`{flow(examples[0])}`" if examples else ""


def flow(value: Any) -> str:
    """A value as YAML flow style, as it is written in a spec (`type` first in a mapping)."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, (int, float)):
        return repr(value)
    if isinstance(value, str):
        plain = PLAIN_STRING.match(value) and value.lower() not in YAML_WORDS
        return value if plain else json.dumps(value)
    if isinstance(value, list):
        return "[" + ", ".join(flow(item) for item in value) + "]"
    if isinstance(value, dict):
        keys = sorted(value, key=lambda key: key != "type")
        return "{" + ", ".join(f"{key}: {flow(value[key])}" for key in keys) + "}"
    raise TypeError(f"no YAML form for {value!r}")


def cell(text: str) -> str:
    """Text in a Markdown table cell: pipes escaped, no line breaks."""
    return text.replace("|", "\\|").replace("\n", " ")


def table(rows: list[Row]) -> str:
    lines = ["| field | type | default | example | description |", "|---|---|---|---|---|"]
    for row in rows:
        cells = [f"`{row.path}`", row.type, row.default, row.example, row.description]
        lines.append("| " + " | ".join(cell(text) for text in cells) + " |")
    return "\n".join(lines)


def section_text(section: Section, walker: Walker) -> str:
    rows = [row for root in section.roots for row in walker.section_rows(root)]
    parts = [f"## {section.title}"]
    intro = section_intro(section, walker)
    if intro:
        parts.append(intro)
    parts.append(table([row for row in rows if not row.group]))
    for group in dict.fromkeys(row.group for row in rows if row.group):
        parts.append(group_text(group, [row for row in rows if row.group == group], walker))
    if section.after:
        parts.append(section.after.strip())
    return "\n\n".join(parts)


def section_intro(section: Section, walker: Walker) -> str:
    """The section's model docstring, when it documents one model."""
    if len(section.roots) != 1:
        return ""
    found = walker.definition(walker.document["properties"][section.roots[0]])
    return sentence(found[1].get("description", "")) if found else ""


def group_text(group: str, rows: list[Row], walker: Walker) -> str:
    """A table of one union member (a source type) with its docstring."""
    model = walker.definitions[group_definition(group, walker)]
    lines = [f"### `type: {group}`", sentence(model.get("description", "")), table(rows)]
    return "\n\n".join(line for line in lines if line)


def group_definition(group: str, walker: Walker) -> str:
    for name, model in walker.definitions.items():
        kind = model.get("properties", {}).get("type", {})
        if kind.get("const") == group:
            return name
    raise KeyError(group)


def sentence(text: str) -> str:
    """A docstring as one paragraph."""
    text = " ".join(text.split())
    return text[:1].upper() + text[1:] if text else ""


def spec_reference() -> str:
    """The Markdown of docs/spec-reference.md."""
    walker = Walker(schema())
    parts = [reference_text.HEADER.strip(), reference_text.WRITING.strip()]
    parts.extend(section_text(section, walker) for section in SECTIONS)
    return "\n\n".join(parts) + "\n"
