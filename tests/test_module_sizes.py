"""No module of tfgen is over 500 lines: a module that grows past it is split by concern."""

from __future__ import annotations

from conftest import ROOT


def test_no_module_of_tfgen_is_over_500_lines():
    sizes = {str(p.relative_to(ROOT)): len(p.read_text().splitlines()) for p in (ROOT / "tfgen").rglob("*.py")}
    assert {path: n for path, n in sizes.items() if n > 500} == {}
