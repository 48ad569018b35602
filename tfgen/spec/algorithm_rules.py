"""What each `algorithm:` asks of the rest of the spec: the sections it needs and refuses.

`supervised` (the default) needs `model`, `optimizer` and `losses`, and takes no `networks` or
`optimizers`; every other algorithm's rules are in tfgen/spec/<name>_rules.py, registered in
ALGORITHM_RULES (one line an algorithm).
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from tfgen.errors import SpecIssue
from tfgen.spec.contrastive_rules import contrastive_issues
from tfgen.spec.custom_step_rules import custom_issues
from tfgen.spec.gan_rules import gan_issues
from tfgen.spec.loader import Located
from tfgen.spec.models import Spec

# The algorithms that train one `model:` as `supervised` does (their specs are supervised specs
# plus their own parts): every static check of a supervised spec applies to them.
ONE_MODEL = frozenset({"supervised", "distillation"})
# The sections of one network and one optimizer, and the sections of several of each.
SINGLE = {"model": "networks", "optimizer": "optimizers"}


def supervised_issues(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """`model`, `optimizer` and `losses` given; `networks` and `optimizers` not (supervised, and
    the algorithms that train one model as it does: distillation)."""
    kind = spec.algorithm.type
    named = "the `supervised` algorithm (the default)" if kind == "supervised" else f"the `{kind}` algorithm"
    for section in ("model", "optimizer", "losses"):
        if section not in doc.data:
            yield doc.issue((section,), f"missing required field `{section}`", key=True)
    for single, several in SINGLE.items():
        if several in doc.data:
            yield doc.issue(
                (several,),
                f"`{several}` is for algorithms that train several networks; {named} trains one: write `{single}`",
                key=True,
            )


def several_networks_issues(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """An algorithm of several networks: `networks` and `optimizers`, never `model` or `optimizer`."""
    kind = spec.algorithm.type
    for single, several in SINGLE.items():
        if single in doc.data:
            yield doc.issue(
                (single,),
                f"the `{kind}` algorithm trains several networks: write `{several}`, not `{single}`",
                key=True,
            )
        elif several not in doc.data:
            yield doc.issue((several,), f"missing required field `{several}` (the `{kind}` algorithm)", key=True)
    if spec.losses:
        yield doc.issue(("losses",), f"the `{kind}` algorithm makes its own losses: remove `losses`", key=True)


def _gan(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    issues = list(several_networks_issues(spec, doc))
    yield from issues
    if not issues:
        yield from gan_issues(spec, doc)


def _custom(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    issues = list(several_networks_issues(spec, doc))
    yield from issues
    if not issues:
        yield from custom_issues(spec, doc)


# algorithm type -> its rules (issues of a spec whose sections each validated)
# (distillation's own rules, on its outputs and weighting, are crosscheck's DISTILLATION_CHECKS)
ALGORITHM_RULES: dict[str, Any] = {
    "supervised": supervised_issues,
    "gan": _gan,
    "distillation": supervised_issues,
    "custom": _custom,
    "contrastive": contrastive_issues,
}


def algorithm_issues(spec: Spec, doc: Located) -> list[SpecIssue]:
    """The issues the spec's algorithm finds (none: the sections it reads are there)."""
    return list(ALGORITHM_RULES[spec.algorithm.type](spec, doc))
