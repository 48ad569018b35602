"""Side by side with keras.io: each published `train_step` override (restated in
benchmarks/published/, on the 8x8 digits) against the script tfgen generates from the spec beside
it, per epoch. Prints a table; exits 1 when a comparison fails its criterion.

    python benchmarks/parity.py                      # every comparison
    python benchmarks/parity.py knowledge_distillation --epochs 2 --steps 8
    python benchmarks/parity.py dcgan --float64      # both DCGAN programs in float64 (see in_float64)
    python benchmarks/parity.py dcgan --tfgen-order  # the published DCGAN's losses in tfgen's order
    python benchmarks/parity.py wgan_gp_exact        # the WGAN-GP steps exactly (their dropout off)
    python benchmarks/parity.py wgan_gp_exact --dropout  # the same, dropout on: only the masks differ
    python benchmarks/parity.py wgan_gp_exact --same-masks  # dropout on, the same masks in both
    python benchmarks/parity.py wgan_gp_exact --float64  # the same, both in float64

Exact comparisons (same initial weights, batches and random numbers; oneDNN off, no XLA): the
per-epoch losses within 1e-5 (relative). Where the random numbers cannot be the same, the published
program's spread over 3 seeds: the mean of tfgen's figures over the same 3 seeds within the
published range (each seed's figure is shown; docs/algorithms.md, "Side by side with keras.io").
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import subprocess
import sys
import tempfile
from pathlib import Path

os.environ["TF_ENABLE_ONEDNN_OPTS"] = "0"  # before TensorFlow loads: the same kernels on both sides
os.environ.setdefault("TF_CPP_MIN_LOG_LEVEL", "3")

ROOT = Path(__file__).resolve().parent.parent
PUBLISHED = ROOT / "benchmarks" / "published"
sys.path.insert(0, str(PUBLISHED))
EXACT_RTOL = 1e-5


def build_script(spec: Path, folder: Path, *overrides: str):
    """`tfgen build spec --set ...` into `folder`; the script imported as a module."""
    from tfgen.cli import main

    sets = [f"--set={override}" for override in overrides]
    if main(["build", str(spec), "--out", str(folder), *sets]) != 0:
        raise SystemExit(f"tfgen build {spec} failed")
    path = folder / f"{spec.stem}.py"
    module_spec = importlib.util.spec_from_file_location(f"parity_{spec.stem}", path)
    module = importlib.util.module_from_spec(module_spec)
    module_spec.loader.exec_module(module)
    return module


def run_script(module, epochs: int, steps: int | None, *builders: str, start: dict | None = None) -> tuple[list, dict]:
    """Train the generated script in this process: its history rows, and the weights each of its
    `builders` (default: build_model) gave its network before training, by builder (`start`'s,
    by builder, when given)."""
    initial = {}

    def recording(name, build):
        def built(*args):
            model = build(*args)
            if start:
                model.set_weights(start[name])
            initial[name] = model.get_weights()
            return model

        return built

    for name in builders or ["build_model"]:
        setattr(module, name, recording(name, getattr(module, name)))
    argv = ["--output-dir", "run", "--fresh", "--epochs", str(epochs)]
    rows = module.main(argv + (["--steps-per-epoch", str(steps)] if steps else []))
    return rows, initial


def unshuffled(module, batch: int, steps: int | None, with_labels: bool = True):
    """The script's data as `fit` reads it: in order, whole batches (as the script's unshuffled
    pipeline gives them), `steps` of them."""
    import tensorflow as tf

    (features, targets), _ = module.load_data()
    data = (features["pixels"], targets["digit"]) if with_labels else features["pixels"]
    dataset = tf.data.Dataset.from_tensor_slices(data).batch(batch, drop_remainder=True)
    return dataset.take(steps) if steps else dataset


def knowledge_distillation(epochs: int, steps: int | None, teacher_epochs: int = 5, seed: int = 1) -> list[dict]:
    """Exact: the published Distiller and the generated distillation step, from the same student
    weights and the same teacher file, on the same unshuffled batches."""
    import keras
    import knowledge_distillation as published

    keras.utils.set_random_seed(seed)
    x, y = published.digits()
    published.train_teacher(published.build_teacher(), x, y, teacher_epochs).save("teacher.keras")
    module = build_script(
        PUBLISHED / "knowledge_distillation.yaml", Path("generated"), "data.train.shuffle=null", f"seed={seed}"
    )
    rows, initial = run_script(module, epochs, steps)
    student = published.build_student()
    student.set_weights(initial["build_model"])
    teacher = keras.saving.load_model("teacher.keras", compile=False)
    means = published.EpochMeans(["student_loss", "distillation_loss"])
    distiller = published.compiled_distiller(student, teacher)
    distiller.fit(unshuffled(module, 32, steps), epochs=epochs, verbose=0, callbacks=[means])
    return [
        {
            "comparison": "knowledge_distillation",
            "mode": "exact",
            "epoch": row["epoch"],
            "figure": key,
            "tfgen": row[key],
            "published": theirs[key],
        }
        for row, theirs in zip(rows, means.epochs, strict=True)
        for key in ("student_loss", "distillation_loss")
    ]


def same_noise_gan(published, module):
    """The published GAN drawing tfgen's numbers: each step's latents and label noise are the
    generated script's `draw`s of the same step (the steps run: the generator's updates)."""
    import tensorflow as tf

    class SameNoise(published.GAN):
        def train_step(self, real_images):
            self.latents = iter([0, 2 * module.DISCRIMINATOR_STEPS])  # tfgen's draw numbers, in order
            return super().train_step(real_images)

        def latent(self, batch_size):
            step = self.g_optimizer.iterations
            return module.draw(tf.random.stateless_normal, module.NOISE_SHAPE, step, next(self.latents))

        def label_noise(self, shape):  # fakes first, then the real examples, as published
            step = self.g_optimizer.iterations
            fake = module.draw(tf.random.stateless_uniform, [], step, -3)  # tfgen: fake target -0.05 u
            real = module.draw(tf.random.stateless_uniform, [], step, -2)  # tfgen: real target 1 - 0.05 u
            return tf.reshape(tf.concat([fake, real], axis=0), shape)

    return SameNoise


def tfgen_order_gan(published, module):
    """The published GAN computing its losses in tfgen's float32 order (the generated script's
    `discriminator_losses` and `generator_losses` of the same draws, the real examples and the
    fakes scored apart, each mean over the batch by `compute_average_loss`), its discriminator's
    scores negated as tfgen's are; networks, optimizers and `fit` the published ones."""
    import tensorflow as tf

    def scores(model, examples):
        return -tf.reshape(model(examples), [-1])  # tfgen's: the last layer negated

    def average(per_example):
        return tf.nn.compute_average_loss(per_example, global_batch_size=module.GLOBAL_BATCH_SIZE)

    class TfgenOrder(published.GAN):
        def train_step(self, real_images):
            step = self.g_optimizer.iterations
            fakes = self.generator(module.draw(tf.random.stateless_normal, module.NOISE_SHAPE, step, 0))
            real_targets = 1.0 - module.LABEL_NOISE * module.draw(tf.random.stateless_uniform, [], step, -2)
            fake_targets = -module.LABEL_NOISE * module.draw(tf.random.stateless_uniform, [], step, -3)
            with tf.GradientTape() as tape:
                real, fake = scores(self.discriminator, real_images), scores(self.discriminator, fakes)
                d_loss = average(module.discriminator_losses(real, fake, real_targets, fake_targets))
            variables = self.discriminator.trainable_weights
            self.d_optimizer.apply_gradients(zip(tape.gradient(d_loss, variables), variables, strict=True))
            noise = module.draw(tf.random.stateless_normal, module.NOISE_SHAPE, step, 2 * module.DISCRIMINATOR_STEPS)
            with tf.GradientTape() as tape:
                g_loss = average(module.generator_losses(scores(self.discriminator, self.generator(noise))))
            variables = self.generator.trainable_weights
            self.g_optimizer.apply_gradients(zip(tape.gradient(g_loss, variables), variables, strict=True))
            return {"d_loss": d_loss, "g_loss": g_loss}

    return TfgenOrder


def dcgan(
    epochs: int, steps: int | None, seed: int = 1, float64: bool = False, tfgen_order: bool = False
) -> list[dict]:
    """Exact: the published step and the generated one from the same weights (tfgen's
    discriminator is the published one with its last layer negated: it scores real examples
    high, the published one fakes), the same unshuffled batches, latents and label noise.
    `float64`: both in float64 (see in_float64), from the float32 comparison's initial weights.
    `tfgen_order`: the published step's losses computed in tfgen's order (tfgen_order_gan)."""
    import dcgan_overriding_train_step as published

    overrides = ["data.train.shuffle=null", f"seed={seed}"]
    if float64:
        overrides.append("networks.discriminator.inputs.pixels.dtype=float64")
    module = build_script(PUBLISHED / "dcgan.yaml", Path("generated"), *overrides)
    builders = ("build_generator", "build_discriminator")
    start = None
    if float64:
        start = float32_start(module, seed, builders)
        in_float64(module)
    rows, initial = run_script(module, epochs, steps, *builders, start=start)
    generator, discriminator = published.build_generator(), published.build_discriminator()
    generator.set_weights(initial["build_generator"])
    *layers, kernel, bias = initial["build_discriminator"]
    discriminator.set_weights([*layers, -kernel, -bias])
    means = published.EpochMeans(["d_loss", "g_loss"])
    gan_class = (tfgen_order_gan if tfgen_order else same_noise_gan)(published, module)
    gan = published.compiled_gan(discriminator, generator, gan_class)
    gan.fit(unshuffled(module, 64, steps, with_labels=False), epochs=epochs, verbose=0, callbacks=[means])
    rows = exact_rows("dcgan", rows, means.epochs, ("d_loss", "g_loss"))
    mode = ", ".join(["exact", *(["float64"] if float64 else []), *(["tfgen's order"] if tfgen_order else [])])
    return [{**row, "mode": mode} for row in rows]


def float32_start(module, seed: int, builders: tuple[str, ...]) -> dict:
    """The weights the script's `builders` give in float32 under its seed (its main sets the seed,
    then builds them in this order): the float32 comparison's initial weights."""
    import keras

    keras.utils.set_random_seed(seed)
    return {name: getattr(module, name)().get_weights() for name in builders}


def in_float64(module) -> None:
    """Both programs (the DCGAN's or the WGAN-GP's) in float64, in this process: Keras's floatx and dtype policy (every
    layer, variable, optimizer slot and metric; the published labels), the real examples float64
    (the spec's `--set`), the generated script's draws (float32: tf.random's default) cast to
    float64, the same numbers, so that its label noise is computed in float64 too; and two float32
    values of tfgen_runtime met at their edge: the regularization sum (0.0 here) cast to float64,
    the losses kept for a non-finite step cast to float32. The generated script's text is not
    edited."""
    import keras
    import tensorflow as tf

    keras.config.set_floatx("float64")
    keras.config.set_dtype_policy("float64")  # the policy in use: set from floatx when first read
    draw = module.draw

    def drawn_in_float64(*args):
        return tf.cast(draw(*args), tf.float64)

    module.draw = drawn_in_float64
    regularization_loss = module.rt.regularization_loss  # float32 (0.0 here: no regularizers)
    module.rt.regularization_loss = lambda model: tf.cast(regularization_loss(model), tf.float64)
    record = module.rt.RunState.record  # keeps a non-finite step's losses in float32

    def recorded_in_float32(state, carried, loss, losses):
        losses = {name: tf.cast(values, tf.float32) for name, values in losses.items()}
        return record(state, carried, tf.cast(loss, tf.float32), losses)

    module.rt.RunState.record = recorded_in_float32


def same_views_model(published, module, train):
    """The published contrastive model given tfgen's views: each step's two views are the
    generated script's views of the same batch (`view_pipeline`: keyed by seed, epoch and
    batch), the batch split as published into its unlabeled and labeled parts."""
    unlabeled, _ = published.batch_sizes(len(train[1]["digit"]) - published.LABELED, published.LABELED)

    class SameViews(published.ContrastiveModel):
        def train_step(self, data):
            (views, _), (features, targets) = data
            self.views = (views["first"]["pixels"], views["second"]["pixels"])
            images, labels = features["pixels"], targets["digit"]
            split = ((images[:unlabeled], labels[:unlabeled]), (images[unlabeled:], labels[unlabeled:]))
            return super().train_step(split)

        def contrastive_views(self, images):
            return self.views

    def epoch_data(epoch: int, steps: int | None):
        import tensorflow as tf

        data = tf.data.Dataset.zip(module.view_pipeline(train, epoch), module.train_pipeline(train, epoch))
        return data.take(steps) if steps else data

    return published.compiled_model(SameViews), epoch_data


def semisupervised_simclr(epochs: int, steps: int | None, seed: int = 1) -> list[dict]:
    """Exact: the published contrastive step and the generated one (`negatives: other_view`)
    from the same encoder and projection weights, on the same unshuffled batches and the same
    views (tfgen's: the published color affine is not among them)."""
    import semisupervised_simclr as published

    spec = PUBLISHED / "semisupervised_simclr.yaml"
    module = build_script(spec, Path("generated"), "data.train.shuffle=null", f"seed={seed}")
    rows, initial = run_script(module, epochs, steps, "build_model", "build_projection")
    train, _ = module.load_data()
    model, epoch_data = same_views_model(published, module, train)
    model.encoder.set_weights(initial["build_model"])
    model.projection_head.set_weights(initial["build_projection"])
    theirs = []
    for epoch in range(1, epochs + 1):
        logs = model.fit(epoch_data(epoch, steps), initial_epoch=epoch - 1, epochs=epoch, verbose=0).history
        theirs.append({"loss": logs["c_loss"][-1], "contrastive_accuracy": logs["c_acc"][-1]})
    return exact_rows("semisupervised_simclr", rows, theirs, ("loss", "contrastive_accuracy"))


def exact_rows(name: str, rows: list[dict], theirs: list[dict], keys: tuple[str, ...]) -> list[dict]:
    """One row per epoch and figure: tfgen's history beside the published program's epoch means."""
    return [
        {
            "comparison": name,
            "mode": "exact",
            "epoch": row["epoch"],
            "figure": key,
            "tfgen": row[key],
            "published": epoch[key],
        }
        for row, epoch in zip(rows, theirs, strict=True)
        for key in keys
    ]


def wgan_gp(epochs: int, steps: int | None, seeds: tuple[int, ...] = (1, 2, 3)) -> list[dict]:
    """Over 3 seeds: tfgen's per-epoch losses, and the published WGAN-GP's from the same initial
    weights (tfgen's, under each seed: the published program builds its networks in the other
    order, so one seed gives the two programs different weights, and the weights decide most of
    a run's course). Not exact: each program draws its own noise, penalty points (the published
    alpha from a normal distribution; tfgen's uniform in [0, 1], as the paper), dropout masks
    and batch order. Both log the last critic update's d_loss."""
    import wgan_gp as published

    spec = PUBLISHED / "wgan_gp.yaml"
    module = build_script(spec, Path("generated"))
    same = [w.shape for w in published.build_generator().weights + published.build_discriminator().weights]
    built = [w.shape for w in module.build_generator().weights + module.build_discriminator().weights]
    if same != built:
        raise SystemExit(f"the spec's networks are not the published ones: {built} != {same}")
    theirs, ours = [], []
    for seed in seeds:
        module = build_script(spec, Path(f"generated-{seed}"), f"seed={seed}")
        rows, initial = run_script(module, epochs, steps, "build_generator", "build_discriminator")
        ours.append(rows)
        start = {"generator": initial["build_generator"], "discriminator": initial["build_discriminator"]}
        theirs.append(published.main(seed, epochs, steps, start))
    return spread_rows("wgan_gp", ours, theirs, ("d_loss", "g_loss"))


def wgan_gp_exact(
    epochs: int,
    steps: int | None,
    seed: int = 1,
    dropout: bool = False,
    float64: bool = False,
    same_masks: bool = False,
) -> list[dict]:
    """Exact, with the critic's Dropout off in both (its masks come from each program's seed
    generator): the published WGAN-GP step and the generated one from the same weights, on the
    same unshuffled batches, drawing the script's noise and penalty points (tfgen's alpha,
    uniform in [0, 1]). What the 3-seed comparison leaves to chance, made equal: the two steps
    compute the same function. `dropout`: left on, so that only the masks differ (a measure of
    what the masks alone move). `float64`: both in float64 (see in_float64), from the float32
    comparison's initial weights."""
    import tensorflow as tf
    import wgan_gp as published

    overrides = ["data.train.shuffle=null", f"seed={seed}"]
    if float64:
        overrides.append("networks.discriminator.inputs.pixels.dtype=float64")
    module = build_script(PUBLISHED / "wgan_gp.yaml", Path("generated"), *overrides)
    dropout = dropout or same_masks
    build = module.build_discriminator
    seed_states = []  # the script's critic's Dropout seed states as last built (its masks' keys)

    def build_discriminator(*args):
        model = build(*args)  # built twice in float64: the float32 start's, then the run's
        seed_states[:] = [layer.seed_generator.state.numpy() for layer in dropout_layers(model)]
        return model if dropout else without_dropout(model)

    module.build_discriminator = build_discriminator
    builders = ("build_generator", "build_discriminator")
    start = None
    if float64:
        start = float32_start(module, seed, builders)
        in_float64(module)
    rows, initial = run_script(module, epochs, steps, *builders, start=start)

    class SameNumbers(published.WGAN):
        def train_step(self, real_images):
            steps = module.DISCRIMINATOR_STEPS  # tfgen's draw numbers, in order:
            self.latents = iter([*range(0, 2 * steps, 2), 2 * steps])  # each critic update's, the generator's
            self.alphas = iter(range(1, 2 * steps, 2))
            if same_masks:  # the script scores real then fake, the published step fake then real
                shifts = [1, -1, 0] * steps + [0]  # each call's key, in order: the script's for it
                for layer in dropout_layers(self.discriminator):
                    drawing_shifted(layer.seed_generator, iter(shifts))
            return super().train_step(real_images)

        def latent(self, batch_size):
            step = self.g_optimizer.iterations
            return module.draw(tf.random.stateless_normal, module.NOISE_SHAPE, step, next(self.latents))

        def alpha(self, batch_size):
            step = self.g_optimizer.iterations
            return module.draw(tf.random.stateless_uniform, [1, 1, 1], step, next(self.alphas))

    wgan = published.compiled_wgan(SameNumbers)
    wgan.generator.set_weights(initial["build_generator"])
    wgan.discriminator.set_weights(initial["build_discriminator"])
    if same_masks:
        for layer, state in zip(dropout_layers(wgan.discriminator), seed_states, strict=True):
            layer.seed_generator.state.assign(state)
    if not dropout:
        without_dropout(wgan.discriminator)
    means = published.EpochMeans(["d_loss", "g_loss"])
    batches = unshuffled(module, published.BATCH_SIZE, steps, with_labels=False)
    wgan.fit(batches, epochs=epochs, verbose=0, callbacks=[means])
    rows = exact_rows("wgan_gp", rows, means.epochs, ("d_loss", "g_loss"))
    masks = "exact, the same dropout masks" if same_masks else "exact but the dropout masks"
    mode = ", ".join([masks if dropout else "exact, no dropout", *(["float64"] if float64 else [])])
    return [{**row, "mode": mode} for row in rows]


def dropout_layers(model) -> list:
    """`model`'s Dropout layers, in order."""
    import keras

    return [layer for layer in model.layers if isinstance(layer, keras.layers.Dropout)]


def drawing_shifted(seed_generator, shifts) -> None:
    """Each key `seed_generator` gives (a Dropout's mask's) shifted by the next of `shifts`: its
    state still counts the draws as before, so that each step starts where the script's does."""
    import numpy as np

    ordinary = type(seed_generator).next.__get__(seed_generator)

    def shifted(ordered=True):
        return ordinary(ordered) + np.array([0, next(shifts)], dtype="int64")

    seed_generator.next = shifted


def without_dropout(model):
    """`model` with its Dropout layers' rate 0 (read when called: they pass their inputs)."""
    for layer in dropout_layers(model):
        layer.rate = 0.0
    return model


def spread_rows(name: str, ours: list[list[dict]], theirs: list[list[dict]], keys: tuple[str, ...]) -> list[dict]:
    """One row per epoch and figure: tfgen's value for each seed beside the published range."""
    rows = []
    for epoch in range(len(theirs[0])):
        for key in keys:
            published = [run[epoch][key] for run in theirs]
            rows.append(
                {
                    "comparison": name,
                    "mode": "3 seeds",
                    "epoch": epoch + 1,
                    "figure": key,
                    "tfgen_values": [run[epoch][key] for run in ours],
                    "published_values": published,
                    "published_range": [min(published), max(published)],
                }
            )
    return rows


COMPARISONS = {
    "knowledge_distillation": knowledge_distillation,
    "dcgan": dcgan,
    "wgan_gp": wgan_gp,
    "wgan_gp_exact": wgan_gp_exact,
    "semisupervised_simclr": semisupervised_simclr,
}


def verdict(row: dict) -> bool:
    """Exact rows: within EXACT_RTOL of each other; 3-seed rows: tfgen's mean within the published range."""
    if row["mode"].startswith("exact"):
        return abs(row["tfgen"] - row["published"]) <= EXACT_RTOL * max(abs(row["published"]), 1e-6)
    low, high = row["published_range"]
    return low <= sum(row["tfgen_values"]) / len(row["tfgen_values"]) <= high


def table(rows: list[dict]) -> str:
    lines = [
        "| comparison | mode | epoch | figure | tfgen | published | difference | holds |",
        "|---|---|---|---|---|---|---|---|",
    ]
    for row in rows:
        if row["mode"].startswith("exact"):
            shown = f"{row['tfgen']:.6f} | {row['published']:.6f} | {abs(row['tfgen'] - row['published']):.1e}"
        else:
            values = row["tfgen_values"]
            ours = ", ".join(f"{v:.4f}" for v in values) + f" (mean {sum(values) / len(values):.4f})"
            low, high = row["published_range"]
            shown = f"{ours} | {low:.4f} .. {high:.4f} | spread {high - low:.4f}"
        mark = "yes" if verdict(row) else "NO"
        lines.append(f"| {row['comparison']} | {row['mode']} | {row['epoch']} | {row['figure']} | {shown} | {mark} |")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("comparisons", nargs="*", help=f"of {', '.join(COMPARISONS)} (default: all)")
    parser.add_argument("--epochs", type=int, help="epochs of each run (default: each comparison's)")
    parser.add_argument("--steps", type=int, help="batches per epoch (default: all)")
    parser.add_argument("--teacher-epochs", type=int, default=5, help="knowledge_distillation's teacher (published: 5)")
    parser.add_argument("--seed", type=int, help="the exact comparisons' seed (default: 1; wgan_gp: 1, 2 and 3)")
    parser.add_argument("--float64", action="store_true", help="dcgan, wgan_gp_exact: both programs in float64")
    parser.add_argument("--tfgen-order", action="store_true", help="dcgan only: the published losses in tfgen's order")
    parser.add_argument("--dropout", action="store_true", help="wgan_gp_exact only: the critic's dropout on")
    parser.add_argument("--same-masks", action="store_true", help="wgan_gp_exact only: dropout on, the same masks")
    parser.add_argument("--json", type=Path, help="also write the rows here")
    parser.add_argument("--one", help=argparse.SUPPRESS)  # a comparison in a process of its own
    args = parser.parse_args(argv)
    unknown = sorted(set(args.comparisons) - set(COMPARISONS))
    if unknown:
        parser.error(f"unknown comparison(s) {', '.join(unknown)}: choose from {', '.join(COMPARISONS)}")
    chosen = [args.one] if args.one else args.comparisons or list(COMPARISONS)
    flags = (("--float64", args.float64, "dcgan", "wgan_gp_exact"), ("--tfgen-order", args.tfgen_order, "dcgan"))
    variants = (("--dropout", args.dropout, "wgan_gp_exact"), ("--same-masks", args.same_masks, "wgan_gp_exact"))
    for flag, given, *only in (*flags, *variants):
        if given and (len(chosen) != 1 or chosen[0] not in only):
            which = " or ".join(only)
            print(f"error: {flag} is for the {which} comparison only: `parity.py {only[0]} {flag}`", file=sys.stderr)
            return 2
    if args.seed is not None and "wgan_gp" in chosen:
        print("error: --seed is for the exact comparisons: wgan_gp runs seeds 1, 2 and 3", file=sys.stderr)
        return 2
    if args.one:
        with tempfile.TemporaryDirectory(prefix="tfgen-parity-") as folder:
            os.chdir(folder)
            extra = {"teacher_epochs": args.teacher_epochs} if args.one == "knowledge_distillation" else {}
            extra.update({"float64": True} if args.float64 else {})
            extra.update({"tfgen_order": True} if args.tfgen_order else {})
            extra.update({"dropout": True} if args.dropout else {})
            extra.update({"same_masks": True} if args.same_masks else {})
            extra.update({"seed": args.seed} if args.seed is not None else {})
            rows = COMPARISONS[args.one](args.epochs or DEFAULT_EPOCHS[args.one], args.steps, **extra)
        print(json.dumps(rows))
        return 0
    rows = []
    for name in args.comparisons or COMPARISONS:
        command = [sys.executable, __file__, "--one", name, *(["--epochs", str(args.epochs)] if args.epochs else [])]
        command += ["--steps", str(args.steps)] if args.steps else []
        command += ["--teacher-epochs", str(args.teacher_epochs), *(["--float64"] if args.float64 else [])]
        command += ["--seed", str(args.seed)] if args.seed is not None else []
        command += ["--tfgen-order"] if args.tfgen_order else []
        command += ["--dropout"] if args.dropout else []
        command += ["--same-masks"] if args.same_masks else []
        env = {
            **os.environ,
            "PYTHONPATH": os.pathsep.join([str(ROOT), str(ROOT / "runtime"), os.environ.get("PYTHONPATH", "")]),
        }
        done = subprocess.run(command, capture_output=True, text=True, env=env, check=False)
        if done.returncode != 0:
            raise SystemExit(f"{name} failed:\n{done.stderr[-3000:]}")
        rows += json.loads(done.stdout.strip().splitlines()[-1])
    print(table(rows))
    if args.json:
        args.json.write_text(json.dumps(rows, indent=1) + "\n")
    return 0 if all(verdict(row) for row in rows) else 1


DEFAULT_EPOCHS = {"knowledge_distillation": 3, "dcgan": 3, "wgan_gp": 3, "wgan_gp_exact": 3, "semisupervised_simclr": 3}

if __name__ == "__main__":
    sys.exit(main())
