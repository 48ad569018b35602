"""Extract the catalog of Keras classes and constructor arguments that tfgen validates against.

`tfgen build` must not import TensorFlow or Keras, so the names and signatures it checks specs
against are extracted once from the installed Keras and committed as `tfgen/spec/keras_catalog.json`.
`tests/spec/test_catalog.py` re-extracts and fails when the installed Keras no longer matches.

Each constructor argument also gets a type when one can be known without guessing (see
`argument_type`): from the argument's name for the ones Keras resolves by name (activations,
initializers, regularizers, constraints, learning rates, paddings, data formats), else from the
first words of its docstring (`units: Positive integer, ...`) checked against its default. An
argument whose type cannot be known is left out of `types` and accepts anything: a spec value
wrongly rejected is worse than one missed.

Usage: python scripts/extract_keras_catalog.py [--check]
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import re
import sys
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))  # this checkout's tfgen, whatever is installed

from tfgen.spec.catalog import CATALOG_PATH, NAMESPACE, NESTED_KIND_BY_SUFFIX, in_bounds

# Abstract bases and wrappers that a spec never instantiates by name.
EXCLUDED = {
    "layers": {"Layer", "InputLayer", "Input", "InputSpec", "Wrapper", "RNN", "Lambda", "TFSMLayer"},
    "losses": {"Loss", "LossFunctionWrapper"},
    "metrics": {"Metric", "MeanMetricWrapper", "Reduce"},
    "optimizers": {"Optimizer", "LossScaleOptimizer"},
    "schedules": {"LearningRateSchedule"},
    "regularizers": {"Regularizer"},
    "initializers": {"Initializer"},
    "constraints": {"Constraint"},
}


def _params(cls) -> tuple[list[str], list[str], bool, object]:
    """Return (parameter names, required names, accepts **kwargs, default of `name`)."""
    names: list[str] = []
    required: list[str] = []
    var_kwargs = False
    default_name = None
    for klass in cls.__mro__:
        if "__init__" not in vars(klass):
            continue
        sig = inspect.signature(klass.__init__)
        own_var_kwargs = False
        for p in list(sig.parameters.values())[1:]:
            if p.kind is p.VAR_KEYWORD:
                own_var_kwargs = True
                continue
            if p.kind is p.VAR_POSITIONAL:
                continue
            if p.name not in names:
                names.append(p.name)
                if klass is cls and p.default is p.empty:
                    required.append(p.name)
                if p.name == "name" and isinstance(p.default, str):
                    default_name = p.default
        if not own_var_kwargs:
            break
        var_kwargs = own_var_kwargs
    return names, required, var_kwargs, default_name


def _defaults_and_docs(cls) -> tuple[dict[str, object], dict[str, str]]:
    """Each constructor argument's default (the nearest class's) and docstring text (the same)."""
    defaults: dict[str, object] = {}
    docs: dict[str, str] = {}
    for klass in cls.__mro__:
        if "__init__" in vars(klass):
            for p in list(inspect.signature(klass.__init__).parameters.values())[1:]:
                defaults.setdefault(p.name, p.default)
        for name, text in args_section(klass.__doc__).items():
            docs.setdefault(name, " ".join(text.split()))
    return defaults, docs


# --- argument types ----------------------------------------------------------------------------
# A type is a list of alternatives, each a small dict: {"is": "null"}, {"is": "bool"},
# {"is": "int", "min": 1}, {"is": "ints"} (a list of integers), {"is": "number", "min": 0,
# "max": 1, "open": true} (`open`: the bounds are excluded), {"is": "choice", "of": [...]}
# (strings; `nocase`: compared case-insensitively, as Keras does for paddings), {"is": "list"}
# (any list), {"float": true} on a number: Keras refuses an int there (`Adam(learning_rate=1)`),
# {"is": "name", "kind": K} (a name that
# `keras.K.get` resolves, listed once under the catalog's `names`) and {"is": "object", "kind": K}
# (a nested `{type: ...}` of that kind).

# Namespaces whose objects Keras also accepts by name (`kernel_initializer="he_normal"`).
NAMED_KINDS = ("activations", "initializers", "regularizers", "constraints")
# A learning rate is a number or a schedule (see `argument_type`), the other suffixes a name or an object.
NESTED_SUFFIXES = {suffix: kind for suffix, kind in NESTED_KIND_BY_SUFFIX.items() if suffix != "learning_rate"}
# String arguments whose accepted values a class's docstring lists in full (checked by
# tests/spec/test_catalog.py, which constructs every listed value with Keras).
CHOICE_ARGUMENTS = {
    "padding",
    "data_format",
    "interpolation",
    "fill_mode",
    "mode",
    "output_mode",
    "merge_mode",
    "distribution",
    "curve",
    "summation_method",
}
# Arguments whose docstring reads narrower than what Keras accepts.
UNTYPED = {("layers", "Rescaling", "scale"), ("layers", "Rescaling", "offset")}

NULL = {"is": "null"}
_LEAD_NOISE = re.compile(r"^(?:\(optional\)\s*|optional[.,]?\s+|an?\s+|the\s+|python\s+|small\s+)+", re.IGNORECASE)
_INT = r"(?:int|integer)"
_INT_LEAD = re.compile(
    rf"^(?P<sign>positive|non-negative|strictly positive)?\s*{_INT}\b(?!\s*(?:or|tuple|list|s\b))", re.IGNORECASE
)
_INTS_LEAD = re.compile(
    rf"^{_INT},?\s+(?:or\s+)?(?:an?\s+)?(?:tuple|list)(?:/(?:tuple|list))?\s+of\s+(?:\w+\s+)?{_INT}", re.IGNORECASE
)
_NUMBER_LEAD = re.compile(r"^(?:positive\s+)?(?:float|floating point|number)\b(?:\s+value)?", re.IGNORECASE)


def args_section(doc: str | None) -> dict[str, str]:
    """The `Args:` section of a Google-style docstring: argument name -> its text on one line."""
    out: dict[str, str] = {}
    lines = inspect.cleandoc(doc or "").splitlines()
    start = next((i for i, line in enumerate(lines) if line.strip() in ("Args:", "Arguments:")), None)
    if start is None:
        return out
    base = current = None
    for line in lines[start + 1 :]:
        if not line.strip():
            continue
        indent = len(line) - len(line.lstrip())
        base = indent if base is None else base
        if indent < base:
            break
        match = re.match(r"\s*\**(\w+)(?: \([^)]*\))?:\s*(.*)", line)
        if indent == base and match:
            current = match.group(1)
            out[current] = match.group(2)
        elif current:
            out[current] += " " + line.strip()
    return out


def accepted_names(kind: str) -> list[str]:
    """Every name `keras.<kind>.get` resolves (Keras's own table, each name tried)."""
    import importlib

    module = importlib.import_module(f"keras.{kind}")
    table = getattr(importlib.import_module(f"keras.src.{kind}"), "ALL_OBJECTS_DICT", {})
    names = []
    for name in sorted(set(table) | {n for n in dir(module) if not n.startswith("_")}):
        if name in ("get", "serialize", "deserialize"):
            continue
        try:
            if module.get(name) is not None:
                names.append(name)
        except Exception:
            continue
    return names


def _quoted(text: str) -> list[str]:
    return list(dict.fromkeys(re.findall(r"[`'\"]+([A-Za-z_][\w-]*)[`'\"]+", text)))


def _bounds(text: str, integer: bool) -> dict:
    lowered = text.lower()
    if re.search(r"between 0(?:\.0)? and 1(?:\.0)?|in (?:range )?`?\[0, 1\]`?", lowered):
        return {"min": 0, "max": 1}
    if re.search(r"in (?:range )?`?\(0, 1\)`?", lowered):
        return {"min": 0, "max": 1, "open": True}
    if re.search(r"less (?:than )?or equal to zero|<= ?0", lowered):
        return {"max": 0}
    if re.search(r">= ?0|greater than or equal to zero|non-negative|\(positive float\)", lowered):
        return {"min": 0}
    if re.search(r"^(?:positive|strictly positive)\b|must be positive", lowered):
        return {"min": 1} if integer else {"min": 0, "open": True}
    return {}


def argument_type(kind: str, cls_name: str, name: str, default, doc: str, params: list[str]) -> list[dict] | None:
    """The alternatives a value of this argument may take, or None when it cannot be known."""
    empty = inspect.Parameter.empty
    if (kind, cls_name, name) in UNTYPED or (kind == "losses" and name == "reduction"):
        return None
    for suffix, nested in NESTED_SUFFIXES.items():
        if name.endswith(suffix) and (default is None or isinstance(default, str)):
            # `None` means "no regularizer" or "the default initializer" to every `get`.
            return [{"is": "name", "kind": nested}, {"is": "object", "kind": nested}, NULL]
    if name in ("activation", "recurrent_activation") and kind == "layers":
        return [{"is": "name", "kind": "activations"}, NULL]
    if name == "learning_rate" and kind == "optimizers" and isinstance(default, float):
        return [{"is": "number"}, {"is": "object", "kind": "schedules"}]
    nullable = [NULL] if default is None else []
    if isinstance(default, bool):
        return [{"is": "bool"}]
    lead = _LEAD_NOISE.sub("", doc.strip())
    first = re.split(r"(?<![.\d])\.(?!\d)", lead, maxsplit=1)[0]  # the first sentence
    if re.search(r"\bNone\b", first) and not nullable:  # "Integer, tuple of integers, or None"
        nullable = [NULL]
    if name in CHOICE_ARGUMENTS and (default is None or isinstance(default, str)):
        # Quoted words that are values, not other arguments' names (`fill_value`) or letters (`k`).
        values = [
            v
            for v in _quoted(first if name == "padding" else doc)
            if v not in ("None", "True", "False") and v not in params and len(v) > 1
        ]
        if name == "data_format":
            values = [v for v in values if v.startswith("channels_")]
        if len(values) >= 2 and (default is None or default.lower() in [v.lower() for v in values]):
            if name == "padding":  # `standardize_padding` lowercases a string and passes a list through
                return [{"is": "choice", "of": values, "nocase": True}, {"is": "list"}, *nullable]
            if name == "data_format":  # `standardize_data_format` lowercases
                return [{"is": "choice", "of": values, "nocase": True}, *nullable]
            # Other strings: the values Keras builds with, probed by `_probe_choices`.
            return [{"is": "choice", "of": values, "probe": True}, *nullable]
        return None
    int_default = default in (None, empty) or type(default) is int
    int_or_tuple_default = int_default or (isinstance(default, tuple) and all(type(v) is int for v in default))
    # An axis is also given as a list of axes (`MaxNorm(axis=[0, 1, 2])`) and a window as a list
    # of sizes (`MaxPooling1D(pool_size=[2])`), whatever the words say.
    axis = name in ("axis", "axes", "pool_size") and re.match(rf"{_INT}\b", first, re.IGNORECASE)
    if (axis or (_INTS_LEAD.match(first) and int_or_tuple_default)) and not re.search(
        r"tuples of|dict", first, re.IGNORECASE
    ):
        return [{"is": "int"}, {"is": "ints"}, *nullable]
    counts = kind in ("schedules", "optimizers")  # these compute with steps as floats: `decay_steps=1000.0` works
    if (
        _INT_LEAD.match(first)
        and int_default
        and not counts
        and not re.search(r"float|tensor|tuple|list", first, re.IGNORECASE)
    ):
        return [{"is": "int", **_bounds(first + " " + doc, integer=True)}, *nullable]
    number_default = default in (None, empty) or type(default) in (int, float)
    if (_NUMBER_LEAD.match(first) or (counts and _INT_LEAD.match(first))) and number_default:
        # "a float value or a constant float tensor, or a callable": only a number is writable in YAML.
        rest = re.sub(r",? or (?:a )?(?:constant float tensor|callable[^,]*)", "", first, flags=re.IGNORECASE)
        if not re.search(r"\b(?:or|tuple|list|tensor)\b", rest, re.IGNORECASE):
            return [{"is": "number", **_bounds(first if not counts else first + " " + doc, integer=False)}, *nullable]
    return None


def _mark_float_only(cls, required: list[str], types: dict) -> None:
    """Probe, on a class Keras builds without arguments, which numbers it refuses as ints."""
    if required:
        return
    for name, alternatives in types.items():
        for alt in alternatives:
            if alt["is"] != "number":
                continue
            sample = next((v for v in (1.0, 0.0) if in_bounds(v, alt)), None)
            if sample is None or not _builds(cls, name, sample):
                continue
            if not _builds(cls, name, int(sample)):
                alt["float"] = True


# Values for required arguments the catalog cannot type, so that a class can be probed.
PROBE_REQUIRED = {"height_factor": 0.1, "width_factor": 0.1, "factor": 0.1, "x_factor": 0.1, "y_factor": 0.1}
NOT_A_VALUE = "tfgen-not-a-value"


def _probe_choices(cls, required: list[str], types: dict) -> None:
    """Keep a string choice only where Keras itself refuses other strings when the object is built.

    Its values are the documented ones and those Keras's refusal names, each kept if Keras builds
    with it; `nocase` if Keras also builds with one of them upper-cased or capitalised. Where Keras builds with any
    string (it checks later, or never) or the class cannot be built here, the argument is untyped.
    """
    base = {}
    for name in required:
        sample = _sample(types.get(name)) if name in types else PROBE_REQUIRED.get(name, NOT_A_VALUE)
        if sample is NOT_A_VALUE:
            break
        base[name] = sample
    for name in [n for n, alts in types.items() if any(a.get("probe") for a in alts)]:
        alt = next(a for a in types[name] if a.get("probe"))
        refusal = _refusal(cls, {**base, name: NOT_A_VALUE}) if len(base) == len(required) else None
        if refusal is None:
            del types[name]
            continue
        candidates = list(dict.fromkeys(alt["of"] + _quoted(refusal)))
        alt["of"] = [v for v in candidates if _refusal(cls, {**base, name: v}) is None]
        del alt["probe"]
        if len(alt["of"]) < 2:
            del types[name]
        elif any(
            _refusal(cls, {**base, name: spelled}) is None for v in alt["of"] for spelled in (v.upper(), v.capitalize())
        ):
            alt["nocase"] = True


def _sample(alternatives: list[dict]):
    alt = alternatives[0]
    return {"int": max(2, alt.get("min", 2)), "ints": [2], "number": 0.5, "bool": True}.get(
        alt["is"], alt["of"][0] if alt["is"] == "choice" else NOT_A_VALUE
    )


def _refusal(cls, args: dict) -> str | None:
    """Keras's message when it refuses to build `cls(**args)`, else None."""
    try:
        cls(**args)
    except Exception as exc:
        return str(exc) or type(exc).__name__
    return None


def _builds(cls, name: str, value) -> bool:
    try:
        cls(**{name: value})
    except Exception:
        return False
    return True


def extract() -> dict:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import importlib

    import keras

    catalog: dict = {"keras_version": keras.__version__, "kinds": {}}
    for kind, dotted in NAMESPACE.items():
        module = importlib.import_module(dotted)
        entries = {}
        for attr in sorted(dir(module)):
            obj = getattr(module, attr)
            if attr.startswith("_") or not inspect.isclass(obj) or attr in EXCLUDED[kind]:
                continue
            names, required, _, default_name = _params(obj)
            entry = {"params": names, "required": required}
            defaults, docs = _defaults_and_docs(obj)
            types = {}
            for name in names:
                found = argument_type(
                    kind, attr, name, defaults.get(name, inspect.Parameter.empty), docs.get(name, ""), names
                )
                if found is not None:
                    types[name] = found
            _mark_float_only(obj, required, types)
            _probe_choices(obj, required, types)
            entry["types"] = types
            if kind == "metrics":
                if default_name is None:
                    try:
                        keras.backend.clear_session()  # the probes above took `auc`, `auc_1`, ...
                        default_name = obj().name
                    except Exception:  # metrics with required arguments name themselves per use
                        default_name = None
                entry["default_name"] = default_name
            entries[attr] = entry
        catalog["kinds"][kind] = entries
    catalog["names"] = {kind: accepted_names(kind) for kind in NAMED_KINDS}
    catalog["applications"] = applications()
    return catalog


# Arguments of a `keras.applications` constructor that tfgen sets itself: the backbone has no top
# (no classifier, so no classes), takes the shape of the tensor it is applied to, and is named by
# the layer item's `name` and loaded by its `weights`.
APPLICATION_OWNED = (
    "include_top",
    "weights",
    "input_tensor",
    "input_shape",
    "classes",
    "classifier_activation",
    "name",
)


def application_type(name: str, default) -> list[dict] | None:
    """The alternatives of an application's own argument, from its default (all are plain values)."""
    if name == "pooling":
        return [{"is": "choice", "of": ["avg", "max"]}, NULL]
    if isinstance(default, bool):
        return [{"is": "bool"}]
    if type(default) is int:
        return [{"is": "int", "min": 1}]
    if isinstance(default, float):
        return [{"is": "number", "min": 0, "open": True}] if name == "alpha" else [{"is": "number", "min": 0}]
    return None


def applications() -> dict:
    """Each `keras.applications` constructor: its own arguments and types, and its family's module
    (where `preprocess_input` is)."""
    import keras

    entries = {}
    for attr in sorted(dir(keras.applications)):
        function = getattr(keras.applications, attr)
        if attr.startswith("_") or not inspect.isfunction(function):
            continue
        parameters = inspect.signature(function).parameters.values()
        own = [p for p in parameters if p.name not in APPLICATION_OWNED]
        types = {p.name: found for p in own if (found := application_type(p.name, p.default)) is not None}
        family = function.__module__.replace("keras.src.applications.", "keras.applications.")
        entries[attr] = {"params": [p.name for p in own], "types": types, "module": family}
    return entries


def dumps(catalog: dict) -> str:
    return json.dumps(catalog, indent=1, sort_keys=True) + "\n"


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the committed catalog is stale")
    args = parser.parse_args(argv)
    text = dumps(extract())
    if args.check:
        if CATALOG_PATH.read_text() != text:
            print(f"{CATALOG_PATH} does not match the installed Keras; rerun this script", file=sys.stderr)
            return 1
        return 0
    CATALOG_PATH.write_text(text)
    print(f"wrote {CATALOG_PATH}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
