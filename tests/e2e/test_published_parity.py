"""Side by side with keras.io (benchmarks/parity.py): the exact comparisons, run small (2 epochs
of 4 batches). Every epoch, and WGAN-GP over 3 seeds, is `python benchmarks/parity.py`
(docs/algorithms.md, "Side by side with keras.io")."""

from __future__ import annotations

import json
import os
import subprocess
import sys

import pytest
from conftest import ROOT, load_module

pytestmark = pytest.mark.slow


def compare(tmp_path, comparison: str, *options: str, epochs: int = 2, steps: int = 4, rel: float = 1e-5) -> list[dict]:
    """`benchmarks/parity.py COMPARISON` for `epochs` epochs of `steps` batches: its rows, each
    checked within `rel`."""
    out = tmp_path / f"{comparison}.json"
    command = [sys.executable, str(ROOT / "benchmarks" / "parity.py"), comparison]
    command += ["--epochs", str(epochs), "--steps", str(steps), "--json", str(out), *options]
    env = {**os.environ, "TF_CPP_MIN_LOG_LEVEL": "3", "CUDA_VISIBLE_DEVICES": "-1"}
    result = subprocess.run(command, capture_output=True, text=True, timeout=900, env=env, check=False)
    print(result.stdout)  # the table: measured differences <= 1e-6
    assert result.returncode == 0, result.stdout + result.stderr[-3000:]
    rows = json.loads(out.read_text())
    for row in rows:
        assert row["mode"].startswith("exact") and row["tfgen"] == pytest.approx(row["published"], rel=rel), row
    return rows


def test_a_sequential_teacher_distils_as_keras_io_published_distiller_computes(tmp_path):
    """keras.io's knowledge_distillation (restated in benchmarks/published/) and the script of the
    spec beside it, from the same student weights, the same Sequential teacher file (its one input
    fed as a tensor: it takes no dict) and the same unshuffled batches: student_loss and
    distillation_loss within 1e-5 per epoch."""
    rows = compare(tmp_path, "knowledge_distillation", "--teacher-epochs", "1")
    assert [(r["epoch"], r["figure"]) for r in rows] == [
        (1, "student_loss"),
        (1, "distillation_loss"),
        (2, "student_loss"),
        (2, "distillation_loss"),
    ]
    assert rows[0]["tfgen"] != rows[2]["tfgen"]  # it trained


def test_an_unshuffled_gan_with_label_noise_steps_as_keras_io_published_dcgan(tmp_path):
    """keras.io's DCGAN step and tfgen's from the same weights (tfgen's discriminator with its last
    layer negated), batches, latents and label noise: d_loss and g_loss within 1e-5 per epoch.
    It holds because the non_saturating d_loss is the mean cross-entropy over the real and the fake
    examples (it was their sum), `label_noise` draws the published trick, and `shuffle: null`
    leaves a gan's in-memory batches in order (they were shuffled)."""
    rows = compare(tmp_path, "dcgan")
    assert [(r["epoch"], r["figure"]) for r in rows] == [(1, "d_loss"), (1, "g_loss"), (2, "d_loss"), (2, "g_loss")]


def test_the_dcgan_steps_agree_to_float64_rounding_in_float64(tmp_path):
    """`parity.py dcgan --float64`: both DCGAN programs in float64 from the same weights and
    numbers agree within 1e-12 (measured: 0 over 2 steps, within 2.2e-16 over 3 whole epochs,
    where float32 misses 1e-5): the two steps compute the same function."""
    rows = compare(tmp_path, "dcgan", "--float64", epochs=1, steps=2, rel=1e-12)
    assert [(r["mode"], r["figure"]) for r in rows] == [("exact, float64", "d_loss"), ("exact, float64", "g_loss")]


@pytest.mark.parametrize(
    ("flag", "only"),
    [
        ("--float64", "dcgan or wgan_gp_exact"),
        ("--tfgen-order", "dcgan"),
        ("--dropout", "wgan_gp_exact"),
        ("--same-masks", "wgan_gp_exact"),
    ],
)
def test_a_comparisons_variant_is_refused_for_the_other_comparisons(flag, only):
    """`--tfgen-order` runs the DCGAN comparison only, `--dropout` and `--same-masks` the exact
    WGAN-GP one, `--float64` either: for another, one line, exit code 2."""
    command = [sys.executable, str(ROOT / "benchmarks" / "parity.py"), "knowledge_distillation", flag]
    result = subprocess.run(command, capture_output=True, text=True, timeout=60, check=False)
    assert result.returncode == 2
    example = only.split(" or ")[0]
    assert result.stderr == f"error: {flag} is for the {only} comparison only: `parity.py {example} {flag}`\n"


def test_simclr_with_the_other_views_negatives_steps_as_keras_io_published_semisupervised_simclr(tmp_path):
    """keras.io's SimCLR pretraining step (semisupervised_simclr, restated in benchmarks/published/)
    and the script of the spec beside it (`negatives: other_view`), from the same encoder and
    projection weights, on the same unshuffled batches and the same views (tfgen's): the
    contrastive loss and accuracy within 1e-5 per epoch. It holds because the other view's
    loss computes the similarities once and reads their transpose, as published (with two
    products the weights differed by up to 4.6e-6 after one step, the third epoch's loss by
    9.6e-4), and the spec's Adam epsilon is 1e-7 / 128 (the published gradient is of the batch's
    sum; with 1e-7 the first epoch's loss differed by 2.1e-4)."""
    rows = compare(tmp_path, "semisupervised_simclr")
    assert [(r["epoch"], r["figure"]) for r in rows] == [
        (1, "loss"),
        (1, "contrastive_accuracy"),
        (2, "loss"),
        (2, "contrastive_accuracy"),
    ]
    assert rows[0]["tfgen"] != rows[2]["tfgen"]  # it trained


def test_shifted_keys_give_a_dropout_the_masks_of_its_calls_in_the_other_order(monkeypatch):
    """`parity.py wgan_gp_exact --same-masks`: the published critic scores the fakes, then the
    real examples; the script's, the real ones first. Each published call's key shifted (+1, -1)
    draws the script's mask for the same examples, and the draws leave the state where the
    script's is, for the next step."""
    import keras
    import numpy as np

    for name in ("TF_ENABLE_ONEDNN_OPTS", "TF_CPP_MIN_LOG_LEVEL"):  # parity.py sets them: undone after
        if name in os.environ:
            monkeypatch.setenv(name, os.environ[name])
        else:
            monkeypatch.delenv(name, raising=False)
    parity = load_module(ROOT / "benchmarks" / "parity.py")
    script, published = keras.layers.Dropout(0.5, seed=7), keras.layers.Dropout(0.5, seed=7)
    real, fake = np.ones((64,), "float32"), np.full((64,), 2.0, "float32")
    script_real, script_fake = script(real, training=True), script(fake, training=True)
    assert not np.array_equal(script_real, script_fake / 2)  # two masks: an order that matters
    parity.drawing_shifted(published.seed_generator, iter([1, -1]))
    published_fake, published_real = published(fake, training=True), published(real, training=True)
    np.testing.assert_array_equal(published_real, script_real)
    np.testing.assert_array_equal(published_fake, script_fake)
    np.testing.assert_array_equal(published.seed_generator.state, script.seed_generator.state)
