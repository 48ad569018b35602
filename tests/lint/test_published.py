"""Lint on published training code: every finding judged, precision at least 0.95, the table in docs/lint.md.

The published files are fetched, not committed (`python tests/lint/published.py fetch`); the tests that
lint them skip, saying so, when they are absent. The judgements and the table are committed and always
checked."""

from __future__ import annotations

import json

import published
import pytest
from conftest import ROOT

SOURCES = published.sources()
TABLE_START, TABLE_END = "<!-- lint-precision:start -->", "<!-- lint-precision:end -->"


def test_the_published_corpus_holds_at_least_25_files_each_judged():
    names = [source.name for source in SOURCES]
    assert len(names) >= 25 and len(set(names)) == len(names)
    assert {p.stem for p in published.HERE.glob("*.judged")} == set(names)
    for source in SOURCES:
        assert source.url.startswith("https://raw.githubusercontent.com/") and len(source.sha256) == 64
        for judged in published.judgements(source.name):
            assert judged.reason, f"{source.name}: {judged.where} has no reason"


def test_lint_precision_on_published_code_is_at_least_095():
    assert published.precision() >= 0.95, published.table()


def test_the_documented_precision_table_is_the_judgements():
    page = (ROOT / "docs" / "lint.md").read_text()
    documented = page[page.index(TABLE_START) + len(TABLE_START) : page.index(TABLE_END)].strip("\n")
    assert documented == published.table(), "docs/lint.md: paste the output of `python tests/lint/published.py table`"


@pytest.mark.parametrize("source", SOURCES, ids=lambda s: s.name)
def test_lint_makes_exactly_the_judged_findings_on_published_code(source):
    if source.name in published.missing():
        pytest.skip(f"{source.name} is not fetched: run `python tests/lint/published.py fetch [--clones DIR...]`")
    assert published.found(source.name) == published.expected(source.name)


def test_a_notebook_is_linted_as_its_python_cells_in_order():
    notebook = {
        "cells": [
            {"cell_type": "markdown", "source": ["# Title\n"]},
            {"cell_type": "code", "source": ["!pip install tfds\n", "import tensorflow as tf\n", "%matplotlib"]},
            {"cell_type": "code", "source": ["%%bash\n", "ls\n"]},
            {"cell_type": "code", "source": ["%%writefile main.py\n", "x = 1"]},
        ]
    }
    assert published.notebook_code(json.dumps(notebook)) == "import tensorflow as tf\n\nx = 1\n"
    url = "https://raw.githubusercontent.com/o/r/c/a.ipynb"
    assert (
        published.lintable(url, json.dumps(notebook)).splitlines()[0] == f"# From {url} (Apache License 2.0); code only"
    )
