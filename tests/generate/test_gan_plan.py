"""Each `gan` variant builds a script that passes the build's own checks (compile, pyflakes, black,
ruff, the loop linter) and holds the parts its spec asks for, and no others."""

from __future__ import annotations

import pytest
import yaml
from conftest import ROOT, build

GAN = yaml.safe_load((ROOT / "specs" / "gan.yaml").read_text())


def gan_spec(**algorithm) -> dict:
    spec = yaml.safe_load(yaml.safe_dump(GAN))
    spec["algorithm"].update(algorithm)
    if "condition" in algorithm:
        for network in spec["networks"].values():
            network["inputs"][algorithm["condition"]] = {"shape": [10]}
    return spec


@pytest.mark.parametrize(
    ("algorithm", "present", "absent"),
    [
        ({}, ["tf.nn.softplus(-real) + tf.nn.softplus(fake)", "DISCRIMINATOR_STEPS = 1"], ["GRADIENT_PENALTY"]),
        (
            {"loss": "wasserstein", "gradient_penalty": 10.0, "discriminator_steps": 5},
            ["return fake - real", "GRADIENT_PENALTY = 10.0", "DISCRIMINATOR_STEPS = 5", "tape.watch(interpolates)"],
            ["softplus"],
        ),
        ({"loss": "hinge"}, ["tf.nn.relu(1.0 - real) + tf.nn.relu(1.0 + fake)"], ["GRADIENT_PENALTY", "CLASSES"]),
        (
            {"condition": "digit"},
            ['condition = tf.one_hot(targets["digit"], CLASSES)', '"digit": condition', "CLASSES = 10"],
            ['INPUTS = {"pixels": rt.Field((64,), "float32"), "digit"'],
        ),
    ],
    ids=["non_saturating", "wgan_gp", "hinge", "conditional"],
)
def test_each_gan_variant_builds_a_checked_script_of_its_parts(tmp_path, algorithm, present, absent):
    script = build(tmp_path, gan_spec(**algorithm), "gan").read_text()
    for text in present:
        assert text in script
    for text in absent:
        assert text not in script


def test_a_sample_of_a_square_number_of_values_gets_a_png_grid_and_others_none(tmp_path):
    assert "SAMPLE_IMAGE_SHAPE = (8, 8, 1)" in build(tmp_path / "a", gan_spec(), "gan").read_text()
    spec = gan_spec()
    spec["networks"]["generator"]["outputs"]["pixels"][0]["units"] = 60
    spec["networks"]["discriminator"]["inputs"]["pixels"]["shape"] = [60]
    spec["data"]["train"]["source"] = {"type": "synthetic", "examples": 256}
    script = build(tmp_path / "b", spec, "gan").read_text()
    assert "SAMPLE_IMAGE_SHAPE" not in script and ".png" not in script


def test_a_supervised_spec_dumps_without_the_algorithm_fields():
    from tfgen.spec.models import Spec

    digits = yaml.safe_load((ROOT / "specs" / "digits.yaml").read_text())
    dumped = Spec.model_validate(digits).model_dump(mode="json")
    assert not {"algorithm", "networks", "optimizers"} & set(dumped)
    assert dumped["model"]["inputs"] == {"pixels": {"shape": [64], "dtype": "float32", "vocabulary": None}}
