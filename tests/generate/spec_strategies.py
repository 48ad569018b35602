"""Hypothesis strategies that draw valid tfgen specs (plain dicts, as YAML gives them).

The drawn models are shape-consistent, so that every spec also trains (`tfgen smoke`): a layer
model keeps one width `W` through its trunk (width-preserving layers and residual blocks), and
each head either ends in a layer that gives its target's shape or keeps the width, the target
then being `W` wide. Several inputs are a branched layer model (each input's branch brings it
to a width the merge can join) or use `BUILDER`, a generic builder function written beside the
specs by the slow tests (`BUILDER_SOURCE`).
"""

from __future__ import annotations

from typing import Any

from hypothesis import assume
from hypothesis import strategies as st

from tfgen.spec import catalog

BUILDER_MODULE = "spacemodels"
BUILDER = f"{BUILDER_MODULE}:build"
# The builder a `builder` spec names: every input flattened and concatenated, one hidden layer,
# then one head per target shaped like it (classes -> logits, else the target's shape).
BUILDER_SOURCE = '''"""A generic model for drawn specs: inputs concatenated, one hidden layer, a head per target."""

import math

import keras


def build(inputs, outputs, width=8):
    tensors = {name: keras.Input(tuple(shape), name=name) for name, shape in inputs.items()}
    flat = [keras.layers.Flatten()(tensor) for tensor in tensors.values()]
    joined = flat[0] if len(flat) == 1 else keras.layers.Concatenate()(flat)
    hidden = keras.layers.Dense(width, activation="relu")(joined)
    heads = {}
    for name, shape in outputs.items():
        units = math.prod(shape) if shape else 1
        head = keras.layers.Dense(units, dtype="float32")(hidden)
        heads[name] = keras.layers.Reshape(tuple(shape), dtype="float32")(head) if len(shape) != 1 else head
    return keras.Model(tensors, heads)
'''

INPUT_NAMES = ("features", "extra", "side")
OUTPUT_NAMES = ("label", "score", "mask", "kind")
ACTIVATIONS = ("relu", "tanh", "linear", "gelu")
DEFAULT_METRIC_NAMES = {name: entry.get("default_name") for name, entry in catalog.classes("metrics").items()}


def finite(low: float, high: float) -> st.SearchStrategy[float]:
    """Short, finite floats (they are written into YAML and into the script as literals)."""
    return st.sampled_from([low, (low + high) / 2, high, round(low + (high - low) / 3, 4)])


# --- layers -------------------------------------------------------------------------------------


def keeping_width(width: int, *, adapt: bool) -> st.SearchStrategy[dict]:
    """A layer whose output has its input's shape (for a vector or an image of `width` channels)."""
    options = [
        st.builds(lambda a: {"type": "Dense", "units": width, "activation": a}, st.sampled_from(ACTIVATIONS)),
        st.builds(lambda r: {"type": "Dropout", "rate": r}, finite(0.1, 0.5)),
        st.just({"type": "BatchNormalization"}),
        st.just({"type": "LayerNormalization"}),
        st.builds(lambda a: {"type": "Activation", "activation": a}, st.sampled_from(ACTIVATIONS)),
    ]
    if adapt:
        options.append(st.just({"type": "Normalization", "adapt": True}))
        options.append(st.builds(lambda n: {"type": "Normalization", "adapt": {"batches": n}}, st.integers(1, 3)))
    return st.one_of(options)


def stack(width: int, *, adapt: bool, depth: int = 0, min_size: int = 0, max_size: int = 3) -> st.SearchStrategy[list]:
    """Width-keeping items: layers and residual blocks (nested up to 2 deep)."""
    item = keeping_width(width, adapt=adapt)
    if depth < 2:
        inner = stack(width, adapt=adapt, depth=depth + 1, min_size=1, max_size=2)
        item = st.one_of(item, inner.map(lambda items: {"residual": items}))
    return st.lists(item, min_size=min_size, max_size=max_size)


# --- inputs, targets, heads ---------------------------------------------------------------------


@st.composite
def target(draw, width: int, *, free: bool) -> dict:
    """One output: its target, loss, metrics, and the head's final layers.

    `free`: the head may end in any layer; else its output is the trunk's `width` wide vector, so
    the target is too (a class target of `width` classes, or a regression of shape [width])."""
    if free:
        kind = draw(st.sampled_from(["class", "onehot", "binary", "regression", "grid"]))
    else:
        kind = draw(st.sampled_from(["class", "regression"]))
    classes = draw(st.integers(2, 5)) if free else width
    if kind == "class" and draw(st.booleans()):  # named classes: the dtype defaults to int32
        spec = {"shape": [], "classes": [f"class_{i}" for i in range(classes)]}
        if draw(st.booleans()):
            spec["dtype"] = "int64"
        loss = {"type": "SparseCategoricalCrossentropy", "from_logits": True}
        metrics = ["SparseCategoricalAccuracy"]
        final = [{"type": "Dense", "units": classes}]
    elif kind == "class":
        spec = {"shape": [], "dtype": draw(st.sampled_from(["int32", "int64"])), "classes": classes}
        loss = {"type": "SparseCategoricalCrossentropy", "from_logits": True}
        metrics = ["SparseCategoricalAccuracy"]
        final = [{"type": "Dense", "units": classes}]
    elif kind == "onehot":
        spec = {"shape": [classes], "dtype": "float32", "classes": classes}
        loss = {"type": "CategoricalCrossentropy", "from_logits": True}
        metrics = ["CategoricalAccuracy"]
        final = [{"type": "Dense", "units": classes}]
    elif kind == "binary":
        spec = {"shape": [1], "dtype": "float32", "classes": 2}
        loss = {"type": "BinaryCrossentropy", "from_logits": True}
        metrics = draw(
            st.sampled_from([[{"type": "BinaryAccuracy", "threshold": 0.0}], [{"type": "AUC", "from_logits": True}]])
        )
        final = [{"type": "Dense", "units": 1}]
    elif kind == "regression":
        units = draw(st.integers(1, 3)) if free else width
        spec = {"shape": [units], "dtype": "float32"}
        loss = {"type": draw(st.sampled_from(["MeanSquaredError", "MeanAbsoluteError", "Huber"]))}
        metrics = draw(
            st.sampled_from(
                [
                    [],
                    ["MeanAbsoluteError"],
                    ["RootMeanSquaredError", "MeanSquaredError"],
                    [{"type": "MeanAbsoluteError", "name": "mae"}],
                ]
            )
        )
        final = [{"type": "Dense", "units": units}]
    else:  # a rank-2 target: the loss is averaged over both axes per example
        rows, columns = draw(st.integers(2, 3)), draw(st.integers(1, 2))
        spec = {"shape": [rows, columns], "dtype": "float32"}
        loss = {"type": "MeanSquaredError"}
        metrics = draw(st.sampled_from([[], ["MeanAbsoluteError"]]))
        final = [{"type": "Dense", "units": rows * columns}, {"type": "Reshape", "target_shape": [rows, columns]}]
    if draw(st.booleans()):
        loss["weight"] = draw(st.sampled_from([0.5, 1.0, 2.0]))
    if not draw(st.integers(0, 3)):
        metrics = []
    return {"target": spec, "loss": loss, "metrics": metrics, "final": final}


@st.composite
def layer_model(draw) -> dict:
    """A single-input layer model: a trunk family (vectors, images or token sequences), the trunk,
    and one to three heads. Returns model, targets, losses, metrics and `sequence` (needs padding)."""
    width = draw(st.integers(3, 6))
    family = draw(st.sampled_from(["vector", "vector", "image", "sequence", "text"]))
    name = draw(st.sampled_from(INPUT_NAMES))
    adapt = draw(st.integers(0, 3)) == 0
    if family == "vector":
        inputs = {name: {"shape": [width]}}
        opening = []
    elif family == "image":
        inputs = {name: {"shape": [4, 4, 2], "dtype": draw(st.sampled_from(["float32", "uint8"]))}}
        opening = [{"type": "Conv2D", "filters": width, "kernel_size": 3, "padding": "same", "activation": "relu"}]
        if draw(st.booleans()):
            conv = {"type": "Conv2D", "filters": width, "kernel_size": 1, "padding": "same"}
            opening.append({"residual": [conv, {"type": "BatchNormalization"}]})
        opening.append({"type": draw(st.sampled_from(["GlobalAveragePooling2D", "GlobalMaxPooling2D"]))})
    elif family == "text":  # strings to ids: hashed, looked up or tokenized (adapted or not)
        bins = draw(st.integers(4, 12))
        shape = draw(st.sampled_from([[], [3]]))
        inputs = {name: {"shape": shape, "dtype": "string"}}
        if draw(st.booleans()):
            inputs[name]["vocabulary"] = draw(st.integers(2, 30))
        ids = draw(
            st.sampled_from(
                [
                    {"type": "Hashing", "num_bins": bins},
                    {"type": "StringLookup", "max_tokens": bins, "adapt": True},
                    {"type": "StringLookup", "vocabulary": ["w0", "w1", "w2"]},
                    # as wide as its adapted vocabulary: the script finds the width before building
                    {"type": "StringLookup", "output_mode": "multi_hot", "adapt": True},
                ]
            )
        )
        tokens = not shape and draw(st.booleans())  # one text per example, split into words
        if tokens:
            ids = {"type": "TextVectorization", "max_tokens": bins, "output_sequence_length": 4, "adapt": True}
        opening = [ids, {"type": "Embedding", "input_dim": bins, "output_dim": width}]
        if ids.get("output_mode") == "multi_hot":
            opening = [ids]
        elif shape or tokens:
            opening.append({"type": "GlobalAveragePooling1D"})
    else:
        vocabulary = draw(st.integers(4, 12))
        inputs = {name: {"shape": [None], "dtype": "int32", "vocabulary": vocabulary}}
        opening = [
            {"type": "Embedding", "input_dim": vocabulary, "output_dim": width, "mask_zero": draw(st.booleans())},
            {"type": "GlobalAveragePooling1D"},
        ]
    trunk = opening + draw(stack(width, adapt=adapt))
    count = draw(st.integers(1, 3))
    names = draw(st.lists(st.sampled_from(OUTPUT_NAMES), min_size=count, max_size=count, unique=True))
    outputs, targets, losses, metrics = {}, {}, {}, {}
    for output in names:
        free = draw(st.integers(0, 3)) > 0
        drawn = draw(target(width, free=free))
        head = draw(stack(width, adapt=adapt, max_size=2))
        outputs[output] = head + drawn["final"] if free else head
        targets[output] = drawn["target"]
        losses[output] = drawn["loss"]
        if drawn["metrics"]:
            metrics[output] = drawn["metrics"]
    if not trunk and not any(outputs.values()):  # a model with no layers is refused: nothing to train
        trunk = [{"type": "Dense", "units": width}]
    model = (
        {"inputs": inputs, "layers": trunk, "outputs": outputs}
        if trunk or draw(st.booleans())
        else {"inputs": inputs, "outputs": outputs}
    )
    return {"model": model, "targets": targets, "losses": losses, "metrics": metrics, "family": family}


MERGES = ("concatenate", "add", "average", "multiply")


@st.composite
def branch(draw, width: int, *, joins_width: bool, adapt: bool, words: bool) -> tuple[dict, list | None]:
    """One input of a branched model and its branch (None: merged as given). `joins_width`: what
    reaches the merge is `width` wide (add, average, multiply need equal shapes); else any width
    (concatenate). `words`: it may be a string input (never the first: padding values are drawn
    for the first input)."""
    kind = draw(st.sampled_from(["vector", "vector", "ids"] + (["words"] if words else [])))
    if kind == "ids":  # integer ids always go through an embedding
        item = {"shape": [2], "dtype": "int32", "vocabulary": 5}
        layers = [{"type": "Embedding", "input_dim": 5, "output_dim": 2}, {"type": "Flatten"}]
        return item, layers + ([{"type": "Dense", "units": width}] if joins_width else [])
    if kind == "words":  # one string per example, hashed to an id, embedded
        item = {"shape": [], "dtype": "string"}
        embedding = {"type": "Embedding", "input_dim": 6, "output_dim": width if joins_width else 2}
        return item, [{"type": "Hashing", "num_bins": 6}, embedding]
    size = width if joins_width or draw(st.booleans()) else draw(st.integers(1, 4))
    item = {"shape": [size]}
    if size == width and draw(st.booleans()):
        return item, None
    if size == width:
        return item, draw(stack(width, adapt=adapt, min_size=1, max_size=2))
    layers = [{"type": "Normalization", "adapt": True}] if adapt and draw(st.booleans()) else []
    return item, [*layers, {"type": "Dense", "units": width if joins_width else draw(st.integers(2, 4))}]


def holds_strings(drawn: dict) -> bool:
    """Whether a drawn model has a string input."""
    return any(item.get("dtype") == "string" for item in drawn["model"]["inputs"].values())


@st.composite
def branched_model(draw) -> dict:
    """A layer model of two or three inputs, some with branches, merged in any mode; the trunk
    opens with a Dense of the trunk's width after a concatenation (whose width is the sum)."""
    width = draw(st.integers(3, 6))
    merge = draw(st.sampled_from(MERGES))
    adapt = draw(st.integers(0, 2)) == 0
    count = draw(st.integers(2, 3))
    names = draw(st.lists(st.sampled_from(INPUT_NAMES), min_size=count, max_size=count, unique=True))
    inputs, branches = {}, {}
    for index, name in enumerate(names):
        joins_width = merge != "concatenate"
        inputs[name], layers = draw(branch(width, joins_width=joins_width, adapt=adapt, words=index > 0))
        if layers is not None:
            branches[name] = layers
    opening = [{"type": "Dense", "units": width, "activation": "relu"}] if merge == "concatenate" else []
    trunk = opening + draw(stack(width, adapt=adapt, max_size=2))
    drawn = draw(target(width, free=True))
    output = draw(st.sampled_from(OUTPUT_NAMES))
    model = {"inputs": inputs, "branches": branches} if branches else {"inputs": inputs}
    if merge != "concatenate" or draw(st.booleans()):
        model["merge"] = merge
    model |= {"layers": trunk, "outputs": {output: drawn["final"]}} if trunk else {"outputs": {output: drawn["final"]}}
    metrics = {output: drawn["metrics"]} if drawn["metrics"] else {}
    targets, losses = {output: drawn["target"]}, {output: drawn["loss"]}
    return {"model": model, "targets": targets, "losses": losses, "metrics": metrics, "family": "branches"}


@st.composite
def builder_model(draw) -> dict:
    """A `builder` model of one to three vector or image inputs and one to three outputs."""
    count = draw(st.integers(1, 3))
    names = draw(st.lists(st.sampled_from(INPUT_NAMES), min_size=count, max_size=count, unique=True))
    inputs = {name: {"shape": draw(st.sampled_from([[3], [5], [2, 2]]))} for name in names}
    outputs = draw(st.lists(st.sampled_from(OUTPUT_NAMES), min_size=1, max_size=3, unique=True))
    targets, losses, metrics = {}, {}, {}
    for output in outputs:
        drawn = draw(target(4, free=True))
        targets[output] = drawn["target"]
        losses[output] = drawn["loss"]
        if drawn["metrics"]:
            metrics[output] = drawn["metrics"]
    shapes = {name: item["shape"] for name, item in inputs.items()}
    heads = {
        name: [class_count(t)] if t.get("classes") and not t["shape"] else t["shape"] for name, t in targets.items()
    }
    kwargs = {"inputs": shapes, "outputs": heads}
    if draw(st.booleans()):
        kwargs["width"] = draw(st.integers(4, 8))
    model = {"inputs": inputs, "builder": BUILDER, "kwargs": kwargs}
    return {"model": model, "targets": targets, "losses": losses, "metrics": metrics, "family": "builder"}


def class_count(target: dict) -> int:
    """A drawn class target's number of classes (given, or the length of its names)."""
    classes = target["classes"]
    return len(classes) if isinstance(classes, list) else classes


# --- data ---------------------------------------------------------------------------------------


def feature_dtype(dtype: str) -> str:
    if dtype == "string":
        return "string"
    return "int64" if dtype.startswith(("int", "uint")) or dtype == "bool" else "float32"


@st.composite
def source(
    draw, inputs: dict, targets: dict, *, examples: int, array_only: bool = False, kind: str | None = None
) -> dict:
    """Any source type (or `kind`); none of the files need to exist to build (smoke runs use --synthetic)."""
    types = ["synthetic", "npz", "python", "keras"] + ([] if array_only else ["tfrecord"])
    if all(fills_columns(item["shape"]) for item in {**inputs, **targets}.values()):
        types.append("csv")
    assume(kind in (None, *types))  # a csv file cannot hold every shape
    kind = kind or draw(st.sampled_from(types))
    if kind == "synthetic":
        return {"type": "synthetic", "examples": examples}
    if kind == "csv":
        return draw(csv_source(inputs, targets))
    if kind == "npz":

        def arrays(names: dict, single: str) -> Any:
            if len(names) == 1 and draw(st.booleans()):
                return single
            return {name: f"{single}_{name}" for name in names}

        return {"type": "npz", "path": "data/drawn.npz", "x": arrays(inputs, "x"), "y": arrays(targets, "y")}
    if kind == "python":
        kwargs = draw(st.sampled_from([{}, {"examples": examples}, {"seed": 3, "scale": 0.5}]))
        found = {"type": "python", "function": "drawn_data.arrays:load"}
        return found | ({"kwargs": kwargs} if kwargs else {})
    if kind == "keras":
        return {
            "type": "keras",
            "dataset": draw(st.sampled_from(["mnist", "boston_housing"])),
            "split": draw(st.sampled_from(["train", "test"])),
        }
    features = {
        name: {"shape": item["shape"], "dtype": feature_dtype(item.get("dtype", "float32"))}
        for name, item in {**inputs, **targets}.items()
    }
    found = {"type": "tfrecord", "files": "data/drawn-*.tfrecord", "features": features}
    compression = draw(st.sampled_from([None, "GZIP", "ZLIB"]))
    return found | ({"compression": compression} if compression else {})


def fills_columns(shape: list) -> bool:
    """Whether CSV columns fill examples of `shape`: one column `[]` or `[1]`, n columns `[n]`."""
    return len(shape) == 0 or (len(shape) == 1 and shape[0] is not None)


@st.composite
def csv_source(draw, inputs: dict, targets: dict) -> dict:
    """A csv source mapping each input and target to its column(s) (the file need not exist)."""

    def columns(names: dict) -> Any:
        mapping = {
            name: name if item["shape"] in ([], [1]) and draw(st.booleans()) else f"{name}_0"
            for name, item in names.items()
        }
        for name, item in names.items():
            if item["shape"] and item["shape"] != [1]:
                mapping[name] = [f"{name}_{i}" for i in range(item["shape"][0])]
            elif item["shape"] == [1] and draw(st.booleans()):
                mapping[name] = [name]
        if len(mapping) == 1 and draw(st.booleans()):
            return next(iter(mapping.values()))
        return mapping

    found = {"type": "csv", "path": "data/drawn.csv", "x": columns(inputs), "y": columns(targets)}
    if draw(st.booleans()):
        found["delimiter"] = draw(st.sampled_from([";", "\t", "|"]))
    if draw(st.booleans()):
        found["na_values"] = draw(st.sampled_from([["NA"], ["", "n/a"]]))
    return found


def padded_batch(inputs: dict, sequence: bool) -> st.SearchStrategy[dict]:
    """`padded_batch` options: none, padding values, or shapes (the synthetic length is 8)."""
    name = next(iter(inputs))
    value = "" if inputs[name].get("dtype") == "string" else 0
    options = [st.just({}), st.just({"padding_values": {name: value}})]
    if sequence:
        options.append(st.builds(lambda n: {"padded_shapes": {name: [n]}}, st.integers(8, 10)))
    return st.one_of(options)


# The source types `augment` is drawn on (all the strategy draws; csv for vectors only). Folder and
# tfds sources are not drawn: tests/e2e/test_augmented_resume.py resumes them augmented.
AUGMENTED_SOURCES = ("synthetic", "npz", "python", "keras", "tfrecord", "csv")


def augmentable(drawn: dict) -> bool:
    """Whether `data.train.augment` may be drawn: one input of vectors or images."""
    return len(drawn["model"]["inputs"]) == 1 and drawn["family"] in ("vector", "image")


@st.composite
def augmentation(draw, family: str, dtype: str) -> list[dict]:
    """One to three random layers for the family's examples of `dtype` (each draws through a
    Keras seed generator; noise only on floats: it cannot be added to integers)."""
    noise = st.builds(lambda stddev: {"type": "GaussianNoise", "stddev": stddev}, finite(0.01, 0.1))
    layers = [noise, st.just({"type": "GaussianDropout", "rate": 0.1})] if dtype.startswith("float") else []
    if family == "image":
        layers += [
            st.just({"type": "RandomFlip", "mode": "horizontal"}),
            st.just({"type": "RandomRotation", "factor": 0.1}),
            st.just({"type": "RandomTranslation", "height_factor": 0.2, "width_factor": 0.2}),
        ]
    return draw(st.lists(st.one_of(layers), min_size=1, max_size=3))


@st.composite
def data(draw, drawn: dict, batch_size: int, *, augmented: bool = False, source_type: str | None = None) -> dict:
    """`augmented`: always an `augment` list (the model must be `augmentable`); `source_type`: the
    training source's type."""
    model, targets = drawn["model"], drawn["targets"]
    inputs = model["inputs"]
    sequence = drawn["family"] == "sequence"
    examples = batch_size * draw(st.integers(2, 4))
    train = {"source": draw(source(inputs, targets, examples=examples, kind=source_type)), "batch_size": batch_size}
    if draw(st.booleans()):
        train["shuffle"] = draw(st.sampled_from([16, 64, 256]))
    if not draw(st.integers(0, 4)):
        train["drop_remainder"] = False
    if not draw(st.integers(0, 4)):
        train["cache"] = draw(st.sampled_from([True, "cache/train"]))
    if sequence or not draw(st.integers(0, 5)):
        if sequence and train.get("drop_remainder", True) and draw(st.booleans()):
            train["bucket_by_sequence_length"] = {"boundaries": [4, 8], "batch_sizes": [batch_size] * 3}
            if draw(st.booleans()):
                train["bucket_by_sequence_length"]["input"] = next(iter(inputs))
        else:
            train["padded_batch"] = draw(padded_batch(inputs, sequence))
    if augmentable(drawn):
        if not draw(st.integers(0, 3)):
            train["preprocess"] = [{"type": "Rescaling", "scale": draw(finite(0.5, 2.0))}]
        if augmented or not draw(st.integers(0, 3)):
            dtype = next(iter(inputs.values())).get("dtype", "float32")
            train["augment"] = draw(augmentation(drawn["family"], dtype))
    in_memory = draw(st.sampled_from(["auto", "auto", True, False]))
    blocked = (
        holds_strings(drawn)  # strings stream through tf.data
        or train["source"]["type"] == "tfrecord"
        or not train.get("drop_remainder", True)
        or train.get("cache", False) is not False
        or "padded_batch" in train
        or "bucket_by_sequence_length" in train
    )
    if in_memory != "auto" and not (in_memory is True and blocked):
        train["in_memory"] = in_memory
    spec: dict[str, Any] = {"train": train}
    validation = draw(st.sampled_from(["none", "split", "source"]))
    if validation == "split" and train["source"]["type"] != "tfrecord":
        spec["validation_split"] = draw(st.sampled_from([0.2, 0.25, 0.5]))
        stratifiable = len(targets) == 1 and all(t["shape"] == [] and t.get("classes") for t in targets.values())
        if stratifiable and draw(st.booleans()):
            spec["stratify"] = True
    elif validation != "none":
        held = {"source": draw(source(inputs, targets, examples=batch_size * 2))}
        if draw(st.booleans()):
            held["batch_size"] = draw(st.sampled_from([batch_size, 2 * batch_size]))
        if not draw(st.integers(0, 3)):
            held["cache"] = True
        if sequence and draw(st.booleans()):
            held["padded_batch"] = draw(padded_batch(inputs, sequence))
        spec["validation"] = held
    test = draw(st.sampled_from(["none", "none", "split", "source"]))
    if test == "split" and train["source"]["type"] != "tfrecord":
        spec["test_split"] = draw(st.sampled_from([0.1, 0.2]))
    elif test == "source":
        tested = {"source": draw(source(inputs, targets, examples=batch_size * 2))}
        if draw(st.booleans()):
            tested["batch_size"] = draw(st.sampled_from([batch_size, 3 * batch_size]))
        spec["test"] = tested
    if not draw(st.integers(0, 4)):
        spec["shard_policy"] = draw(st.sampled_from(["auto", "data", "file", "off"]))
    return spec


# --- training -----------------------------------------------------------------------------------


def history_keys(drawn: dict, validated: bool, weighting: str, distils: bool = False) -> list[str]:
    """The keys a run logs (as tfgen.names.history_keys computes them from a Spec)."""
    outputs = list(drawn["targets"])
    several = len(outputs) > 1
    keys = ["loss"] + ([f"{output}_loss" for output in outputs] if several else [])
    keys += ["student_loss", "distillation_loss"] if distils else []
    for output, metrics in drawn["metrics"].items():
        for metric in metrics:
            if isinstance(metric, str):
                name = DEFAULT_METRIC_NAMES[metric]
            else:
                name = metric.get("name") or DEFAULT_METRIC_NAMES[metric["type"]]
            keys.append(f"{output}_{name}" if several else name)
    if validated:
        keys += [f"val_{key}" for key in keys]
    if weighting != "static":
        keys += [f"{output}_loss_weight" for output in outputs]
    return keys


@st.composite
def optimizer(draw, multi_replica: bool) -> dict:
    kind = draw(st.sampled_from(["Adam", "SGD", "RMSprop", "AdamW"]))
    rate = draw(st.sampled_from(["number", "number", "schedule", "absent"]))
    found: dict[str, Any] = {"type": kind}
    if rate == "number":
        found["learning_rate"] = draw(st.sampled_from([0.01, 0.001, 0.05]))
    elif rate == "schedule":
        found["learning_rate"] = draw(
            st.sampled_from(
                [
                    {"type": "ExponentialDecay", "initial_learning_rate": 0.01, "decay_steps": 10, "decay_rate": 0.9},
                    {"type": "CosineDecay", "initial_learning_rate": 0.01, "decay_steps": 20},
                    {"type": "PiecewiseConstantDecay", "boundaries": [5, 10], "values": [0.01, 0.005, 0.001]},
                ]
            )
        )
    if kind == "SGD" and draw(st.booleans()):
        found["momentum"] = 0.9
    if not multi_replica and not draw(st.integers(0, 5)):
        found[draw(st.sampled_from(["clipnorm", "global_clipnorm", "clipvalue"]))] = 1.0
    return found


@st.composite
def strategy(draw, batch_size: int) -> dict:
    kind = draw(st.sampled_from(["default", "mirrored", "one_device", "multi_worker_mirrored", "mirrored", "default"]))
    if kind == "default":
        return {} if draw(st.booleans()) else {"type": "default"}
    if kind == "one_device":
        return {"type": "one_device", "device": "/cpu:0"}
    if kind == "mirrored":
        options = [{"cpu_replicas": 2}, {}, {"devices": ["/cpu:0"]}, {"cpu_replicas": 1}]
        return {"type": "mirrored"} | draw(st.sampled_from(options))
    found: dict[str, Any] = {"type": "multi_worker_mirrored"}
    if draw(st.booleans()):
        found["communication"] = draw(st.sampled_from(["auto", "ring"]))
    if draw(st.booleans()):
        found["timeout_seconds"] = draw(st.sampled_from([None, 30.0, 600.0]))
    return found


def monitor_mode(draw, keys: list[str]) -> dict:
    found = {"monitor": draw(st.sampled_from(keys))}
    if draw(st.booleans()):
        found["mode"] = draw(st.sampled_from(["auto", "min", "max"]))
    return found


@st.composite
def train(
    draw, keys: list[str], *, bucketed: bool, lookups: bool, checks: bool, jit_allowed: bool, rate_written: bool
) -> dict:
    found: dict[str, Any] = {"epochs": draw(st.integers(1, 3))}
    if not draw(st.integers(0, 2)):
        found["early_stopping"] = monitor_mode(draw, keys) | draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "patience": st.integers(0, 3),
                    "min_delta": st.sampled_from([0.0, 0.01]),
                    "baseline": st.sampled_from([None, 0.5]),
                    "restore_best_weights": st.booleans(),
                    "start_from_epoch": st.integers(0, 2),
                },
            )
        )
    if not draw(st.integers(0, 2)):
        found["gradient_clipping"] = {draw(st.sampled_from(["global_norm", "norm", "value"])): draw(finite(0.5, 5.0))}
    if not bucketed and not draw(st.integers(0, 2)):
        found["gradient_accumulation_steps"] = draw(st.integers(1, 3))
    if found.get("gradient_accumulation_steps", 1) == 1 and not draw(st.integers(0, 3)):
        found["sharpness_aware"] = {"rho": draw(st.sampled_from([0.01, 0.05]))}
    if rate_written and not draw(st.integers(0, 2)):
        found["warmup"] = {"steps": draw(st.integers(1, 10))} | ({"initial": 0.001} if draw(st.booleans()) else {})
    if rate_written and not draw(st.integers(0, 2)):
        found["reduce_on_plateau"] = monitor_mode(draw, keys) | draw(
            st.fixed_dictionaries(
                {},
                optional={
                    "factor": st.sampled_from([0.1, 0.5]),
                    "patience": st.integers(0, 3),
                    "min_delta": st.sampled_from([0.0, 0.001]),
                    "cooldown": st.integers(0, 2),
                    "min_lr": st.sampled_from([0.0, 1e-5]),
                },
            )
        )
    found |= draw(
        st.fixed_dictionaries(
            {},
            optional={
                "validation_every": st.integers(1, 2),
                "validation_steps": st.integers(1, 3),
                "allow_unused_variables": st.booleans(),
                "on_nonfinite": st.sampled_from(["stop", "skip"]),
                "steps_per_execution": st.sampled_from(["auto", 1, 2, 5]),
            },
        )
    )
    jit = ["auto", False] + ([True] if jit_allowed and not lookups and not checks else [])
    if draw(st.booleans()):
        found["jit_compile"] = draw(st.sampled_from(jit))
    return found


@st.composite
def checkpoint(draw, keys: list[str]) -> dict:
    found: dict[str, Any] = {}
    cadence = draw(st.sampled_from(["none", "epochs", "steps"]))
    if cadence == "epochs":
        found["every_epochs"] = draw(st.integers(1, 2))
    elif cadence == "steps":
        found["every_steps"] = draw(st.integers(1, 5))
    if not draw(st.integers(0, 2)):
        found["keep_best"] = monitor_mode(draw, keys)
    return found | draw(
        st.fixed_dictionaries(
            {},
            optional={
                "keep": st.integers(1, 4),
                "resume": st.sampled_from(["auto", "never"]),
                "export": st.sampled_from([[], ["keras"], ["saved_model"], ["keras", "saved_model"]]),
            },
        )
    )


@st.composite
def logging(draw) -> dict:
    return draw(
        st.fixed_dictionaries(
            {},
            optional={
                "tensorboard": st.booleans(),
                "every_steps": st.integers(1, 10),
                "profile": st.builds(
                    lambda start, steps: {"start_step": start, "steps": steps}, st.integers(1, 3), st.integers(1, 2)
                ),
            },
        )
    )


@st.composite
def specs(draw, *, augmented: bool = False, source_type: str | None = None) -> dict:
    """A valid spec over the whole spec model (`augmented`: one that augments its training
    examples; `source_type`: on a training source of that type)."""
    models = st.one_of(layer_model(), layer_model(), branched_model(), builder_model())
    drawn = draw(layer_model().filter(augmentable) if augmented else models)
    batch_size = draw(st.sampled_from([4, 8]))
    spec: dict[str, Any] = {"name": draw(st.sampled_from(["drawn", "run", "model", "keras", "x"]))}
    if draw(st.booleans()):
        spec["seed"] = draw(st.integers(0, 2**32 - 1))
    precision = draw(st.sampled_from(["float32", "float32", "mixed_float16", "mixed_bfloat16"]))
    if precision != "float32" or draw(st.booleans()):
        spec["precision"] = precision
    chosen = draw(strategy(batch_size))
    if chosen:
        spec["strategy"] = chosen
    kind = chosen.get("type", "default")
    multi_replica = kind in ("mirrored", "multi_worker_mirrored")
    spec["data"] = draw(data(drawn, batch_size, augmented=augmented, source_type=source_type))
    spec["model"] = drawn["model"]
    spec["targets"] = drawn["targets"]
    spec["losses"] = drawn["losses"]
    if drawn["metrics"]:
        spec["metrics"] = drawn["metrics"]
    weighting = draw(st.sampled_from(["static", "static", "uncertainty", "ema_ratio"]))
    if weighting != "static" or draw(st.booleans()):
        spec["loss_weighting"] = {"type": weighting}
        if weighting == "ema_ratio" and draw(st.booleans()):
            spec["loss_weighting"]["decay"] = draw(st.sampled_from([0.5, 0.9, 0.99]))
    spec["optimizer"] = draw(optimizer(multi_replica))
    validated = "validation" in spec["data"] or "validation_split" in spec["data"]
    classes = any(target.get("classes") for target in drawn["targets"].values())
    # Not where a drawn spec runs outside `tfgen smoke` (augmented, killed and resumed): its teacher
    # does not exist, and smoke trains with a stand-in.
    distils = not augmented and weighting != "ema_ratio" and classes and draw(st.integers(0, 3)) == 0
    if distils:
        spec["algorithm"] = {
            "type": "distillation",
            "teacher": "runs/teacher/model.keras",
            "temperature": draw(st.sampled_from([1.0, 3.0, 5.0])),
            "student_loss_weight": draw(st.sampled_from([0.0, 0.1, 0.5, 1.0])),
        }
    keys = history_keys(drawn, validated, weighting, distils)
    checks = draw(st.integers(0, 5)) == 0
    lookups = holds_strings(drawn)  # a step that takes strings is never XLA-compiled
    spec["train"] = draw(
        train(
            keys,
            bucketed="bucket_by_sequence_length" in spec["data"]["train"],
            lookups=lookups,
            checks=checks,
            jit_allowed=kind in ("default", "one_device"),
            rate_written="learning_rate" in spec["optimizer"],
        )
    )
    found = draw(checkpoint(keys))
    if found:
        spec["checkpoint"] = found
    logged = draw(logging())
    if logged:
        spec["logging"] = {**logged, "report": False}  # (drawn in tests/runtime/test_run_report.py)
    if checks:
        spec["debug"] = {"check_numerics": True}
    if draw(st.booleans()):
        spec["deterministic"] = draw(st.booleans())
    if not draw(st.integers(0, 4)):
        spec["output_dir"] = draw(st.sampled_from(["runs/drawn", "out/it's here", "/tmp/tfgen-drawn"]))
    return spec


def trainable(spec: dict) -> bool:
    """Whether `tfgen smoke` can run the spec on one machine (multi-worker needs a cluster)."""
    return spec.get("strategy", {}).get("type") != "multi_worker_mirrored"


# --- the gan algorithm ------------------------------------------------------------------------

GAN_HIDDEN = [
    {"type": "Dense", "units": 8, "activation": "relu"},
    {"type": "LeakyReLU", "negative_slope": 0.2},
    {"type": "Dropout", "rate": 0.1},
    {"type": "Dense", "units": 4, "kernel_regularizer": {"type": "L2", "l2": 0.01}},
]


@st.composite
def gan_specs(draw) -> dict:
    """A valid `algorithm: {type: gan}` spec: MLP networks of drawn layers, any loss, with or
    without a gradient penalty, extra discriminator steps, a condition, replicas, saves and
    precision."""
    width = draw(st.sampled_from([4, 9, 16]))  # 9 and 16 values: image-shaped samples (a PNG grid)
    algorithm: dict[str, Any] = {"type": "gan"}
    for key, options in (
        ("loss", ["non_saturating", "wasserstein", "hinge"]),
        ("gradient_penalty", [1.0, 10.0]),
        ("discriminator_steps", [1, 2]),
        ("condition", ["label"]),
    ):
        if draw(st.booleans()):
            algorithm[key] = draw(st.sampled_from(options))
    generator = {
        "inputs": {"noise": {"shape": [draw(st.sampled_from([2, 8]))]}},
        "layers": draw(st.lists(st.sampled_from(GAN_HIDDEN), max_size=3)),
        "outputs": {"pixels": [{"type": "Dense", "units": width}]},
    }
    discriminator = {
        "inputs": {"pixels": {"shape": [width]}},
        "layers": draw(st.lists(st.sampled_from(GAN_HIDDEN), max_size=3)),
        "outputs": {"score": [{"type": "Dense", "units": 1}]},
    }
    if "condition" in algorithm:
        for network in (generator, discriminator):
            network["inputs"]["label"] = {"shape": [3]}
    sources = [{"type": "synthetic", "examples": 64}, {"type": "npz", "path": "data/drawn.npz", "x": "x", "y": "y"}]
    spec: dict[str, Any] = {
        "name": "drawn_gan",
        "seed": draw(st.integers(0, 2**32 - 1)),
        "data": {"train": {"source": draw(st.sampled_from(sources)), "batch_size": draw(st.sampled_from([4, 8]))}},
        "algorithm": algorithm,
        "networks": {"generator": generator, "discriminator": discriminator},
        "optimizers": {
            name: draw(st.sampled_from(["Adam", "SGD", {"type": "RMSprop", "learning_rate": 0.001}]))
            for name in ("generator", "discriminator")
        },
        "targets": {"label": {"shape": [], "dtype": "int32", "classes": 3}},
        "train": {"epochs": 2} | draw(st.sampled_from([{}, {"steps_per_execution": 1}, {"steps_per_execution": 3}])),
    }
    for key, options in (
        ("strategy", [{"type": "mirrored", "cpu_replicas": 2}, {"type": "one_device", "device": "/cpu:0"}]),
        ("checkpoint", [{"every_steps": 3, "keep": 2}, {"every_epochs": 2}, {"resume": "never"}]),
        ("deterministic", [True]),
        ("precision", ["mixed_float16", "mixed_bfloat16"]),
    ):
        if draw(st.booleans()):
            spec[key] = draw(st.sampled_from(options))
    return spec


# --- the contrastive algorithm ----------------------------------------------------------------

IMAGE_VIEWS = [
    {"type": "RandomFlip"},
    {"type": "RandomTranslation", "height_factor": 0.1, "width_factor": 0.1},
    {"type": "RandomRotation", "factor": 0.1},
    {"type": "RandomZoom", "height_factor": 0.1},
    {"type": "GaussianNoise", "stddev": 0.1},
]
VECTOR_VIEWS = [{"type": "GaussianNoise", "stddev": 0.1}, {"type": "GaussianDropout", "rate": 0.1}]


@st.composite
def contrastive_specs(draw) -> dict:
    """A valid `algorithm: {type: contrastive}` spec: an image or vector encoder, drawn views,
    simclr (either negatives) or simsiam, with or without a probe (and then validation and early stopping on a
    logged figure), replicas, saves and precision."""
    image = draw(st.booleans())
    shape = [8, 8, 1] if image else [6]
    method = draw(st.sampled_from(["simclr", "simsiam"]))
    width = draw(st.sampled_from([4, 8]))
    algorithm: dict[str, Any] = {
        "type": "contrastive",
        "method": method,
        "views": draw(st.lists(st.sampled_from(IMAGE_VIEWS if image else VECTOR_VIEWS), min_size=1, max_size=3)),
        "projection": [{"type": "Dense", "units": 8, "activation": "relu"}, {"type": "Dense", "units": width}][
            draw(st.sampled_from([0, 1])) :
        ],
    }
    if method == "simsiam":
        algorithm["predictor"] = [{"type": "Dense", "units": width}]
    elif draw(st.booleans()):
        algorithm["temperature"] = draw(st.sampled_from([0.1, 0.5]))
    if method == "simclr" and draw(st.booleans()):
        algorithm["negatives"] = draw(st.sampled_from(["both_views", "other_view"]))
    layers = [{"type": "Flatten"}] if image else []
    layers += draw(st.lists(st.sampled_from(GAN_HIDDEN), max_size=2))
    spec: dict[str, Any] = {
        "name": "drawn_contrastive",
        "seed": draw(st.integers(0, 2**32 - 1)),
        "data": {
            "train": {"source": {"type": "synthetic", "examples": 64}, "batch_size": draw(st.sampled_from([4, 8]))}
        },
        "algorithm": algorithm,
        "model": {
            "inputs": {"x": {"shape": shape}},
            "layers": layers,
            "outputs": {"representation": [{"type": "Dense", "units": 8}]},
        },
        "optimizer": draw(st.sampled_from(["Adam", "SGD", {"type": "RMSprop", "learning_rate": 0.001}])),
        "targets": {"label": {"shape": [], "dtype": "int32", "classes": 3}},
        "train": {"epochs": 2} | draw(st.sampled_from([{}, {"steps_per_execution": 1}, {"steps_per_execution": 3}])),
    }
    if draw(st.booleans()):
        algorithm["probe"] = "label"
        spec["data"]["validation_split"] = 0.25
    logged = [
        "loss",
        *(["contrastive_accuracy"] if method == "simclr" else []),
        *(["probe_accuracy"] if "probe" in algorithm else []),
    ]
    if draw(st.booleans()):
        stopping = {"monitor": draw(st.sampled_from(logged)), "patience": 1}
        if draw(st.booleans()):
            stopping["restore_best_weights"] = True
        spec["train"]["early_stopping"] = stopping
    for key, options in (
        ("strategy", [{"type": "mirrored", "cpu_replicas": 2}, {"type": "one_device", "device": "/cpu:0"}]),
        (
            "checkpoint",
            [
                {"every_steps": 3, "keep": 2},
                {"every_epochs": 2},
                {"resume": "never"},
                {"export": ["keras", "saved_model"]},
            ],
        ),
        ("deterministic", [True]),
        ("precision", ["mixed_float16", "mixed_bfloat16"]),
    ):
        if draw(st.booleans()):
            spec[key] = draw(st.sampled_from(options))
    return spec
