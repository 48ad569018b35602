"""`validate --deep` on an algorithm of several networks (`gan`): each network built and its
optimizer constructed as the script does, its issues located in `networks.<name>` and
`optimizers.<name>`; and the generator's output fits the discriminator's input."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from tfgen.check.deep import _Deep
from tfgen.errors import SpecIssue
from tfgen.spec.loader import Loc, Located
from tfgen.spec.models import Spec
from tfgen.spec.models.algorithms import Supervised


class _Within:
    """The spec document, with `model...` and `optimizer...` locations inside one network's."""

    def __init__(self, doc: Located, name: str):
        self.doc, self.name = doc, name

    def where(self, loc: Loc) -> Loc:
        homes = {"model": ("networks", self.name), "optimizer": ("optimizers", self.name)}
        return (*homes[loc[0]], *loc[1:]) if loc and loc[0] in homes else tuple(loc)

    def issue(self, loc: Loc, message: str, *, key: bool = False) -> SpecIssue:
        return self.doc.issue(self.where(loc), message, key=key)

    def position(self, loc: Loc, *, key: bool = False):
        return self.doc.position(self.where(loc), key=key)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.doc, name)


class _NetworkDeep(_Deep):
    """One network of several: it has no loss per output (its algorithm makes the losses)."""

    built_model: Any = None

    def head(self, name: str, out: Any) -> None:
        if out is not None and not str(out.dtype).startswith(("float", "bfloat")):
            self.fail(("model", "outputs", name), f"output `{name}` is {out.dtype}: a loss needs floating-point values")

    def optimizer(self, model: Any) -> None:
        self.built_model = model
        super().optimizer(model)


def deep_networks(keras, doc: Located, spec: Spec, spec_dir: Path, trust: bool) -> tuple[list[SpecIssue], str]:
    """Every network's issues (each once) and their summary tables."""
    issues: list[SpecIssue] = []
    summaries, built = [], {}
    for name, network in spec.networks.items():
        optimizer = spec.optimizers.get(name)
        update = {"algorithm": Supervised(), "model": network, "networks": None, "optimizer": optimizer}
        checker = _NetworkDeep(keras, _Within(doc, name), spec.model_copy(update=update), spec_dir, trust)
        summaries.append(f"network `{name}`\n{checker.run()}")
        issues += [issue for issue in checker.issues if issue not in issues]
        built[name] = checker.built_model
    if spec.algorithm.type == "gan" and all(built.values()):
        issues += _fake_fits_real(doc, spec, built["generator"], built["discriminator"])
    return issues, "".join(summaries)


def _fake_fits_real(doc: Located, spec: Spec, generator: Any, discriminator: Any) -> list[SpecIssue]:
    """The generator's fakes are of the shape of the real examples the discriminator takes."""
    real = next(iter(spec.networks["generator"].outputs))
    fake = tuple(generator.output[real].shape[1:])
    wanted = tuple(spec.networks["discriminator"].inputs[real].shape)
    if fake == wanted:
        return []
    loc = ("networks", "generator", "outputs", real)
    return [
        doc.issue(loc, f"the generator's `{real}` is {list(fake)} per example, the discriminator takes {list(wanted)}")
    ]
