"""Benchmark tfgen's generated loops against model.fit, the naive loop and each case's limit.

    python benchmarks/run.py            # the full run (about an hour on 2 cores, with scaling.py --growth)
    python benchmarks/run.py --quick    # the MLP, the CNN and the streamed cases, smaller, one round: ~8 minutes
    python benchmarks/run.py --smoke    # tiny sizes, for the test suite

Every (case, system) runs in its own subprocess (clean memory numbers, no shared TF state). The
systems of a case run in lockstep: started together, then taking turns an epoch each, so that every
system's epochs meet the same machine (this one is shared; its speed moves by tens of percent
within minutes). Rounds interleave too: the second gives the turns in the reverse order.
Writes benchmarks/results/latest.json and docs/benchmarks.md (+ docs/benchmarks.png).

Systems, on the same model, data, batch size and machine:
  fit_default   Keras model.fit with defaults
  fit_tuned     model.fit with steps_per_execution and jit_compile=True
  naive         the seed articles' loop: a @tf.function step called from a Python for-loop
  tfgen         the generated loop from the spec with no performance option (defaults)
  input_alone   the generated script with its step replaced by one that only reads each batch:
                its own input (the tf.data pipeline, or its in-memory slices), nothing trained
  step_alone    the generated script on batches already in memory: a streamed pipeline's
                first epoch cached and replayed (in-memory data already is)
  xla_epoch     a hand-written reference: a bare XLA-compiled step over batches sliced from
                in-memory tensors, one tf.function per epoch, no metrics (the in-memory cases)
  xla_epoch_metrics  the same, its step also returning the loss and the hit count, summed over
                the epoch (the figures the generated loop logs); the MLP cases only

Derived per case (`derived`): `best_fit`, the faster of fit_default and fit_tuned (the peer every
headline ratio is against), and `limit`, the slower of input_alone and step_alone (its `bound`:
input or compute). A case without those systems shows "-".

Streamed cases (TFRecord shards, an .npz source above the in-memory budget, bucketed sequences)
compare the generated loop with `fit` over the script's own `build_datasets()` pipeline; the
file cases (`image_folder`: PNG files in class folders, `csv`: a CSV with a string column) compare
it with `fit` over Keras's own loaders (`image_dataset_from_directory`, `make_csv_dataset`); the
`first_epoch` case times a whole process, from its start to the end of its first epoch.
"""

from __future__ import annotations

import argparse
import contextlib
import json
import os
import platform
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))  # tfgen, and tfgen.datasets for the sequences case
# The systems that bound a case: its input alone and its step alone (the case's limit is the slower).
BOUNDS = ["input_alone", "step_alone"]
SYSTEMS = ["fit_default", "fit_tuned", "naive", "tfgen", *BOUNDS, "xla_epoch"]
ALL_SYSTEMS = [*SYSTEMS, "xla_epoch_metrics"]  # xla_epoch_metrics: the MLP cases only
# The naive loop and the XLA epoch slice arrays in memory: not on streamed data.
STREAMED = ["fit_default", "fit_tuned", "tfgen", *BOUNDS]
# case: spec, examples, batch size, precision, epochs (full run); `source`: how the data reaches the
# script (default: synthetic arrays, in memory); `systems` when not all of them apply. More epochs
# where one epoch tells least: this machine's speed has two modes ~2.5x apart that switch within
# seconds, and a median of the MLP cases' ~1 s epochs needs 16 of them to land in the common mode
# for every system (24 for the streamed .npz, whose runs of slow epochs last several, and for
# `sequences`, whose 0.3 s epochs ranged 8.6k-29.6k examples/s in one process); `cnn_mixed`'s few
# epochs compare two XLA-compiled float16 steps doing the same work.
CASES = {
    "mlp": {
        "spec": "specs/mnist.yaml",
        "examples": 60000,
        "batch": 32,
        "precision": "float32",
        "epochs": 16,
        "systems": ALL_SYSTEMS,
    },
    # A quarter of the examples: short epochs (the per-call and per-epoch costs weigh more).
    "mlp_short": {
        "spec": "specs/mnist.yaml",
        "examples": 15000,
        "batch": 32,
        "precision": "float32",
        "epochs": 16,
        "systems": ["fit_tuned", "tfgen", *BOUNDS, "xla_epoch", "xla_epoch_metrics"],
    },
    "cnn": {"spec": "specs/cifar.yaml", "examples": 1920, "batch": 128, "precision": "float32", "epochs": 4},
    "cnn_mixed": {
        "spec": "specs/cifar.yaml",
        "examples": 1920,
        "batch": 128,
        "precision": "mixed_float16",
        "epochs": 8,
    },
    "multitask": {"spec": "specs/multitask.yaml", "examples": 2048, "batch": 32, "precision": "float32", "epochs": 5},
    # 30,000 examples in 4 files of tf.train.Example records: the tf.data path.
    "mlp_tfrecord": {
        "spec": "specs/mnist.yaml",
        "examples": 30000,
        "batch": 32,
        "precision": "float32",
        "epochs": 16,
        "source": "tfrecord",
        "systems": STREAMED,
    },
    # An .npz file above the in-memory budget (lowered to 1 MB in the worker, see `streamed_npz`).
    "mlp_npz_stream": {
        "spec": "specs/mnist.yaml",
        "examples": 60000,
        "batch": 32,
        "precision": "float32",
        "epochs": 24,
        "source": "npz",
        "systems": STREAMED,
    },
    # Variable-length sequences from a Python generator, bucketed by length (no XLA: shapes vary).
    "sequences": {
        "spec": "specs/sequences.yaml",
        "examples": 8192,
        "batch": 32,
        "precision": "float32",
        "epochs": 24,
        "source": "sequences",
        "systems": STREAMED,
    },
    # 3,000 PNG files in 3 class folders (data/make_examples.py's shapes), decoded every epoch;
    # `fit` reads them with keras.utils.image_dataset_from_directory.
    "image_folder": {
        "spec": "specs/shapes.yaml",
        "examples": 3000,
        "batch": 32,
        "precision": "float32",
        "epochs": 8,
        "source": "image_folder",
        "systems": STREAMED,
    },
    # 60,000 rows of data/make_examples.py's houses (numbers and a string column); `fit` reads
    # them with tf.data.experimental.make_csv_dataset. No XLA for anyone: a string input.
    "csv": {
        "spec": "specs/houses.yaml",
        "examples": 60000,
        "batch": 64,
        "precision": "float32",
        "epochs": 4,
        "source": "csv",
        "systems": STREAMED,
        "jit_compile": False,
    },
    # keras.io's train_step overrides under `fit` (benchmarks/published/, on the 8x8 digits) against
    # the scripts of the specs beside them: benchmarks/published_cases.py runs these systems.
    "gan": {
        "spec": "benchmarks/published/dcgan.yaml",
        "examples": 7168,
        "batch": 64,
        "precision": "float32",
        "epochs": 8,
        "published": "dcgan",
        "systems": ["fit_default", "fit_tuned", "tfgen"],
        "jit_compile": False,  # XLA made the published step 3x slower here (Conv2DTranspose on CPU)
    },
    "distillation": {
        "spec": "benchmarks/published/knowledge_distillation.yaml",
        "examples": 14336,
        "batch": 32,
        "precision": "float32",
        "epochs": 8,
        "published": "knowledge_distillation",
        "systems": ["fit_default", "fit_tuned", "tfgen"],
    },
    # specs/digits.yaml as it is: seconds from process start to the end of the first epoch.
    "first_epoch": {
        "spec": "specs/digits.yaml",
        "examples": 1437,
        "batch": 64,
        "precision": "float32",
        "epochs": 5,
        "source": "startup",
        "systems": ["fit_default", "fit_tuned", "tfgen"],  # whole processes: no bound of its own
    },
}
MODES = {
    "full": {"cases": list(CASES), "rounds": 2, "scale": 1.0, "epochs": None, "starts": 3},
    "quick": {
        "cases": ["mlp", "cnn", "mlp_tfrecord", "mlp_npz_stream", "sequences", "image_folder", "csv", "first_epoch"],
        "rounds": 1,
        "scale": 0.25,
        "epochs": None,
        "starts": 1,
    },
    "smoke": {"cases": ["mlp"], "rounds": 1, "scale": 0.005, "epochs": 3, "starts": 1},
}
TURNS_ENV = "TFGEN_BENCH_TURNS"  # where a worker asks the driver for its turns (see Turns)
WIDTH_ENV = "TFGEN_BENCH_WIDTH"  # a worker's Dense width multiplier (`widen`), for scaling.py --growth
STREAM_BUDGET_BYTES = 2**20  # the in-memory budget the `mlp_npz_stream` worker gives the script
# fit_tuned's fixed steps_per_execution: where the generated loop's `auto` starts (it doubles while calls are short)
TUNED_STEPS_PER_EXECUTION = 100


# --- the worker: one system on one case, in this process -------------------------------------


def rss_mb() -> float:
    with open("/proc/self/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1]) / 1024
    return 0.0


class Turns:
    """A worker's turns: with the driver's address in TURNS_ENV, it trains an epoch only in its turn.

    The driver starts the systems of a case together and, once every one has set up, gives them
    turns an epoch each, one after another (`run_in_lockstep`): every system's epochs meet the
    same machine, whose speed moves by tens of percent within minutes. A turn lasts until the
    worker asks for its next one (its untimed work between epochs included) or exits; then the
    driver stops the process (SIGSTOP) until its next turn, so that none of its threads runs in
    another's turn (`fit` starts its next epoch's tf.data iterator, which fills its shuffle and
    prefetch buffers, as it ends an epoch). Without the address (a worker run by hand), there are
    no turns.
    """

    def __init__(self, address: str | None):
        self.connection = None
        self.waited = 0.0  # seconds spent waiting for turns
        if address:
            self.connection = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
            self.connection.connect(address)

    def take(self) -> None:
        """End this worker's turn, if it has one, and wait for its next."""
        if self.connection is None:
            return
        started = time.perf_counter()
        self.connection.sendall(b"?")
        if self.connection.recv(1) != b"!":
            raise SystemExit("the benchmark driver went away")
        self.waited += time.perf_counter() - started

    def clock(self) -> float:
        """`time.perf_counter()` less the time spent waiting for turns."""
        return time.perf_counter() - self.waited


class TurnTime:
    """The `time` module, but for a `perf_counter` that stops while the worker waits for turns."""

    def __init__(self, turns: Turns):
        self.perf_counter = turns.clock

    def __getattr__(self, name):
        return getattr(time, name)


def benchmark_spec(case: dict, examples: int, epochs: int, data: Path | None = None) -> dict:
    """The case's example spec with its data, one device, and no performance option."""
    import yaml

    spec = yaml.safe_load((ROOT / case["spec"]).read_text())
    spec["name"] = "bench"
    if case.get("source") == "startup":  # the example spec as it is
        spec["output_dir"] = "run"
        return spec
    spec["precision"] = case["precision"]
    spec.pop("strategy", None)
    source = {"type": "synthetic", "examples": examples}
    if case.get("source") == "tfrecord":
        source = {
            "type": "tfrecord",
            "files": str(data / "train-*.tfrecord"),
            "features": {"image": {"shape": [28, 28], "dtype": "int64"}, "digit": {"dtype": "int64"}},
        }
    elif case.get("source") == "npz":
        source = {"type": "npz", "path": str(data / "train.npz"), "x": "x", "y": "y"}
    elif case.get("source") in ("image_folder", "csv"):  # the example spec's source, on the case's files
        source = {**spec["data"]["train"]["source"], **files_source(case, data)}
    train = {"source": source, "batch_size": case["batch"], "shuffle": min(examples, 10000)}
    if case.get("source") == "sequences":
        train = {**spec["data"]["train"], "shuffle": examples}
        train["source"]["kwargs"]["examples"] = examples
    spec["data"] = {"train": train}
    spec["train"] = {"epochs": epochs}
    spec["checkpoint"] = {"every_epochs": 1000, "keep": 1}
    widen(spec, float(os.environ.get(WIDTH_ENV, "1")))
    return spec


def widen(spec: dict, width: float) -> None:
    """Multiply the units of the spec's shared Dense layers by `width` (the model scaling of
    benchmarks/scaling.py --growth; its heads keep theirs)."""
    for layer in spec["model"].get("layers", []):
        if isinstance(layer, dict) and layer.get("type") == "Dense":
            layer["units"] = max(1, round(layer["units"] * width))


def files_source(case: dict, data: Path) -> dict:
    """Where the `image_folder` and `csv` cases' files are (written by `write_data`)."""
    if case["source"] == "image_folder":
        return {"directory": str(data / "shapes")}
    return {"path": str(data / "houses.csv")}


def write_data(case: dict, examples: int, folder: Path) -> None:
    """The case's data files: MNIST-shaped random images and labels (4 TFRecord shards or an .npz),
    or more of the example data sets' images or rows (data/make_examples.py)."""
    import numpy as np

    if case.get("source") in ("image_folder", "csv"):
        write_example_files(case, examples, folder)
        return

    rng = np.random.default_rng(0)
    images = rng.integers(0, 256, size=(examples, 28, 28), dtype=np.uint8)
    labels = rng.integers(0, 10, size=examples).astype(np.int32)
    if case.get("source") == "npz":
        np.savez(folder / "train.npz", x=images, y=labels)
    elif case.get("source") == "tfrecord":
        import tensorflow as tf

        def feature(values):
            return tf.train.Feature(int64_list=tf.train.Int64List(value=values))

        for shard in range(4):
            with tf.io.TFRecordWriter(str(folder / f"train-{shard}.tfrecord")) as writer:
                for i in range(shard, examples, 4):
                    example = {"image": feature(images[i].reshape(-1)), "digit": feature([labels[i]])}
                    writer.write(tf.train.Example(features=tf.train.Features(feature=example)).SerializeToString())


def write_example_files(case: dict, examples: int, folder: Path) -> None:
    """`examples` shapes images (a third per class) or houses rows, as data/make_examples.py draws them."""
    import importlib.util

    import numpy as np

    module_spec = importlib.util.spec_from_file_location("make_examples", ROOT / "data" / "make_examples.py")
    make = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(make)
    make.IMAGES_PER_SHAPE = examples // 3
    make.HOUSES = examples
    if case["source"] == "image_folder":
        make.write_shapes(folder, np.random.RandomState(make.SEED))
    else:
        make.write_houses(folder, np.random.RandomState(make.SEED + 1))


def keras_loader(case: dict, spec: dict, data: Path, module):
    """The case's files through Keras's own loader, as `({input: x}, {target: y})` batches:
    `image_dataset_from_directory` or `make_csv_dataset`, each with its defaults but the seed."""
    import keras
    import tensorflow as tf

    source = spec["data"]["train"]["source"]
    if case["source"] == "image_folder":
        (input_name,) = module.INPUTS
        (target_name,) = module.TARGETS
        dataset = keras.utils.image_dataset_from_directory(
            source["directory"],
            image_size=tuple(source["image_size"]),
            batch_size=case["batch"],
            seed=0,
            verbose=False,
        )
        dtype = module.INPUTS[input_name].dtype
        return dataset.map(lambda x, y: ({input_name: tf.cast(x, dtype)}, {target_name: y}))
    dataset = tf.data.experimental.make_csv_dataset(
        source["path"],
        batch_size=case["batch"],
        num_epochs=1,
        shuffle_buffer_size=spec["data"]["train"]["shuffle"],
        shuffle_seed=0,
    )

    def columns(row, mapping, fields):
        """Each field's column, or its columns stacked into a vector, in the field's dtype."""
        values = {}
        for name, column in mapping.items():
            value = tf.stack([row[c] for c in column], axis=-1) if isinstance(column, list) else row[column]
            values[name] = tf.cast(value, fields[name].dtype) if fields[name].dtype != "string" else value
        return values

    def split(row):
        return columns(row, source["x"], module.INPUTS), columns(row, source["y"], module.TARGETS)

    return dataset.map(split, num_parallel_calls=tf.data.AUTOTUNE)


def adapt_layers(model, dataset, module) -> None:
    """Adapt the model's adapted layers as the generated script does: on what reaches each of
    them of the first ADAPT_BATCHES training batches (strings in one batch)."""
    import keras
    import tensorflow as tf

    for name, steps in getattr(module, "ADAPT_BATCHES", {}).items():
        layer = model.get_layer(name)
        before = keras.Model(model.input, layer.input)
        inputs = [before(x, training=False) for x, _ in dataset.take(steps)]
        layer.adapt(tf.concat(inputs, axis=0) if inputs[0].dtype == tf.string else inputs)


def write_script(spec: dict, folder: Path, stem: str = "bench") -> Path:
    """Generate `<stem>.py` (and a copy of the runtime beside it) with tfgen's own build path."""
    import yaml

    from tfgen.generate.build import plan_targets, write_files

    path = folder / f"{stem}.yaml"
    path.write_text(yaml.safe_dump(spec, sort_keys=False))
    targets = plan_targets([path], folder, vendor=True)  # the script and its runtime (alternate_turns edits it)
    write_files([(target.output, target.text) for target in targets])
    return folder / f"{stem}.py"


def build_module(spec: dict, folder: Path, script: Path | None = None):
    """Generate the script (unless given) and import it."""
    import importlib.util

    script = script or write_script(spec, folder)
    module_spec = importlib.util.spec_from_file_location("bench_script", script)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


def keras_object(config, namespace):
    if isinstance(config, str):
        return getattr(namespace, config)()
    args = {k: v for k, v in config.items() if k not in ("type", "weight")}
    return getattr(namespace, config["type"])(**args)


def spec_losses(spec: dict) -> tuple[dict, dict]:
    """The spec's Keras losses by output, and their weights."""
    import keras

    items = spec["losses"].items()
    losses = {name: keras_object(config, keras.losses) for name, config in items}
    weights = {name: (config.get("weight", 1.0) if isinstance(config, dict) else 1.0) for name, config in items}
    return losses, weights


def epoch_timing(turns: Turns, epoch_seconds: list, rss: list):
    """A `fit` callback that waits for each epoch's turn, then records the epoch's seconds and
    the process's RSS after it."""
    import keras

    class Timing(keras.callbacks.Callback):
        def on_epoch_begin(self, epoch, logs=None):
            turns.take()
            self.started = time.perf_counter()

        def on_epoch_end(self, epoch, logs=None):
            epoch_seconds.append(time.perf_counter() - self.started)
            rss.append(rss_mb())

    return Timing()


def compile_fit(model, optimizer, spec: dict, system: str, jit_compile: bool = True) -> None:
    """`model.compile` for `fit_default` (Keras defaults) or `fit_tuned` (steps_per_execution, and
    XLA where the model allows it: `jit_compile=False` for a model with a string input)."""
    import keras

    losses, weights = spec_losses(spec)
    metrics = {name: [keras_object(m, keras.metrics) for m in items] for name, items in spec.get("metrics", {}).items()}
    tuned = system == "fit_tuned"
    model.compile(
        optimizer=optimizer,
        loss=losses,
        loss_weights=weights,
        metrics=metrics,
        steps_per_execution=TUNED_STEPS_PER_EXECUTION if tuned else 1,
        jit_compile=jit_compile if tuned else "auto",
    )


def run_worker(
    case_name: str, system: str, examples: int, epochs: int, data: Path | None = None, script: Path | None = None
) -> dict:
    os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")
    case = CASES[case_name]
    if case.get("published"):  # a keras.io override against its spec's script: a worker of its own
        from published_cases import run_published_worker

        return run_published_worker(sys.modules[__name__], case_name, system, examples, epochs)
    if case["precision"] == "mixed_float16":
        # Every system alike, before TensorFlow loads: on a CPU with AVX-512 FP16 (the Intel
        # machines here) oneDNN's float16 kernels ran the CIFAR step ~10x slower than without them,
        # and one system's round of `cnn_mixed` passed 30 minutes. Where the CPU has no AVX-512,
        # oneDNN leaves float16 to TensorFlow's own kernels anyway, as this does everywhere.
        os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"
    folder = script.parent if script else Path(tempfile.mkdtemp(prefix="tfgen-bench-"))
    spec = benchmark_spec(case, examples, epochs, data)
    module = build_module(spec, folder, script)
    if case.get("source") == "startup":
        return fit_from_start(module, spec, system, epochs)
    streamed = case.get("source") is not None  # through the script's tf.data pipeline

    import keras
    import tensorflow as tf

    epoch_seconds: list[float] = []
    rss: list[float] = []
    turns = Turns(os.environ.get(TURNS_ENV))

    if system in ("tfgen", *BOUNDS):
        throughput = train_script(module, case, system, folder, turns, epoch_seconds, rss)
    else:
        if case["precision"] != "float32":
            keras.mixed_precision.set_global_policy(case["precision"])
        keras.utils.set_random_seed(module.SEED)
        model = module.build_model()
        optimizer = module.build_optimizer()
        if case["precision"] == "mixed_float16":
            optimizer = keras.optimizers.LossScaleOptimizer(optimizer)
        batch = case["batch"]
        steps = examples // batch
        if case.get("source") in ("image_folder", "csv"):  # Keras's own loader over the same files
            dataset = keras_loader(case, spec, data, module)
            adapt_layers(model, dataset, module)
        elif streamed:  # the generated script's own pipeline
            dataset, _ = module.build_datasets()
        else:
            (features, targets), _ = module.load_data()
            dataset = (
                tf.data.Dataset.from_tensor_slices((features, targets))
                .shuffle(examples, seed=0)
                .batch(batch, drop_remainder=True)
                .prefetch(tf.data.AUTOTUNE)
            )
        throughput = []

        if system in ("fit_default", "fit_tuned"):
            compile_fit(model, optimizer, spec, system, jit_compile=case.get("jit_compile", True))
            model.fit(dataset, epochs=epochs, verbose=0, callbacks=[epoch_timing(turns, epoch_seconds, rss)])
        else:
            losses, weights = spec_losses(spec)
            variables = model.trainable_variables

            def loss_of(x, y, training=True):
                predictions = model(x, training=training)
                total = tf.add_n([weights[n] * losses[n](y[n], predictions[n]) for n in losses])
                return total + (tf.add_n(model.losses) if model.losses else 0.0)

            if system == "naive":

                @tf.function
                def train_step(x, y):
                    with tf.GradientTape() as tape:
                        loss = loss_of(x, y)
                        scaled = optimizer.scale_loss(loss) if hasattr(optimizer, "scale_loss") else loss
                    optimizer.apply_gradients(zip(tape.gradient(scaled, variables), variables, strict=False))
                    return loss

                for _ in range(epochs):
                    turns.take()
                    started = time.perf_counter()
                    for x, y in dataset:  # one Python iteration per batch
                        loss = train_step(x, y)
                    float(loss)
                    epoch_seconds.append(time.perf_counter() - started)
                    rss.append(rss_mb())
            else:  # xla_epoch, xla_epoch_metrics
                x_all = {k: tf.convert_to_tensor(v) for k, v in features.items()}
                y_all = {k: tf.convert_to_tensor(v) for k, v in targets.items()}
                optimizer.build(variables)
                epoch_fn = xla_epoch(model, optimizer, spec, (x_all, y_all), examples, batch, system)
                logged = []  # xla_epoch_metrics: each epoch's mean loss and accuracy, read as an epoch line would

                for epoch in range(epochs):
                    turns.take()
                    started = time.perf_counter()
                    logged.append([float(figure) for figure in epoch_fn(tf.constant(epoch))])
                    float(optimizer.iterations.numpy())
                    epoch_seconds.append(time.perf_counter() - started)
                    rss.append(rss_mb())
        throughput = [steps * batch / seconds for seconds in epoch_seconds]
    if streamed:  # batches may vary (buckets): every system's examples over its epoch's time
        throughput = [examples / seconds for seconds in epoch_seconds]

    import resource

    steady = throughput[1:] or throughput
    steady_seconds = statistics.median(epoch_seconds[1:] or epoch_seconds)
    return {
        "case": case_name,
        "system": system,
        "examples_per_second": statistics.median(steady),
        "epoch_examples_per_second": throughput,  # every epoch's, the first included
        "first_step_seconds": max(0.0, epoch_seconds[0] - steady_seconds),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "rss_growth_mb": rss[-1] - rss[min(1, len(rss) - 1)],
        "rss_after_warmup_mb": rss[min(1, len(rss) - 1)],
        "rss_growth_10_epochs_mb": rss[min(9, len(rss) - 1)] - rss[min(1, len(rss) - 1)],
        "epochs": len(epoch_seconds),
        "run_seconds": sum(epoch_seconds),  # every epoch, the first (tracing, compiling) included
    }


def train_script(module, case: dict, system: str, folder: Path, turns, epoch_seconds: list, rss: list) -> list:
    """Run the generated script's `main` (`tfgen`), or it bounded to its input or its step
    (`input_alone`, `step_alone`: see `alone`), in turns; each epoch's examples/s as it logs them."""
    append = module.rt.History.append

    def recording(history, row):  # called once per epoch, after it
        append(history, row)
        epoch_seconds.append(row["epoch_seconds"])
        rss.append(rss_mb())

    train_epoch = module.train_epoch

    def in_turn(*args):  # the script's clocks (TurnTime) leave out the wait
        turns.take()
        return train_epoch(*args)

    module.rt.History.append = recording
    module.train_epoch = in_turn
    module.time = module.rt.trainer.time = TurnTime(turns)
    if case.get("source") == "npz":
        module.rt.trainer.IN_MEMORY_BUDGET_BYTES = STREAM_BUDGET_BYTES  # read by use_data
    alone(module, system)
    try:
        history = module.main(["--output-dir", str(folder / "run"), "--fresh"])
    finally:
        module.rt.History.append = append
        module.train_epoch = train_epoch
        module.time = module.rt.trainer.time = time
    # The generated loop times its training phase itself (examples_per_second).
    return [row["examples_per_second"] for row in history]


def alone(module, system: str) -> None:
    """Bound the script to one side of its epoch, through its own loop (`StandardTrainer`):

    `input_alone`: its step only reads each batch (a checksum of every numeric tensor's first
    value into a variable, so nothing is pruned) and trains nothing: what remains is its input,
    the tf.data pipeline iterated to exhaustion or its in-memory slices. Not XLA-compiled.
    `step_alone`: its training batches already in memory: a streamed pipeline's first epoch is
    cached (filled whole, untimed, when the trainer first asks for it, as it counts its batches)
    and replayed every epoch; in-memory data already is, so there it is the loop itself."""
    import tensorflow as tf

    if system == "input_alone":
        sink = tf.Variable(0.0, trainable=False)

        def read_only_step(self, features, targets, carried):
            tensors = [t for t in tf.nest.flatten((features, targets)) if t.dtype != tf.string]
            sink.assign_add(tf.add_n([tf.cast(tf.reshape(t, [-1])[0], tf.float32) for t in tensors]))
            return carried

        module.Trainer.train_step = read_only_step
        module.Trainer.compile_step_if_long = lambda self, steps: None
    elif system == "step_alone":
        pipeline = module.train_pipeline
        replayed = {}

        def cached_pipeline(train, epoch=1):
            if "batches" not in replayed:  # first called as the trainer counts its batches
                batches = pipeline(train, 1).cache()
                batches.reduce(0, lambda count, _: count + 1)  # filled whole (a part is not kept)
                replayed["batches"] = batches
            return replayed["batches"]

        module.train_pipeline = cached_pipeline


def xla_epoch(model, optimizer, spec: dict, arrays, examples: int, batch: int, system: str):
    """A hand-written epoch: one tf.function looping over an XLA-compiled step on in-memory slices.

    `xla_epoch` returns nothing from the step; `xla_epoch_metrics` also computes what the generated loop
    logs (the loss and the hit count, as the `loss` and accuracy of its history), summed over the
    epoch as loop values: the epoch returns the mean loss and the accuracy."""
    import tensorflow as tf

    x_all, y_all = arrays
    steps = examples // batch
    with_metrics = system == "xla_epoch_metrics"
    losses, weights = spec_losses(spec)
    variables = model.trainable_variables

    @tf.function(jit_compile=True)
    def step(x, y):
        with tf.GradientTape() as tape:
            predictions = model(x, training=True)
            loss = tf.add_n([weights[n] * losses[n](y[n], predictions[n]) for n in losses])
            loss += tf.add_n(model.losses) if model.losses else 0.0
            scaled = optimizer.scale_loss(loss) if hasattr(optimizer, "scale_loss") else loss
        optimizer.apply_gradients(zip(tape.gradient(scaled, variables), variables, strict=False))
        if not with_metrics:
            return ()
        hits = [tf.equal(tf.argmax(predictions[n], -1, output_type=y[n].dtype), y[n]) for n in losses]
        return loss, tf.add_n([tf.reduce_sum(tf.cast(hit, tf.int32)) for hit in hits])

    @tf.function
    def epoch_fn(seed):
        order = tf.random.experimental.stateless_shuffle(tf.range(examples), seed=[0, seed])
        loss_sum = tf.constant(0.0)
        hits = tf.constant(0, tf.int32)
        for i in tf.range(steps):
            rows = order[i * batch : (i + 1) * batch]
            figures = step(
                {k: tf.gather(v, rows) for k, v in x_all.items()},
                {k: tf.gather(v, rows) for k, v in y_all.items()},
            )
            if with_metrics:
                loss_sum += figures[0]
                hits += figures[1]
        if not with_metrics:
            return ()
        return loss_sum / tf.cast(steps, tf.float32), tf.cast(hits, tf.float32) / float(steps * batch)

    return epoch_fn


def fit_from_start(module, spec: dict, system: str, epochs: int) -> dict:
    """`fit` on the script's model and pipelines, as a short script would: prints `EPOCH n` at each
    epoch's end (the driver times the lines from the process's start)."""
    import keras

    keras.utils.set_random_seed(module.SEED)
    train, validation = module.build_datasets()
    model = module.build_model()
    compile_fit(model, module.build_optimizer(), spec, system)

    class Marker(keras.callbacks.Callback):
        def on_epoch_end(self, epoch, logs=None):
            print(f"EPOCH {epoch + 1}", flush=True)

    model.fit(train, validation_data=validation, epochs=epochs, verbose=0, callbacks=[Marker()])
    return {}


# --- the driver ------------------------------------------------------------------------------


def prepare(case: str, examples: int, epochs: int) -> dict:
    """Files a case needs before its runs (not timed): data files, or the script run from its start."""
    folder = Path(tempfile.mkdtemp(prefix=f"tfgen-bench-{case}-"))
    source = CASES[case].get("source")
    if source in ("tfrecord", "npz", "image_folder", "csv"):
        subprocess.run(
            [sys.executable, __file__, "--write-data", case, str(folder), "--examples", str(examples)],
            check=True,
            env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
        )
        return {"data": folder}
    if source == "startup":
        return {"script": write_script(benchmark_spec(CASES[case], examples, epochs), folder)}
    return {}


def run_from_start(case: str, system: str, epochs: int, script: Path, timeout: float) -> dict:
    """Seconds from the process's start to the end of its first (and last) epoch."""
    if system == "tfgen":  # the generated script, run as a user runs it
        command = [str(script), "--output-dir", str(script.parent / "run"), "--fresh", "--epochs", str(epochs)]
        marker = "Epoch "
    else:
        command = [__file__, "--worker", case, system, "--epochs", str(epochs), "--script", str(script)]
        marker = "EPOCH "
    ends = []
    with tempfile.TemporaryFile("w+") as errors:
        started = time.perf_counter()
        process = subprocess.Popen(
            [sys.executable, *command],
            stdout=subprocess.PIPE,
            stderr=errors,
            text=True,
            cwd=script.parent,
            env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
        )
        for line in process.stdout:
            if line.startswith(marker):
                ends.append(time.perf_counter() - started)
        if process.wait(timeout=timeout) != 0 or not ends:
            errors.seek(0)
            raise RuntimeError(f"{case}/{system} failed:\n{errors.read()[-3000:]}")
    return {
        "case": case,
        "system": system,
        "first_epoch_seconds": ends[0],
        "run_seconds": ends[-1],
        "epochs": len(ends),
        "examples_per_second": None,
    }


# A result's figures that are the median over its rounds.
ROUND_MEDIANS = (
    "examples_per_second",
    "first_step_seconds",
    "peak_rss_mb",
    "rss_growth_mb",
    "rss_after_warmup_mb",
    "rss_growth_10_epochs_mb",
    "first_epoch_seconds",
    "run_seconds",
)


def medians(items: list[dict], keys: tuple[str, ...]) -> dict:
    """The first of `items`, each of `keys` it has replaced by the median over all of them."""
    merged = dict(items[0])
    for key in keys:
        if merged.get(key) is not None:
            merged[key] = statistics.median(item[key] for item in items)
    return merged


def median_start(items: list[dict]) -> dict:
    """One system's processes timed from their start, as one result: the median of each figure."""
    merged = medians(items, ("first_epoch_seconds", "run_seconds"))
    merged["starts_first_epoch_seconds"] = [item["first_epoch_seconds"] for item in items]
    return merged


def run_case(
    case: str,
    systems: list[str],
    examples: int,
    epochs: int,
    timeout: float,
    files: dict,
    starts: int = 1,
    env: dict | None = None,
) -> list[dict]:
    """Each system's result on `case`: each runs in a process of its own, all in lockstep.
    `starts`: for a case timed from process start, the processes of each system, in turns;
    `env`: more of the workers' environment."""
    if "script" in files:  # whole processes, timed from their start: one at a time, in turns
        runs = {system: [] for system in systems}
        for _ in range(starts):
            for system in systems:
                runs[system].append(run_from_start(case, system, epochs, files["script"], timeout))
        return [median_start(items) for items in runs.values()]
    with tempfile.TemporaryDirectory(prefix="tfgen-turns-") as folder, contextlib.ExitStack() as stack:
        workers = [
            start_worker(stack, Path(folder, str(index)), case, system, examples, epochs, files.get("data"), env)
            for index, system in enumerate(systems)
        ]
        return run_in_lockstep(workers, time.monotonic() + timeout)


def start_worker(
    stack: contextlib.ExitStack,
    address: Path,
    case: str,
    system: str,
    examples: int,
    epochs: int,
    data: Path | None,
    env: dict | None = None,
) -> Worker:
    """`system`'s worker process on `case`, asking its turns at `address`, closed with `stack`;
    `env`: more of its environment."""
    command = [sys.executable, __file__, "--worker", case, system, "--examples", str(examples)]
    command += ["--epochs", str(epochs), *(["--data", str(data)] if data else [])]
    # Output to files (a full pipe would block a worker while it waits for its turn), closed by `stack`.
    outputs = [stack.enter_context(tempfile.TemporaryFile("w+")) for _ in ("stdout", "stderr")]  # noqa: SIM115
    return stack.enter_context(Worker(f"{case}/{system}", command, address, *outputs, env=env))


def run_in_lockstep(workers: list[Worker], deadline: float) -> list[dict]:
    """Let the workers set up together, then give them turns, an epoch each, in order, until all
    have exited (see `Turns`); their results."""
    for worker in workers:
        worker.wait_for_ask(deadline)
    waiting = [worker for worker in workers if worker.asking]
    while waiting:
        for worker in list(waiting):
            worker.give_turn()
            worker.wait_for_ask(deadline)
            if not worker.asking:
                waiting.remove(worker)
    return [worker.result(deadline) for worker in workers]


class Worker:
    """A worker process (`command`: `--worker` by `run_case`), and the socket it asks its turns on
    (`Turns`); its standard output's last line is its result."""

    def __init__(self, name: str, command: list[str], address: Path, stdout, stderr, env: dict | None = None):
        self.name = name
        self.listener = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.listener.bind(str(address))
        self.listener.listen(1)
        self.connection = None
        self.asking = False
        self.stdout = stdout
        self.stderr = stderr
        self.process = subprocess.Popen(
            command,
            stdout=self.stdout,
            stderr=self.stderr,
            text=True,
            env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", **(env or {}), TURNS_ENV: str(address)},
        )

    def wait_for_ask(self, deadline: float) -> None:
        """Wait until the worker asks for a turn (`asking`) or exits (not `asking`)."""
        while self.connection is None:  # it connects once it has set up
            if self.process.poll() is not None:
                self.asking = False
                return
            self.check(deadline)
            self.listener.settimeout(0.5)
            try:
                self.connection, _ = self.listener.accept()
            except TimeoutError:
                continue
        self.connection.settimeout(max(0.01, deadline - time.monotonic()))
        try:
            self.asking = self.connection.recv(1) == b"?"  # b"": it exited
        except TimeoutError:
            raise RuntimeError(f"{self.name} timed out") from None
        if self.asking:  # stopped till its turn: its threads (a tf.data prefetch) run in no other's
            from tfgen.processes import wait_until_stopped

            self.process.send_signal(signal.SIGSTOP)
            wait_until_stopped(self.process.pid, timeout=10)

    def give_turn(self) -> None:
        self.process.send_signal(signal.SIGCONT)
        self.connection.sendall(b"!")

    def check(self, deadline: float) -> None:
        if time.monotonic() > deadline:
            raise RuntimeError(f"{self.name} timed out")

    def result(self, deadline: float) -> dict:
        """The worker's result line; RuntimeError with its error output if it failed."""
        code = self.process.wait(timeout=max(0.0, deadline - time.monotonic()))
        self.stdout.seek(0)
        self.stderr.seek(0)
        if code != 0:
            raise RuntimeError(f"{self.name} failed:\n{self.stderr.read()[-3000:]}")
        return json.loads(self.stdout.read().strip().splitlines()[-1])

    def __enter__(self):
        return self

    def __exit__(self, *exc_info) -> None:
        if self.process.poll() is None:  # the driver failed or timed out: stop the worker
            self.process.kill()
            self.process.wait()
        for end in (self.connection, self.listener):
            if end is not None:
                end.close()


def build_speed() -> dict:
    """`tfgen build` per spec, TensorFlow made unimportable: wall time of the command, and in-process."""
    blocker = Path(tempfile.mkdtemp(prefix="tfgen-block-"))
    (blocker / "sitecustomize.py").write_text(
        "import sys\nclass B:\n    def find_spec(self, name, path=None, target=None):\n"
        "        if name.split('.')[0] in ('tensorflow', 'keras'):\n            raise ImportError(name)\n"
        "sys.meta_path.insert(0, B())\n"
    )
    out = Path(tempfile.mkdtemp(prefix="tfgen-build-"))
    timings = {}
    for spec in sorted((ROOT / "specs").glob("*.yaml")):
        started = time.perf_counter()
        result = subprocess.run(
            [sys.executable, "-m", "tfgen", "build", str(spec.relative_to(ROOT)), "--out", str(out)],
            cwd=ROOT,
            capture_output=True,
            text=True,
            env={**os.environ, "PYTHONPATH": str(blocker)},
            check=False,
        )
        command = time.perf_counter() - started
        if result.returncode != 0:
            raise RuntimeError(result.stderr)
        timings[spec.stem] = {"command_seconds": command}
    code = (
        "import time, sys; from pathlib import Path; from tfgen.generate.build import plan_targets\n"
        "plan_targets([Path('specs/digits.yaml')], Path('/tmp'))\n"
        "for s in sys.argv[1:]:\n    t = time.perf_counter(); plan_targets([Path(s)], Path('/tmp')); print(s, time.perf_counter() - t)\n"
    )
    result = subprocess.run(
        [sys.executable, "-c", code, *[str(s.relative_to(ROOT)) for s in sorted((ROOT / "specs").glob("*.yaml"))]],
        cwd=ROOT,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(blocker)},
        check=False,
    )
    if result.returncode != 0:  # a renamed module once left every in-process figure blank
        raise RuntimeError(result.stderr)
    for line in result.stdout.splitlines():
        path, seconds = line.split()
        timings[Path(path).stem]["in_process_seconds"] = float(seconds)
    return timings


def machine() -> str:
    import multiprocessing

    cpu = "unknown CPU"
    try:
        for line in Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                cpu = line.split(":", 1)[1].strip()
                break
    except OSError:
        pass
    versions = subprocess.run(
        [sys.executable, "-c", "import tensorflow as tf, keras; print(tf.__version__, keras.__version__)"],
        capture_output=True,
        text=True,
        env={**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3"},
        check=False,
    ).stdout.split()
    return (
        f"{cpu}, {multiprocessing.cpu_count()} cores, Python {platform.python_version()}, "
        f"TensorFlow {versions[0] if versions else '?'}, Keras {versions[1] if len(versions) > 1 else '?'}"
    )


TARGETS = [
    # (description, case, system, reference system, minimum ratio; None: reported only);
    # best_fit and limit: the derived rows (`derived`)
    ("generated (defaults) >= 1.1x the best fit, every case", "*", "tfgen", "best_fit", 1.1),
    ("generated (defaults) >= 0.9x the case's limit, every case", "*", "tfgen", "limit", 0.9),
    ("generated (defaults) >= 3x default fit, MLP", "mlp", "tfgen", "fit_default", 3.0),
    # The XLA epoch computes nothing the loop logs: reported beside the target, not a target.
    ("generated (defaults) against the bare XLA epoch, MLP", "mlp", "tfgen", "xla_epoch", None),
    ("generated (defaults) against the bare XLA epoch, MLP", "mlp_short", "tfgen", "xla_epoch", None),
    ("generated (defaults) >= 0.95x the XLA epoch with metrics, MLP", "mlp", "tfgen", "xla_epoch_metrics", 0.95),
    ("generated (defaults) >= 0.95x the XLA epoch with metrics, MLP", "mlp_short", "tfgen", "xla_epoch_metrics", 0.95),
    ("generated >= 1.5x the naive loop, MLP", "mlp", "tfgen", "naive", 1.5),
    ("generated (defaults) >= 1.5x default fit, streamed MLP", "mlp_tfrecord", "tfgen", "fit_default", 1.5),
]
# (description, case, system, reference system, maximum ratio) of the seconds to the first epoch's end
FIRST_EPOCH_TARGETS = [
    ("first epoch from process start <= 1.2x default fit", "first_epoch", "tfgen", "fit_default", 1.2),
]


def evaluate(results: list[dict]) -> list[tuple[str, str, float, bool | None, list[float]]]:
    """(description, case, ratio, met, each round's ratio) per target and case measured; met is
    None for a ratio reported without a target. The ratio is of the medians over rounds; each
    round's pairs the two systems' runs of that round (epochs in turn: `run_in_lockstep`)."""
    table = {(r["case"], r["system"]): r for r in [*results, *derived(results)]}
    cases = sorted({r["case"] for r in results})
    verdicts = []
    for description, case, system, reference, minimum in TARGETS:
        for name in cases if case == "*" else [case]:
            if (name, system) in table and (name, reference) in table and table[name, system]["examples_per_second"]:
                ratio, rounds = ratios(table[name, system], table[name, reference], "examples_per_second")
                verdicts.append((description, name, ratio, None if minimum is None else ratio >= minimum, rounds))
    for description, name, system, reference, maximum in FIRST_EPOCH_TARGETS:
        if (name, system) in table and (name, reference) in table:
            ratio, rounds = ratios(table[name, system], table[name, reference], "first_epoch_seconds")
            verdicts.append((description, name, ratio, ratio <= maximum, rounds))
    for r in results:
        if r["system"] == "tfgen" and r["epochs"] >= 10 and "rss_growth_mb" in r:
            growth = r.get("rss_growth_10_epochs_mb", r["rss_growth_mb"]) / r["rss_after_warmup_mb"]
            verdicts.append(("RSS growth < 2% over 10 epochs", r["case"], growth, growth < 0.02, []))
    return verdicts


def derived(results: list[dict]) -> list[dict]:
    """Each case's peer and limit, as result rows of their own (for `ratios`):

    `best_fit`: the faster (by the median over rounds) of default and tuned fit measured, its
    `peer` naming which; `limit`: the slower of `input_alone` and `step_alone` (both needed),
    round by round, its `bound` "input" or "compute" (by the medians). A case without them has
    no such row (the report shows "-")."""
    table = {(r["case"], r["system"]): r for r in results if r.get("examples_per_second")}
    rows = []
    for case in dict.fromkeys(r["case"] for r in results):
        fits = [table[case, system] for system in ("fit_default", "fit_tuned") if (case, system) in table]
        if fits:
            best = max(fits, key=lambda r: r["examples_per_second"])
            rows.append({**best, "system": "best_fit", "peer": best["system"]})
        bounds = [table[case, system] for system in BOUNDS if (case, system) in table]
        if len(bounds) < len(BOUNDS):
            continue
        slower = min(bounds, key=lambda r: r["examples_per_second"])
        limit = {
            "case": case,
            "system": "limit",
            "examples_per_second": slower["examples_per_second"],
            "bound": "input" if slower["system"] == "input_alone" else "compute",
        }
        rounds = [r.get("rounds_examples_per_second", []) for r in bounds]
        if rounds[0] and len(rounds[0]) == len(rounds[1]):
            limit["rounds_examples_per_second"] = [min(pair) for pair in zip(*rounds, strict=True)]
        rows.append(limit)
    return rows


def peer_lines(results: list[dict]) -> list[str]:
    """The report's table of each case's generated loop against its best fit and its limit."""
    table = {(r["case"], r["system"]): r for r in [*results, *derived(results)]}

    def speed(case, system):
        row = table.get((case, system))
        return f"{row['examples_per_second']:,.0f}" if row and row.get("examples_per_second") else "-"

    def against(case, reference):
        if not (table.get((case, "tfgen"), {}).get("examples_per_second") and (case, reference) in table):
            return "-", "-"
        ratio, rounds = ratios(table[case, "tfgen"], table[case, reference], "examples_per_second")
        return f"{ratio:.2f}x", ", ".join(f"{each:.2f}x" for each in rounds) or "-"

    lines = [
        "| case | generated | default fit | tuned fit | best fit | vs best fit | each round | input alone "
        + "| step alone | limit (bound) | vs limit | each round |",
        "|---|---:|---:|---:|---|---:|---|---:|---:|---|---:|---|",
    ]
    for case in dict.fromkeys(r["case"] for r in results):
        if not table.get((case, "tfgen"), {}).get("examples_per_second"):
            continue  # first_epoch: timed from process start, in its own table
        best = table.get((case, "best_fit"))
        peer = best["peer"].replace("fit_", "") if best else "-"
        limit = table.get((case, "limit"))
        bound = f"{speed(case, 'limit')} ({limit['bound']})" if limit else "-"
        cells = [case, speed(case, "tfgen"), speed(case, "fit_default"), speed(case, "fit_tuned"), peer]
        cells += [*against(case, "best_fit"), speed(case, "input_alone"), speed(case, "step_alone"), bound]
        cells += against(case, "limit")
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def growth_lines(points: list[dict]) -> list[str]:
    """The report's table: each point's epoch time, and its growth from 1x, loop and best fit."""
    first = {point["grows"]: point for point in points if point["factor"] == 1}
    first["model"] = first.get("model", first["data"])  # the model's 1x is the data's
    lines = [
        "| grows | factor | examples | parameters | generated (s/epoch) | its growth "
        + "| best fit (s/epoch) | its growth |",
        "|---|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for point in points:
        start = first[point["grows"]]
        ours, peer = point["seconds"]["tfgen"], point["seconds"][point["best_fit"]]
        theirs = start["seconds"][start["best_fit"]]
        cells = [point["grows"], f"{point['factor']}x", f"{point['examples']:,}", f"{point['parameters']:,}"]
        cells += [f"{ours:.2f}", f"{ours / start['seconds']['tfgen']:.1f}x"]
        cells += [f"{peer:.2f} ({point['best_fit'].replace('fit_', '')})", f"{peer / theirs:.1f}x"]
        lines.append("| " + " | ".join(cells) + " |")
    return lines


def ratios(result: dict, reference: dict, key: str) -> tuple[float, list[float]]:
    """`result[key] / reference[key]`, and the same ratio round by round (where both kept them)."""
    ratio = result[key] / reference[key]
    ours, theirs = result.get(f"rounds_{key}", []), reference.get(f"rounds_{key}", [])
    if len(ours) < 2 or len(ours) != len(theirs):
        return ratio, []
    return ratio, [a / b for a, b in zip(ours, theirs, strict=True)]


def write_report(
    results: list[dict],
    verdicts,
    builds: dict,
    mode: str,
    seconds: float,
    command: str,
    docs: Path,
    kept: list[str] | None = None,
    growth: dict | None = None,
) -> None:
    measured = f"Measured by `{command}` ({mode} mode, {seconds / 60:.1f} minutes) on {machine()}."
    if kept:  # --merge: the other cases' rows are the earlier run's
        measured += f" The rows of {', '.join(f'`{case}`' for case in kept)} are kept from the run before it."
    lines = [
        "# Benchmarks",
        "",
        measured,
        "Each (case, system) runs in its own process; a case's systems run in lockstep, taking turns an",
        "epoch each (the second round in the reverse order), and the figures are medians over rounds of",
        "the per-epoch median after the first (warm-up) epoch.",
        "This machine is shared: compare ratios within one run, not absolute numbers across runs.",
        "",
        "## Against the best fit and the case's limit",
        "",
        *peer_lines(results),
        "",
        "examples/s of each. Best fit: the faster of default and tuned `fit` in this run (the peer of",
        "every headline ratio). Input alone: the generated script with a step that only reads each",
        "batch (its own pipeline, or in-memory slices, nothing trained); step alone: the script on",
        "batches already in memory (a streamed pipeline's first epoch cached and replayed). The limit",
        "is the slower of the two, and names it: `input` or `compute`. Targets: >= 1.1x the best fit,",
        ">= 0.9x the limit; each round's ratio beside the ratio of the medians. A dash: not measured",
        "for that case.",
        "",
        "## Training throughput",
        "",
        "| case | system | examples/s | first step (s) | all epochs (s) | peak RSS (MB) | RSS growth (MB) |",
        "|---|---|---:|---:|---:|---:|---:|",
    ]
    throughput = [r for r in results if r.get("examples_per_second")]
    for r in throughput:
        total = f"{r['run_seconds']:.2f}" if r.get("run_seconds") is not None else "-"
        lines.append(
            f"| {r['case']} | {r['system']} | {r['examples_per_second']:,.0f} | {r['first_step_seconds']:.2f} | "
            f"{total} | {r['peak_rss_mb']:.0f} | {r['rss_growth_mb']:+.1f} |"
        )
    lines += [
        "",
        "examples/s and first step: after the first epoch (tracing, XLA compiles); all epochs: the sum",
        "of every epoch's time, the first included. Streamed cases (`mlp_tfrecord`, `mlp_npz_stream`,",
        "`sequences`): every system trains on the script's own `build_datasets()` pipeline. File cases",
        "(`image_folder`, `csv`): `fit` reads the same files with Keras's own loader",
        "(`image_dataset_from_directory`, `make_csv_dataset`), the generated loop with its `image_folder`",
        "or `csv` source; tuned `fit` has no XLA on `csv` (a string input). In both, examples/s is the",
        "examples over the whole epoch's time.",
        "",
    ]
    startup = [r for r in results if r.get("first_epoch_seconds") is not None]
    if startup:
        lines += [
            "## From process start (`first_epoch`: specs/digits.yaml as it is)",
            "",
            "| system | to the first epoch's end (s) | to the last epoch's end (s) | epochs |",
            "|---|---:|---:|---:|",
        ]
        lines += [
            f"| {r['system']} | {r['first_epoch_seconds']:.2f} | {r['run_seconds']:.2f} | {r['epochs']} |"
            for r in startup
        ]
        lines += [
            "",
            "The generated script runs as a user runs it (checkpoint every epoch, validation, early",
            "stopping); `fit` runs the same model on the script's pipelines with `validation_data`.",
            "",
        ]
    if growth:
        lines += [
            "## Scaling with the data and the model (`mlp`)",
            "",
            *growth_lines(growth["points"]),
            "",
            f"Measured by `{growth['command']}`: the `mlp` case's generated loop and default and tuned",
            "`fit` in lockstep at each point, seconds per epoch (median after the first of",
            f"{growth['epochs']} epochs); the data grown at the 1x model, the model (its Dense layers",
            "widened) at the 1x data; its growth: against the 1x point of the same system (best fit:",
            "the faster fit at each point).",
            "",
        ]
    lines += [
        "![examples per second](benchmarks.png)",
        "",
        "## Targets",
        "",
        "| target | case | measured | each round | met |",
        "|---|---|---:|---|---|",
    ]
    for description, case, value, met, rounds in verdicts:
        shown = f"{value:.1%}" if description.startswith("RSS") else f"{value:.2f}x"
        each = ", ".join(f"{ratio:.2f}x" for ratio in rounds)
        verdict = "report" if met is None else "yes" if met else "**missed**"
        lines.append(f"| {description} | {case} | {shown} | {each} | {verdict} |")
    lines += [
        "",
        "## Build speed (`tfgen build`, TensorFlow made unimportable)",
        "",
        "| spec | command wall time (s) | in-process (s) |",
        "|---|---:|---:|",
    ]
    for name, timing in builds.items():
        lines.append(
            f"| {name} | {timing['command_seconds']:.2f} | {timing.get('in_process_seconds', float('nan')):.3f} |"
        )
    lines += [
        "",
        "The command's time includes starting Python; in-process is `plan_targets` (validate, render, black)",
        "for one spec after the first.",
        "",
    ]
    notes = docs / "benchmarks-notes.md"
    if notes.exists():
        lines += [notes.read_text()]
    (docs / "benchmarks.md").write_text("\n".join(lines) + "\n")
    try:
        import matplotlib

        matplotlib.use("Agg")
        import matplotlib.pyplot as plt

        cases = list(dict.fromkeys(r["case"] for r in results))
        columns = min(len(cases), 5)
        rows_of_plots = -(-len(cases) // columns)
        fig, axes = plt.subplots(rows_of_plots, columns, figsize=(3.6 * columns, 3.4 * rows_of_plots), squeeze=False)
        palette = ["#999", "#777", "#c66", "#36c", "#6a6", "#aa6", "#333", "#555"]
        colors = dict(zip(ALL_SYSTEMS, palette, strict=False))
        for ax in axes.flat[len(cases) :]:
            ax.axis("off")
        for ax, case in zip(axes.flat, cases, strict=False):
            rows = [r for r in results if r["case"] == case]
            seconds = rows[0].get("first_epoch_seconds") is not None
            ax.bar(
                [r["system"] for r in rows],
                [r["first_epoch_seconds"] if seconds else r["examples_per_second"] for r in rows],
                color=[colors.get(r["system"], "#888") for r in rows],
            )
            ax.set_title(case)
            ax.set_ylabel("s to the first epoch's end (lower is better)" if seconds else "examples / s")
            ax.tick_params(axis="x", rotation=45)
        fig.tight_layout()
        fig.savefig(docs / "benchmarks.png", dpi=100)
    except ImportError:
        print("matplotlib is not installed: no chart (pip install -e '.[bench]')", file=sys.stderr)


def measure_growth(path: Path, measure: bool) -> dict | None:
    """`scaling.py --growth` into `path` if `measure`; the growth results at `path` if any."""
    if measure:
        script = Path(__file__).with_name("scaling.py")
        subprocess.run([sys.executable, str(script), "--growth", "--out", str(path)], check=True)
    return json.loads(path.read_text()) if path.exists() else None


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true")
    parser.add_argument("--smoke", action="store_true")
    parser.add_argument("--results", type=Path, default=ROOT / "benchmarks" / "results" / "latest.json")
    parser.add_argument("--docs", type=Path, default=ROOT / "docs")
    parser.add_argument("--cases", nargs="+", choices=list(CASES), help="run only these cases")
    parser.add_argument("--merge", action="store_true", help="replace these cases in the existing results")
    parser.add_argument("--rounds", type=int, help="rounds (default: 2 full, 1 quick, 1 smoke)")
    parser.add_argument("--growth", action="store_true", help="also measure scaling.py --growth (the full run does)")
    parser.add_argument("--worker", nargs=2, metavar=("CASE", "SYSTEM"))
    parser.add_argument("--examples", type=int)
    parser.add_argument("--epochs", type=int)
    parser.add_argument("--data", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--script", type=Path, help=argparse.SUPPRESS)
    parser.add_argument("--write-data", nargs=2, help=argparse.SUPPRESS)
    args = parser.parse_args(argv)
    if args.write_data:
        write_data(CASES[args.write_data[0]], args.examples, Path(args.write_data[1]))
        return 0
    if args.worker:
        print(json.dumps(run_worker(*args.worker, args.examples, args.epochs, args.data, args.script)))
        return 0
    mode = "smoke" if args.smoke else "quick" if args.quick else "full"
    settings = MODES[mode]
    started = time.perf_counter()
    runs: dict[tuple[str, str], list[dict]] = {}
    cases = args.cases or settings["cases"]
    sizes = {
        case: (
            max(CASES[case]["batch"] * 8, int(CASES[case]["examples"] * settings["scale"])),
            settings["epochs"] or CASES[case]["epochs"],
        )
        for case in cases
    }
    files = {case: prepare(case, *sizes[case]) for case in cases}
    for round_index in range(args.rounds or settings["rounds"]):
        for case in cases:
            systems = CASES[case].get("systems", SYSTEMS)
            if round_index % 2:  # each system's turn comes after another's in the other round
                systems = systems[::-1]
            # A case's round, all its systems: cnn_mixed's passed 30 minutes on a slow day.
            timed = run_case(case, systems, *sizes[case], timeout=3600, files=files[case], starts=settings["starts"])
            for result in timed:
                system = result["system"]
                runs.setdefault((case, system), []).append(result)
                shown = (
                    f"{result['first_epoch_seconds']:10.2f} s to the first epoch's end"
                    if "first_epoch_seconds" in result
                    else f"{result['examples_per_second']:10,.0f} examples/s"
                )
                print(f"round {round_index + 1} {case:14s} {system:12s} {shown}", flush=True)
    for prepared in files.values():  # the data files and scripts written for the runs
        for path in prepared.values():
            shutil.rmtree(path if path.is_dir() else path.parent, ignore_errors=True)
    results = []
    for items in runs.values():
        merged = medians(items, ROUND_MEDIANS)
        for key in ("examples_per_second", "first_epoch_seconds"):  # kept for each round's ratio
            if merged.get(key) is not None:
                merged[f"rounds_{key}"] = [item[key] for item in items]
        for key in ("epoch_examples_per_second", "starts_first_epoch_seconds"):  # each round's list
            if key in merged:
                merged[key] = [item[key] for item in items]
        merged["rounds"] = len(items)
        results.append(merged)
    kept: list[dict] = []
    if args.merge and args.results.exists():
        fresh = {r["case"] for r in results}
        kept = [r for r in json.loads(args.results.read_text()) if r["case"] not in fresh]
    results = sorted(kept + results, key=lambda r: (list(CASES).index(r["case"]), ALL_SYSTEMS.index(r["system"])))
    args.results.parent.mkdir(parents=True, exist_ok=True)
    args.results.write_text(json.dumps(results, indent=1) + "\n")
    verdicts = evaluate(results)
    builds = build_speed()
    command = "python benchmarks/run.py" + (" --quick" if args.quick else " --smoke" if args.smoke else "")
    if args.cases:
        command += " --cases " + " ".join(args.cases) + (" --merge" if args.merge else "")
    if args.rounds:
        command += f" --rounds {args.rounds}"
    if args.growth:
        command += " --growth"
    args.docs.mkdir(parents=True, exist_ok=True)
    kept_cases = list(dict.fromkeys(r["case"] for r in kept))
    growth = measure_growth(args.results.parent / "growth.json", mode == "full" or args.growth)
    elapsed = time.perf_counter() - started
    write_report(results, verdicts, builds, mode, elapsed, command, args.docs, kept_cases, growth)
    for description, case, value, met, rounds in verdicts:
        verdict = "report" if met is None else "met   " if met else "MISSED"
        each = f" (rounds: {', '.join(f'{ratio:.2f}' for ratio in rounds)})" if rounds else ""
        print(f"{verdict} {description} [{case}]: {value:.2f}{each}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
