"""benchmarks/run.py's `gan` and `distillation` cases: the script tfgen generates from a
benchmarks/published/ spec against the keras.io `train_step` override it restates
(benchmarks/published/*.py) under `fit`, on the same digits, batch and networks.

`fit_tuned` compiles the published model as run.py's tuned `fit` is compiled (steps_per_execution
TUNED_STEPS_PER_EXECUTION, XLA); `fit_default` leaves the published compile as it is. Both sides
take their epochs in lockstep turns (run.py's Turns) and report what run_worker reports.
"""

from __future__ import annotations

import statistics
import sys
import time
from pathlib import Path

PUBLISHED = Path(__file__).resolve().parent / "published"


def case_spec(case: dict, examples: int, epochs: int, folder: Path) -> dict:
    """The case's published spec on `examples` digits, for `epochs`, one device, rare checkpoints;
    a distillation's teacher is an untrained copy of the published one (its speed is the same)."""
    import yaml

    spec = yaml.safe_load((PUBLISHED / Path(case["spec"]).name).read_text())
    spec["name"] = "bench"
    spec["data"]["train"]["source"]["kwargs"] = {"examples": examples}
    spec["train"] = {"epochs": epochs}
    spec["checkpoint"] = {"every_epochs": 1000, "keep": 1}
    if spec["algorithm"]["type"] == "distillation":
        spec["algorithm"]["teacher"] = str(folder / "teacher.keras")
    return spec


def published_model(case: dict, module, folder: Path):
    """The published program's model (the keras.io override), compiled as published, with its
    data as the published program batches it (shuffled, the last batch dropped as tfgen does)."""
    import keras
    import tensorflow as tf

    (features, targets), _ = module.load_data()
    images, labels = features["pixels"], targets["digit"]
    if case["published"] == "dcgan":
        import dcgan_overriding_train_step as published

        model = published.compiled_gan(published.build_discriminator(), published.build_generator())
        data = images
    else:
        import knowledge_distillation as published

        teacher = keras.saving.load_model(folder / "teacher.keras", compile=False)
        model = published.compiled_distiller(published.build_student(), teacher)
        data = (images, labels)
    dataset = tf.data.Dataset.from_tensor_slices(data).shuffle(len(images), seed=0)
    return model, dataset.batch(case["batch"], drop_remainder=True).prefetch(tf.data.AUTOTUNE)


def run_published_worker(bench, case_name: str, system: str, examples: int, epochs: int) -> dict:
    """One system of a published case, in this process (run.py's `--worker`): its result."""
    import keras

    sys.path.insert(0, str(PUBLISHED))
    case = bench.CASES[case_name]
    folder = Path(bench.tempfile.mkdtemp(prefix="tfgen-bench-"))
    keras.utils.set_random_seed(1)
    if case["published"] == "knowledge_distillation":
        import knowledge_distillation

        knowledge_distillation.build_teacher().save(folder / "teacher.keras")
    module = bench.build_module(case_spec(case, examples, epochs, folder), folder)
    turns = bench.Turns(bench.os.environ.get(bench.TURNS_ENV))
    if system == "tfgen":
        epoch_seconds, rss, throughput = run_script(bench, module, folder, turns)
    else:
        epoch_seconds, rss = run_fit(bench, case, system, module, folder, turns, epochs)
        throughput = [examples // case["batch"] * case["batch"] / seconds for seconds in epoch_seconds]
    return result(bench, case_name, system, epoch_seconds, rss, throughput)


def run_script(bench, module, folder: Path, turns) -> tuple[list, list, list]:
    """The generated script's main, an epoch a turn; its clocks leave the waits out."""
    epoch_seconds, rss = [], []
    append, train_epoch = module.rt.History.append, module.train_epoch

    def recording(history, row):
        append(history, row)
        epoch_seconds.append(row["epoch_seconds"])
        rss.append(bench.rss_mb())

    def in_turn(*args):
        turns.take()
        return train_epoch(*args)

    module.rt.History.append, module.train_epoch = recording, in_turn
    module.time = module.rt.trainer.time = bench.TurnTime(turns)
    try:
        history = module.main(["--output-dir", str(folder / "run"), "--fresh"])
    finally:
        module.rt.History.append, module.train_epoch = append, train_epoch
        module.time = module.rt.trainer.time = time
    return epoch_seconds, rss, [row["examples_per_second"] for row in history]


def run_fit(bench, case: dict, system: str, module, folder: Path, turns, epochs: int) -> tuple[list, list]:
    """The published override under `fit`: `fit_tuned` with run.py's tuned settings."""
    model, dataset = published_model(case, module, folder)
    if system == "fit_tuned":  # what run.py's compile_fit gives tuned `fit` (the published compile took none)
        model.steps_per_execution = bench.TUNED_STEPS_PER_EXECUTION
        model.jit_compile = case.get("jit_compile", True)
    epoch_seconds, rss = [], []
    model.fit(dataset, epochs=epochs, verbose=0, callbacks=[bench.epoch_timing(turns, epoch_seconds, rss)])
    return epoch_seconds, rss


def result(bench, case_name: str, system: str, epoch_seconds: list, rss: list, throughput: list) -> dict:
    """The figures run_worker reports, from each epoch's seconds, RSS and examples per second."""
    import resource

    steady_seconds = statistics.median(epoch_seconds[1:] or epoch_seconds)
    after_warmup = rss[min(1, len(rss) - 1)]
    return {
        "case": case_name,
        "system": system,
        "examples_per_second": statistics.median(throughput[1:] or throughput),
        "epoch_examples_per_second": throughput,
        "first_step_seconds": max(0.0, epoch_seconds[0] - steady_seconds),
        "peak_rss_mb": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
        "rss_growth_mb": rss[-1] - after_warmup,
        "rss_after_warmup_mb": after_warmup,
        "rss_growth_10_epochs_mb": rss[min(9, len(rss) - 1)] - after_warmup,
        "epochs": len(epoch_seconds),
        "run_seconds": sum(epoch_seconds),
    }
