"""One record per rule: its code, name, message, documentation and check, registered by `@rule`."""

from __future__ import annotations

import ast
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from tfgen.lint.files import shown

# A check yields (where, fields): `where` is an AST node or a (line, column) pair (1-based column),
# `fields` fill the rule's message template.
Hit = tuple[object, dict]
Check = Callable[[object], Iterator[Hit]]


@dataclass(frozen=True)
class Rule:
    code: str
    name: str
    message: str
    finds: str
    why: str
    instead: str
    check: Check

    def format(self, fields: dict) -> str:
        return self.message.format(**fields)


RULES: dict[str, Rule] = {}


def rule(*, code: str, name: str, message: str, finds: str, why: str, instead: str):
    """Register the decorated check function as rule `code`."""

    def register(check: Check) -> Check:
        if code in RULES:
            raise ValueError(f"rule {code} is registered twice")
        RULES[code] = Rule(code=code, name=name, message=message, finds=finds, why=why, instead=instead, check=check)
        return check

    return register


def hit(where, /, **fields) -> Hit:
    return (where, fields)


def position(where) -> tuple[int, int]:
    """(line, column), both 1-based, of a hit's location."""
    if isinstance(where, ast.AST):
        return where.lineno, where.col_offset + 1
    line, column = where
    return line, column


def rules_in_order() -> list[Rule]:
    return [RULES[code] for code in sorted(RULES)]


@dataclass(frozen=True, order=True)
class Finding:
    path: str
    line: int
    column: int
    code: str
    message: str

    def __str__(self) -> str:
        return f"{shown(self.path)}:{self.line}:{self.column}: {self.code} {self.message}"
