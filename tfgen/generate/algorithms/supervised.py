"""The default algorithm: one model, one optimizer, a loss per output (tfgen.generate.plan)."""

from __future__ import annotations

from typing import Any

from tfgen.generate.plan import make_view
from tfgen.spec.models import Spec

TEMPLATE = "script.py.jinja"


def plan(spec: Spec, **where: Any) -> tuple[str, dict[str, Any]]:
    return TEMPLATE, {"v": make_view(spec, **where)}
