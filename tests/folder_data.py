"""Folders of class sub-folders, written for tests: real PNG and JPEG files (tf.io.encode_png,
encode_jpeg) and UTF-8 text files, and a spec that reads them."""

from __future__ import annotations

from pathlib import Path

from conftest import base_spec

SHAPES = ("circle", "square", "stripes")


def write_images(root: Path, classes=SHAPES, per_class: int = 12, size=(12, 10), jpegs: int = 1) -> list[Path]:
    """`per_class` images in `root/<class>/` (the first `jpegs` of each as JPEG, the others PNG):
    class `c` is bright in channel `c`, with noise; returns the files in the order written."""
    import numpy as np
    import tensorflow as tf

    rng = np.random.default_rng(7)
    written = []
    for index, name in enumerate(classes):
        folder = root / name
        folder.mkdir(parents=True, exist_ok=True)
        for number in range(per_class):
            pixels = rng.integers(0, 60, size=(*size, 3)).astype("uint8")
            pixels[..., index % 3] += 180
            image = tf.constant(pixels)
            if number < jpegs:
                path = folder / f"{number:03d}.jpg"
                path.write_bytes(tf.io.encode_jpeg(image, quality=95).numpy())
            else:
                path = folder / f"{number:03d}.png"
                path.write_bytes(tf.io.encode_png(image).numpy())
            written.append(path)
    return written


def write_texts(root: Path, texts: dict[str, list[str]]) -> None:
    """`root/<class>/<n>.txt` holding each class's texts."""
    for name, items in texts.items():
        folder = root / name
        folder.mkdir(parents=True, exist_ok=True)
        for number, text in enumerate(items):
            (folder / f"{number:03d}.txt").write_text(text, encoding="utf-8")


def image_spec(directory: Path, size=(8, 8), **data) -> dict:
    """A small CNN on `directory`'s images (3 classes), a stratified quarter held out."""
    source = {"type": "image_folder", "directory": str(directory), "image_size": list(size)}
    spec = base_spec(
        data={
            "train": {"source": source, "batch_size": 8, "shuffle": 64},
            "validation_split": 0.25,
            "stratify": True,
            **data,
        },
        model={
            "inputs": {"image": {"shape": [*size, 3], "dtype": "uint8"}},
            "layers": [
                {"type": "Rescaling", "scale": 1 / 255},
                {"type": "Conv2D", "filters": 8, "kernel_size": 3, "activation": "relu"},
                {"type": "GlobalAveragePooling2D"},
            ],
            "outputs": {"shape": [{"type": "Dense", "units": 3}]},
        },
        targets={"shape": {"shape": [], "dtype": "int32", "classes": 3}},
        losses={"shape": {"type": "SparseCategoricalCrossentropy", "from_logits": True}},
        metrics={"shape": ["SparseCategoricalAccuracy"]},
        optimizer={"type": "Adam", "learning_rate": 0.02},
    )
    spec["name"] = "shapes"
    spec["deterministic"] = True
    return spec


GOOD = ("great", "wonderful", "moving", "superb", "fun")
BAD = ("dull", "boring", "slow", "awful", "flat")
FILLER = ("the", "film", "was", "a", "story", "and", "very", "plot")


def write_reviews(root: Path, per_class: int = 24) -> None:
    """`root/negative/` and `root/positive/`: short reviews, each with two words of its class."""
    import random

    rng = random.Random(0)

    def review(words):
        return " ".join(rng.sample(FILLER, 3) + rng.sample(words, 2))

    reviews = {
        "negative": [review(BAD) for _ in range(per_class)],
        "positive": [review(GOOD) for _ in range(per_class)],
    }
    write_texts(root, reviews)


def text_spec(directory: Path) -> dict:
    """A bag-of-words classifier (TextVectorization of a fixed vocabulary) of `directory`'s reviews."""
    spec = base_spec(
        data={
            "train": {"source": {"type": "text_folder", "directory": str(directory)}, "batch_size": 8, "shuffle": 64},
            "validation_split": 0.25,
            "stratify": True,
        },
        model={
            "inputs": {"text": {"shape": [], "dtype": "string"}},
            "layers": [
                {"type": "TextVectorization", "output_mode": "multi_hot", "vocabulary": [*GOOD, *BAD, *FILLER]},
                {"type": "Dense", "units": 8, "activation": "relu"},
            ],
            "outputs": {"label": [{"type": "Dense", "units": 2}]},
        },
        targets={"label": {"shape": [], "classes": ["negative", "positive"]}},
        losses={"label": {"type": "SparseCategoricalCrossentropy", "from_logits": True}},
        metrics={"label": ["SparseCategoricalAccuracy"]},
        optimizer={"type": "Adam", "learning_rate": 0.05},
        train={"epochs": 4},
    )
    spec["name"] = "reviews"
    return spec
