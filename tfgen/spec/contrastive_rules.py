"""The `contrastive` algorithm's rules: one `model:` (the encoder, one output: the representation)
and one `optimizer:`, no `losses`; views of Keras random layers; a predictor exactly for simsiam,
a temperature only for simclr; a probe that names a class target and validation data for it; an
early stopping monitor that the history logs.

What the contrastive step does not do yet (mixed precision, metrics, ...) is refused, one line
each, rather than ignored.
"""

from __future__ import annotations

from collections.abc import Iterator

from tfgen.errors import SpecIssue
from tfgen.spec import catalog
from tfgen.spec.gan_rules import not_yet_issues
from tfgen.spec.loader import Located
from tfgen.spec.models import Spec

# Settings the contrastive step does not implement yet: a non-default value is refused.
NOT_YET = (
    ("metrics",),
    ("loss_weighting",),
    ("data", "test"),
    ("data", "test_split"),
    ("data", "train", "augment"),
    ("data", "train", "preprocess"),
    ("data", "train", "padded_batch"),
    ("data", "train", "bucket_by_sequence_length"),
    ("data", "train", "in_memory"),
    ("train", "gradient_clipping"),
    ("train", "gradient_accumulation_steps"),
    ("train", "sharpness_aware"),
    ("train", "warmup"),
    ("train", "reduce_on_plateau"),
    ("train", "phases"),
    ("train", "on_nonfinite"),
    ("logging", "tensorboard"),
    ("logging", "profile"),
    ("checkpoint", "keep_best"),
)
ALGORITHM = ("algorithm",)


def contrastive_issues(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """Every contrastive rule."""
    issues = list(_sections(spec, doc))
    yield from issues
    if issues:
        return
    yield from _encoder(spec, doc)
    yield from _method(spec, doc)
    yield from _views(spec, doc)
    yield from _probe(spec, doc)
    yield from _monitor(spec, doc)
    yield from not_yet_issues(spec, doc, "contrastive", NOT_YET)


def history_keys(spec: Spec) -> list[str]:
    """The training history's figures of a contrastive spec (what early stopping may monitor)."""
    algorithm = spec.algorithm
    keys = ["loss", *(["contrastive_accuracy"] if algorithm.method == "simclr" else [])]
    return [*keys, *(["probe_accuracy"] if algorithm.probe else []), "lr"]


def _sections(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """`model` and `optimizer`; not `networks` or `optimizers`."""
    for single, several in (("model", "networks"), ("optimizer", "optimizers")):
        if several in doc.data:
            yield doc.issue(
                (several,),
                f"the `contrastive` algorithm trains one encoder: write `{single}`, not `{several}`",
                key=True,
            )
        elif single not in doc.data:
            yield doc.issue((single,), f"missing required field `{single}` (the `contrastive` algorithm)", key=True)


def _encoder(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """The model is plain, with one output: the representation; no `losses` for it."""
    if spec.losses:
        yield doc.issue(("losses",), "the `contrastive` algorithm makes its own loss: remove `losses`", key=True)
    if spec.model.builder or spec.model.branches:
        field = "builder" if spec.model.builder else "branches"
        yield doc.issue(("model", field), f"`{field}` is not supported in a `contrastive` encoder yet")
    elif len(spec.model.outputs) != 1:
        yield doc.issue(("model", "outputs"), "the encoder has one output: the representation")


def _method(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """A predictor exactly for simsiam; a temperature and negatives only for simclr."""
    algorithm, given = spec.algorithm, doc.data["algorithm"]
    if algorithm.method == "simclr" and algorithm.predictor is not None:
        yield doc.issue((*ALGORITHM, "predictor"), "`predictor` is for `method: simsiam` only", key=True)
    if algorithm.method == "simsiam" and algorithm.predictor is None:
        yield doc.issue((*ALGORITHM, "method"), "`method: simsiam` needs a `predictor` (its layers on the projection)")
    for key in ("temperature", "negatives"):
        if algorithm.method == "simsiam" and key in given:
            yield doc.issue((*ALGORITHM, key), f"`{key}` is for `method: simclr` only", key=True)


def _views(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """Each view layer is a Keras layer that draws random numbers (it takes a `seed`)."""
    layers = catalog.classes("layers")
    for index, layer in enumerate(spec.algorithm.views):
        known = layers.get(layer.type)
        if known is not None and "seed" not in known["params"]:
            yield doc.issue(
                (*ALGORITHM, "views", index, "type"),
                f"`{layer.type}` draws nothing at random: a view is made of Keras random layers "
                "(RandomFlip, RandomTranslation, RandomRotation, GaussianNoise, ...)",
            )
        elif known is None and ":" in layer.type:
            yield doc.issue(
                (*ALGORITHM, "views", index, "type"),
                "a view is made of Keras random layers; your own layers are not supported in `views` yet",
            )


def _probe(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """The probe names a class target and has validation data to score on; validation data is
    read only by the probe."""
    probe = spec.algorithm.probe
    validated = spec.data.validation is not None or bool(spec.data.validation_split)
    if probe is None:
        if validated:
            field = "validation" if spec.data.validation is not None else "validation_split"
            yield doc.issue(
                ("data", field),
                "the `contrastive` algorithm reads validation data only for its `probe`: add `algorithm.probe` "
                "(a class target) or remove it",
            )
        return
    target = spec.targets.get(probe)
    if target is None or not target.class_count or target.shape:
        known = ", ".join(f"`{name}`" for name in spec.targets) or "none"
        yield doc.issue(
            (*ALGORITHM, "probe"),
            f"`{probe}` is no class target (`targets.{probe}` with `classes` and shape []); the targets: {known}",
        )
    if not validated:
        yield doc.issue(
            (*ALGORITHM, "probe"),
            "the probe is scored on validation data: add `data.validation_split` or `data.validation`",
        )


def _monitor(spec: Spec, doc: Located) -> Iterator[SpecIssue]:
    """Early stopping monitors a figure the history logs."""
    stopping = spec.train.early_stopping
    keys = history_keys(spec)
    if stopping is not None and stopping.monitor not in keys:
        yield doc.issue(
            ("train", "early_stopping", "monitor"),
            f"`{stopping.monitor}` is not logged by this contrastive run; it logs {', '.join(keys)}",
        )
