"""Output: text lines, JSON, SARIF 2.1.0, per-code statistics, and the rule table of docs/lint.md."""

from __future__ import annotations

import json
from dataclasses import asdict
from pathlib import Path

from tfgen.lint.registry import RULES, Finding, rules_in_order

TABLE_START = "<!-- lint-rules:start -->"
TABLE_END = "<!-- lint-rules:end -->"


def text_lines(findings: list[Finding]) -> list[str]:
    return [str(f) for f in findings]


def statistics_lines(findings: list[Finding]) -> list[str]:
    counts: dict[str, int] = {}
    for finding in findings:
        counts[finding.code] = counts.get(finding.code, 0) + 1
    return [f"{counts[code]:>5}  {code}  {RULES[code].name}" for code in sorted(counts)]


def to_json(findings: list[Finding]) -> str:
    return json.dumps([asdict(f) for f in findings], indent=2)


def _sarif_rule(code: str) -> dict:
    rule = RULES[code]
    return {
        "id": code,
        "name": rule.name,
        "shortDescription": {"text": rule.finds},
        "fullDescription": {"text": f"{rule.finds}: {rule.why}; instead, {rule.instead}"},
    }


def _sarif_result(finding: Finding) -> dict:
    return {
        "ruleId": finding.code,
        "level": "warning",
        "message": {"text": finding.message},
        "locations": [
            {
                "physicalLocation": {
                    "artifactLocation": {"uri": Path(finding.path).as_posix()},
                    "region": {"startLine": finding.line, "startColumn": finding.column},
                }
            }
        ],
    }


def sarif(findings: list[Finding]) -> dict:
    from tfgen import __version__

    driver = {
        "name": "tfgen",
        "version": __version__,
        "informationUri": "https://github.com/tfgen/tfgen#lint",
        "rules": [_sarif_rule(code) for code in sorted(RULES)],
    }
    return {
        "version": "2.1.0",
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "runs": [{"tool": {"driver": driver}, "results": [_sarif_result(f) for f in findings]}],
    }


def _cell(text: str) -> str:
    return text.replace("|", "\\|")


def rule_table() -> str:
    """The rule table of docs/lint.md, one row per registered rule (between TABLE_START and TABLE_END)."""
    rows = ["| Code | Name | Finds | Why it is wrong | Instead |", "|---|---|---|---|---|"]
    for rule in rules_in_order():
        cells = (rule.code, f"`{rule.name}`", rule.finds, rule.why, rule.instead)
        rows.append("| " + " | ".join(_cell(c) for c in cells) + " |")
    return "\n".join(rows)


def with_rule_table(readme: str) -> str:
    """The page text with the table between the markers replaced by `rule_table()`."""
    start, end = readme.find(TABLE_START), readme.find(TABLE_END)
    if start < 0 or end < start:
        raise ValueError(f"the page has no {TABLE_START} ... {TABLE_END} region")
    return readme[: start + len(TABLE_START)] + "\n" + rule_table() + "\n" + readme[end:]


def readme_table(readme: str) -> str:
    """The table between the markers in the page text ('' when the markers are missing)."""
    start, end = readme.find(TABLE_START), readme.find(TABLE_END)
    if start < 0 or end < start:
        return ""
    return readme[start + len(TABLE_START) : end].strip("\n")
