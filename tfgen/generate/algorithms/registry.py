"""The step algorithms' planning: each turns a spec of its `algorithm.type` into the template that
writes its script and the view the template lays out (docs/algorithms.md: how to add one)."""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from tfgen.generate.algorithms import contrastive, custom, gan, supervised
from tfgen.spec.models import Spec

# algorithm type -> plan(spec, **make_view's keywords) -> (template name, {name: view})
PLANS: dict[str, Callable[..., tuple[str, dict[str, Any]]]] = {
    "supervised": supervised.plan,
    "gan": gan.plan,
    "distillation": supervised.plan,  # the supervised script, with the teacher's parts (algorithms/distillation.py)
    "custom": custom.plan,
    "contrastive": contrastive.plan,
}


def plan(spec: Spec, **where: Any) -> tuple[str, dict[str, Any]]:
    """The template of the spec's algorithm, and what it lays out."""
    return PLANS[spec.algorithm.type](spec, **where)
