"""Record the top-level modules a generated script imports, so that no script is named like one.

Python puts a script's folder first on `sys.path`: `generated/google.py` is what `import google`
finds, and TensorFlow's `import google.protobuf` then imports the script (a circular import).
`tfgen validate` and `build` must not import TensorFlow, so the names are recorded once from the
installed training stack and committed as `tfgen/spec/shadowed_modules.json`, from two sources:

- `distributions`: the top-level import names of every installed distribution that TensorFlow,
  Keras or NumPy requires, followed transitively (its `top_level.txt` or its file list);
- `script`: the top-level modules the generated code imports by name (the support package's
  modules and the script templates), also those of optional extras not installed here
  (`tensorflow_datasets`);
- `imported`: the top-level modules (outside the standard library) loaded after importing
  TensorFlow, Keras, NumPy and the support package, then building, training, checkpointing and
  saving a small model, as a script does (TensorFlow imports more than it requires when it is
  installed, e.g. IPython or matplotlib).

The standard library's names are not recorded: `sys.stdlib_module_names` gives them at run time.
`tests/spec/test_script_names.py` re-extracts and fails when the installed stack imports a name
the file lacks.

Usage: python scripts/extract_shadowed_modules.py [--check]
"""

from __future__ import annotations

import argparse
import ast
import json
import re
import subprocess
import sys
from importlib import metadata
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # this checkout's tfgen, whatever is installed

from tfgen.spec.script_rules import SHADOWED_PATH

STACK = ("tensorflow", "keras", "numpy")
IDENTIFIER = re.compile(r"[A-Za-z_][A-Za-z0-9_]*\Z")
# Run in a fresh interpreter: what the script's stack imports, as a generated script uses it.
PROBE = """
import sys, tempfile, os
sys.path.insert(0, sys.argv[1])
import numpy as np, tensorflow as tf, keras
import tfgen_runtime, pkgutil, importlib
for info in pkgutil.iter_modules(tfgen_runtime.__path__):
    importlib.import_module(f"tfgen_runtime.{info.name}")
inputs = keras.Input((4,), name="x")
model = keras.Model(inputs, keras.layers.Dense(2)(keras.layers.Dense(8, activation="relu")(inputs)))
optimizer = keras.optimizers.Adam()
optimizer.build(model.trainable_variables)
data = tf.data.Dataset.from_tensor_slices((np.zeros((8, 4), "float32"), np.zeros(8, "int32"))).batch(4)
loss_fn = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
for x, y in data:
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x, training=True))
    optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
with tempfile.TemporaryDirectory() as folder:
    tf.train.Checkpoint(model=model, optimizer=optimizer).save(os.path.join(folder, "ckpt"))
    model.save(os.path.join(folder, "model.keras"))
    model.save_weights(os.path.join(folder, "model.weights.h5"))
    model.export(os.path.join(folder, "saved"), verbose=False)
print("\\n".join(sorted({name.partition(".")[0] for name in sys.modules})))
"""


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def required_distributions() -> list[str]:
    """The installed distributions STACK requires, transitively (extras not asked for left out)."""
    seen: dict[str, metadata.Distribution] = {}
    todo = list(STACK)
    while todo:
        name = todo.pop()
        if _key(name) in seen:
            continue
        try:
            distribution = metadata.distribution(name)
        except metadata.PackageNotFoundError:
            continue
        seen[_key(name)] = distribution
        for text in distribution.requires or []:
            requirement = Requirement(text)
            if requirement.marker is None or requirement.marker.evaluate({"extra": ""}):
                todo.append(requirement.name)
    return sorted(seen)


def distribution_modules() -> set[str]:
    """The top-level import names of the required distributions."""
    wanted = set(required_distributions())
    return {
        module
        for module, names in metadata.packages_distributions().items()
        if any(_key(name) in wanted for name in names)
    }


TEMPLATE_IMPORT = re.compile(r"^\s*(?:import ([A-Za-z_]\w*)|from ([A-Za-z_]\w*)\S* import )", re.MULTILINE)


def script_modules() -> set[str]:
    """The top-level modules the runtime and the script templates import."""
    templates = ROOT / "tfgen" / "generate" / "templates"
    found: set[str] = set()
    for path in sorted((ROOT / "runtime" / "tfgen_runtime").glob("*.py")):
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
            if isinstance(node, ast.Import):
                found |= {alias.name.partition(".")[0] for alias in node.names}
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                found.add(node.module.partition(".")[0])
    for path in sorted(templates.glob("*.jinja")):
        found |= {a or b for a, b in TEMPLATE_IMPORT.findall(path.read_text(encoding="utf-8"))}
    return found


def imported_modules() -> set[str]:
    """The top-level modules a fresh interpreter holds after using the stack as a script does."""
    runtime = ROOT / "runtime"  # the folder holding tfgen_runtime/
    result = subprocess.run(
        [sys.executable, "-c", PROBE, str(runtime)],
        capture_output=True,
        text=True,
        timeout=600,
        check=True,
        env={
            "TF_CPP_MIN_LOG_LEVEL": "3",
            "PYTHONDONTWRITEBYTECODE": "1",
            "PATH": "/usr/bin:/bin",
            "HOME": str(Path.home()),
        },
    )
    return set(result.stdout.split())


def kept(names: set[str]) -> list[str]:
    """The names a spec file could take (identifiers; no generated `__...` ones) that the
    standard library's list (checked at run time) does not hold."""
    return sorted(
        n for n in names if IDENTIFIER.match(n) and not n.startswith("__") and n not in sys.stdlib_module_names
    )


def recorded() -> dict[str, list[str]]:
    return {
        "distributions": kept(distribution_modules()),
        "script": kept(script_modules() - {"tfgen_runtime"}),
        "imported": kept(imported_modules() - {"tfgen_runtime"}),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--check", action="store_true", help="exit 1 if the stack imports a name the file lacks")
    args = parser.parse_args()
    found = recorded()
    if args.check:
        committed = json.loads(SHADOWED_PATH.read_text(encoding="utf-8"))
        missing = {part: sorted(set(names) - set(committed.get(part, []))) for part, names in found.items()}
        missing = {part: names for part, names in missing.items() if names}
        if missing:
            print(f"{SHADOWED_PATH.name} lacks {missing}: run scripts/extract_shadowed_modules.py", file=sys.stderr)
            return 1
        return 0
    SHADOWED_PATH.write_text(json.dumps(found, indent=1) + "\n", encoding="utf-8")
    print(f"wrote {SHADOWED_PATH.relative_to(ROOT)}: {sum(map(len, found.values()))} names")
    return 0


if __name__ == "__main__":
    sys.exit(main())
