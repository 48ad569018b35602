"""A `tfds` source under `validate --deep`: the
dataset, its split and its features are what the spec says. Reads the dataset's description
from TFDS's code, never its data (nothing is downloaded)."""

from __future__ import annotations

from typing import Any

from tfgen.errors import SpecIssue
from tfgen.spec import catalog
from tfgen.spec.loader import Loc, Located
from tfgen.spec.models import Spec

EXTRA = 'pip install "tfgen[tfds]"'


def deep(doc: Located, spec: Spec, loc: Loc, source: Any) -> list[SpecIssue]:
    """The issues of a `tfds` source: the name, the split, the features (the extra installed:
    tfgen.check.deep_sources checks it first)."""
    try:
        import tensorflow_datasets as tfds
    except ImportError as error:
        return [doc.issue((*loc, "type"), f"TensorFlow Datasets does not import ({EXTRA}): {error}")]
    return _SourceCheck(tfds, doc, spec, loc, source).run()


class _SourceCheck:
    """One `tfds` source checked against the dataset's description and the spec's fields."""

    def __init__(self, tfds: Any, doc: Located, spec: Spec, loc: Loc, source: Any):
        self.tfds, self.doc, self.spec, self.loc, self.source = tfds, doc, spec, loc, source
        self.issues: list[SpecIssue] = []

    def fail(self, loc: Loc, message: str) -> None:
        self.issues.append(self.doc.issue(loc, message))

    def run(self) -> list[SpecIssue]:
        self.split()
        info = self.info()
        if info is None:
            return self.issues
        for loc, what, name, feature in self.pairs(info):
            if feature not in info.features:
                found = ", ".join(info.features.keys())
                self.fail(loc, f"`{self.source.name}` has no feature `{feature}` (it has {found})")
            else:
                self.feature(loc, what, name, feature, info.features[feature])
        return self.issues

    def split(self) -> None:
        try:
            self.tfds.core.ReadInstruction.from_spec(self.source.split)
        except Exception as error:
            self.fail((*self.loc, "split"), _first_line(error))

    def info(self) -> Any:
        name = self.source.name
        try:
            return self.tfds.builder(name, data_dir=self.source.data_dir).info
        except self.tfds.core.DatasetNotFoundError:
            base = name.partition(":")[0].partition("/")[0]
            hint = catalog.did_you_mean(base, self.tfds.list_builders())
            self.fail((*self.loc, "name"), f"no TFDS dataset `{base}`{hint}")
        except Exception as error:
            self.fail((*self.loc, "name"), f"TFDS: {_first_line(error)}")
        return None

    def pairs(self, info: Any) -> list[tuple[Loc, str, str, str]]:
        """(location, "input"/"target", its name, the feature that fills it) for each field."""
        source, spec = self.source, self.spec
        if source.x is None:
            keys = info.supervised_keys
            if not (keys and len(keys) == 2 and all(isinstance(key, str) for key in keys)):
                self.fail(
                    self.loc, f"`{source.name}` has no supervised pair of two features: name them with `x` and `y`"
                )
                return []
            return [
                (self.loc, "input", next(iter(spec.model.inputs)), keys[0]),
                (self.loc, "target", next(iter(spec.targets)), keys[1]),
            ]
        pairs = []
        for field, names, what in (("x", spec.model.inputs, "input"), ("y", spec.targets, "target")):
            value = getattr(source, field)
            mapping = {next(iter(names)): value} if isinstance(value, str) else value
            for name, feature in mapping.items():
                where = (*self.loc, field) if isinstance(value, str) else (*self.loc, field, name)
                if name in names:  # else the cross-checks say so
                    pairs.append((where, what, name, feature))
        return pairs

    def feature(self, loc: Loc, what: str, name: str, feature: str, described: Any) -> None:
        """The feature's shape and dtype against the field's; a ClassLabel's count against `classes`."""
        item = self.spec.model.inputs[name] if what == "input" else self.spec.targets[name]
        shape = tuple(getattr(described, "shape", ()))
        declared = tuple(item.shape)
        fits = len(shape) == len(declared) and all(
            None in pair or pair[0] == pair[1] for pair in zip(shape, declared, strict=True)
        )
        if not fits:
            self.fail(
                loc,
                f"feature `{feature}` is {_shape(shape)} per example; {what}s.{name} is declared {_shape(declared)}",
            )
        strings = getattr(described, "tf_dtype", None) is not None and described.tf_dtype.name == "string"
        named = what == "target" and item.class_names is not None  # string labels map to its ids
        if strings != (item.dtype == "string") and not (strings and named):
            held = "strings" if strings else described.tf_dtype.name
            self.fail(loc, f"feature `{feature}` holds {held}; {what}s.{name} is declared {item.dtype}")
        classes = getattr(described, "num_classes", None)
        wanted = item.class_count if what == "target" else None
        if classes is not None and wanted is not None and classes != wanted:
            self.fail(
                ("targets", name, "classes"), f"`{self.source.name}`'s `{feature}` has {classes} classes, not {wanted}"
            )


def _shape(shape: tuple) -> str:
    return "[" + ", ".join("null" if d is None else str(d) for d in shape) + "]"


def _first_line(error: BaseException) -> str:
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__
