"""The `gan` algorithm's rules: two networks, `generator` and `discriminator`, one optimizer each;
the generator's one output is the discriminator's input of the same name (the data's real
examples); its other inputs are noise, except the `condition` (a class target) both take.

What the gan step does not do yet (validation, mixed precision, ...) is refused,
one line each, rather than ignored.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

from pydantic import BaseModel

from tfgen.errors import SpecIssue
from tfgen.spec.loader import Loc, Located
from tfgen.spec.models import Spec
from tfgen.spec.models.model import Model

NETWORKS = ("generator", "discriminator")
# Settings the gan step does not implement yet: a non-default value is refused.
NOT_YET = (
    ("metrics",),
    ("loss_weighting",),
    ("data", "validation"),
    ("data", "validation_split"),
    ("data", "test"),
    ("data", "test_split"),
    ("data", "train", "augment"),
    ("data", "train", "preprocess"),
    ("data", "train", "padded_batch"),
    ("train", "gradient_clipping"),
    ("train", "gradient_accumulation_steps"),
    ("train", "warmup"),
    ("train", "reduce_on_plateau"),
    ("train", "phases"),
    ("logging", "profile"),
    ("checkpoint", "keep_best"),
    ("checkpoint", "export"),
)


def gan_issues(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """Every gan rule (the sections validated, `networks` and `optimizers` given)."""
    yield from _names(spec, doc)
    if set(NETWORKS) <= set(spec.networks):
        yield from _networks(spec, doc)
    yield from not_yet_issues(spec, doc, "gan", NOT_YET)
    yield from monitor_issues(spec, doc, "gan", gan_logs(spec))
    if spec.algorithm.label_noise is not None and spec.algorithm.loss != "non_saturating":
        loss = spec.algorithm.loss
        yield doc.issue(("algorithm", "label_noise"), f"label noise is for the `non_saturating` loss, not `{loss}`")


def gan_logs(spec: Spec) -> list[str]:
    """The figures a gan's history logs (each epoch's means): its early stopping can follow them."""
    return ["d_loss", "g_loss", *(["gradient_penalty"] if spec.algorithm.gradient_penalty else [])]


def _names(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """`networks` are exactly the generator and the discriminator; `optimizers` one each."""
    for section in ("networks", "optimizers"):
        given = getattr(spec, section)
        for name in NETWORKS:
            if name not in given:
                yield doc.issue((section,), f"the `gan` algorithm needs `{section}.{name}`", key=True)
        for name in given:
            if name not in NETWORKS:
                yield doc.issue(
                    (section, name),
                    f"the `gan` algorithm trains `generator` and `discriminator`, not `{name}`",
                    key=True,
                )


def _networks(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    generator, discriminator = (spec.networks[name] for name in NETWORKS)
    for name in NETWORKS:
        yield from _plain(spec.networks[name], doc, ("networks", name))
    if generator.builder or discriminator.builder:
        return
    condition = spec.algorithm.condition
    if len(generator.outputs) != 1:
        yield doc.issue(("networks", "generator", "outputs"), "the generator has one output: the fake examples")
    if len(discriminator.outputs) != 1:
        yield doc.issue(("networks", "discriminator", "outputs"), "the discriminator has one output: its score")
    real = next(iter(generator.outputs))
    data_inputs = [name for name in discriminator.inputs if name != condition]
    if real not in discriminator.inputs or len(data_inputs) != 1:
        yield doc.issue(
            ("networks", "discriminator", "inputs"),
            f"the discriminator's one data input holds the real examples and is named as the generator's output "
            f"`{real}`; found {', '.join(f'`{n}`' for n in data_inputs)}",
        )
    noise = [name for name in generator.inputs if name != condition]
    if len(noise) != 1:
        yield doc.issue(("networks", "generator", "inputs"), "the generator has one noise input (and the condition)")
    elif generator.inputs[noise[0]].dtype != "float32" or None in generator.inputs[noise[0]].shape:
        yield doc.issue(("networks", "generator", "inputs", noise[0]), "the noise is float32 of a fixed shape")
    if condition is not None:
        yield from _condition(spec, doc, condition)


def _plain(network: Model, doc: Located, loc: Loc) -> Iterator[SpecIssue]:
    """A network of inputs, layers and outputs (the gan step does not build the others yet)."""
    for field in ("builder", "branches"):
        if getattr(network, field):
            yield doc.issue((*loc, field), f"`{field}` is not supported in the networks of a `gan` yet")


def _condition(spec: Spec, doc: Located, condition: str) -> Iterator[SpecIssue]:
    target = spec.targets.get(condition)
    loc = ("algorithm", "condition")
    if target is None or not target.class_count or target.shape:
        yield doc.issue(loc, f"`{condition}` is no class target (`targets.{condition}` with `classes` and shape [])")
        return
    for name in NETWORKS:
        network = spec.networks[name]
        shape = network.inputs.get(condition)
        if shape is None or shape.shape != [target.class_count]:
            yield doc.issue(
                ("networks", name, "inputs"),
                f"a conditional gan's {name} takes `{condition}` one-hot: an input `{condition}` of shape "
                f"[{target.class_count}]",
            )


def not_yet_issues(spec: Spec, doc: Located, kind: str, paths: tuple) -> Iterator[SpecIssue]:
    """A non-default value at one of `paths`, or `multi_worker_mirrored`: the `kind` algorithm
    does not implement it yet (shared by the algorithms of several networks)."""
    if spec.strategy.type == "multi_worker_mirrored":
        yield doc.issue(("strategy", "type"), f"`multi_worker_mirrored` is not supported by the `{kind}` algorithm yet")
    for path in paths:
        owner: Any = spec
        for key in path[:-1]:
            owner = getattr(owner, key)
        if getattr(owner, path[-1]) != _default(owner, path[-1]):
            yield doc.issue(path, f"`{'.'.join(path)}` is not supported by the `{kind}` algorithm yet")


def monitor_issues(spec: Spec, doc: Located, kind: str, logged: list[str]) -> Iterator[SpecIssue]:
    """Early stopping follows a figure the `kind` algorithm logs (`logged`); it cannot restore
    the best weights yet (shared by the algorithms of several networks)."""
    stopping = spec.train.early_stopping
    if stopping is None:
        return
    if stopping.monitor not in logged:
        names = ", ".join(f"`{name}`" for name in logged)
        yield doc.issue(
            ("train", "early_stopping", "monitor"),
            f"`{stopping.monitor}` is not logged by the `{kind}` algorithm (it logs {names})",
        )
    if stopping.restore_best_weights:
        yield doc.issue(
            ("train", "early_stopping", "restore_best_weights"),
            f"`restore_best_weights` is not supported by the `{kind}` algorithm yet",
        )


def _default(owner: BaseModel, field: str) -> Any:
    return type(owner).model_fields[field].get_default(call_default_factory=True)
