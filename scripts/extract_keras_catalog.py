"""Extract the catalog of Keras classes and constructor arguments that tfgen validates against.

`tfgen build` must not import TensorFlow or Keras, so the names and signatures it checks specs
against are extracted once from the installed Keras and committed as `tfgen/keras_catalog.json`.
`tests/test_catalog.py` re-extracts and fails when the installed Keras no longer matches.

Usage: python scripts/extract_keras_catalog.py [--check]
"""

from __future__ import annotations

import argparse
import inspect
import json
import os
import sys
from pathlib import Path

CATALOG_PATH = Path(__file__).resolve().parent.parent / "tfgen" / "keras_catalog.json"

# Public Keras namespaces a spec may name classes from, keyed by tfgen's kind.
NAMESPACES = {
    "layers": "keras.layers",
    "losses": "keras.losses",
    "metrics": "keras.metrics",
    "optimizers": "keras.optimizers",
    "schedules": "keras.optimizers.schedules",
    "regularizers": "keras.regularizers",
    "initializers": "keras.initializers",
    "constraints": "keras.constraints",
}

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


def extract() -> dict:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    import importlib

    import keras

    catalog: dict = {"keras_version": keras.__version__, "kinds": {}}
    for kind, dotted in NAMESPACES.items():
        module = importlib.import_module(dotted)
        entries = {}
        for attr in sorted(dir(module)):
            obj = getattr(module, attr)
            if attr.startswith("_") or not inspect.isclass(obj) or attr in EXCLUDED[kind]:
                continue
            names, required, _, default_name = _params(obj)
            entry = {"params": names, "required": required}
            if kind == "metrics":
                if default_name is None:
                    try:
                        default_name = obj().name
                    except Exception:  # metrics with required arguments name themselves per use
                        default_name = None
                entry["default_name"] = default_name
            entries[attr] = entry
        catalog["kinds"][kind] = entries
    return catalog


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
