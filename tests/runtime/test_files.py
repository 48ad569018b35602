"""Folder sources in the support package (tfgen_runtime/files.py): the files listed once and in
a fixed order, split as a list, decoded as Keras's loader decodes them, and every bad folder or
file one line naming it."""

from __future__ import annotations

import numpy as np
import pytest
from conftest import Lazy, lazy_import, load_runtime
from folder_data import SHAPES, write_images, write_texts

# Imported by the first test that uses them, not when a pytest-xdist worker collects this file.
tf = lazy_import("tensorflow")
rt = Lazy(load_runtime)
files = Lazy(lambda: rt.files)


def fields(size=(8, 8, 3), dtype="float32", classes=3):
    inputs = {"image": rt.Field(size, dtype)}
    targets = {"shape": rt.Field((), "int32", classes=classes)}
    return inputs, targets


def images(directory, size=(8, 8), dtype="float32", classes=3, **options):
    inputs, targets = fields((*size, files.CHANNELS[options.get("color_mode", "rgb")]), dtype, classes)
    return rt.image_folder(str(directory), inputs, targets, image_size=size, **options)


def examples_of(dataset):
    return [(x["image"], y["shape"]) for x, y in dataset.as_numpy_iterator()]


def test_files_are_listed_once_sorted_by_class_then_path_skipping_others(tmp_path):
    root = tmp_path / "shapes"
    write_images(root, per_class=3)
    (root / "square" / "nested").mkdir()
    (root / "square" / "nested" / "001.PNG").write_bytes((root / "square" / "001.png").read_bytes())
    (root / "square" / "notes.txt").write_text("not an image")
    (root / "square" / "._001.png").write_bytes(b"a resource fork, not an image")
    (root / ".ipynb_checkpoints").mkdir()
    (root / "loose.png").write_bytes((root / "square" / "001.png").read_bytes())
    listed = images(root)
    relative = [str(path).removeprefix(f"{root}/") for path in listed.paths]
    assert relative == [
        "circle/000.jpg",
        "circle/001.png",
        "circle/002.png",
        "square/000.jpg",
        "square/001.png",
        "square/002.png",
        "square/nested/001.PNG",
        "stripes/000.jpg",
        "stripes/001.png",
        "stripes/002.png",
    ]
    assert listed.labels.tolist() == [0, 0, 0, 1, 1, 1, 1, 2, 2, 2] and listed.labels.dtype == np.int32
    assert listed.names == SHAPES


def test_images_decode_to_the_inputs_shape_and_dtype_without_rescaling(tmp_path):
    root = tmp_path / "flat"
    for name, value in (("dark", 10), ("light", 250)):
        (root / name).mkdir(parents=True)
        pixels = tf.fill((6, 4, 3), tf.constant(value, tf.uint8))
        (root / name / "a.png").write_bytes(tf.io.encode_png(pixels).numpy())
    for dtype in ("uint8", "float32"):
        decoded = examples_of(images(root, size=(3, 2), dtype=dtype, classes=2).dataset())
        assert [x.dtype for x, _ in decoded] == [np.dtype(dtype)] * 2
        assert [x.shape for x, _ in decoded] == [(3, 2, 3)] * 2
        assert [float(x.mean()) for x, _ in decoded] == [10.0, 250.0]
        assert [int(y) for _, y in decoded] == [0, 1]
    for mode, channels in (("grayscale", 1), ("rgba", 4)):
        decoded = examples_of(images(root, size=(3, 2), classes=2, color_mode=mode).dataset())
        assert decoded[0][0].shape == (3, 2, channels)


def test_crop_to_aspect_ratio_keeps_the_centre_of_the_image(tmp_path):
    root = tmp_path / "wide"
    for name in ("a", "b"):
        (root / name).mkdir(parents=True)
        pixels = np.zeros((4, 12, 3), np.uint8)
        pixels[:, 4:8] = 200  # the centre square is bright, the sides dark
        (root / name / "wide.png").write_bytes(tf.io.encode_png(pixels).numpy())
    cropped = examples_of(images(root, size=(4, 4), classes=2, crop_to_aspect_ratio=True).dataset())
    squeezed = examples_of(images(root, size=(4, 4), classes=2).dataset())
    assert float(cropped[0][0].min()) == 200.0
    assert float(squeezed[0][0].min()) < 200.0


@pytest.mark.parametrize(
    "layout, classes, message",
    [
        (None, 3, r"missing: no such folder \(relative paths start at .*\); pass --synthetic"),
        ({"circle": 2}, 3, r": 1 class folder\(s\) \(circle\); it needs one sub-folder per class, two or more"),
        ({"circle": 2, "square": 0}, 2, r"/square: no \.png, \.jpg, \.jpeg, \.bmp, \.gif file in it"),
        ({"a": 1, "b": 1, "c": 1, "d": 1}, 3, r": 4 class folders \(a, b, c, d\); the target has classes: 3"),
    ],
    ids=["missing", "one-class", "empty-class", "count"],
)
def test_a_bad_folder_is_one_line_naming_it(tmp_path, layout, classes, message):
    root = tmp_path / "missing"
    for name, count in (layout or {}).items():
        (root / name).mkdir(parents=True)
        for number in range(count):
            (root / name / f"{number}.png").write_bytes(tf.io.encode_png(tf.zeros((2, 2, 3), tf.uint8)).numpy())
    with pytest.raises(rt.UserError, match=message):
        images(root, classes=classes)


def test_a_stratified_split_holds_out_files_of_every_class_the_same_each_time(tmp_path):
    root = tmp_path / "shapes"
    write_images(root, per_class=8, size=(2, 2))
    listed = images(root)
    kept, held = rt.split_files(listed, 0.25, 5, stratify=True)
    assert sorted(np.bincount(held.labels).tolist()) == [2, 2, 2]
    assert sorted([*kept.paths, *held.paths]) == sorted(listed.paths)
    again_kept, again_held = rt.split_files(images(root), 0.25, 5, stratify=True)
    assert again_held.paths.tolist() == held.paths.tolist() and again_kept.paths.tolist() == kept.paths.tolist()
    plain_kept, plain_held = rt.split_files(listed, 0.25, 5)
    assert len(plain_held) == 6 and len(plain_kept) == 18
    assert len(files.first_examples(kept, 4)) == 4


def test_validation_and_test_splits_hold_out_disjoint_files_of_every_class(tmp_path):
    root = tmp_path / "shapes"
    write_images(root, per_class=8, size=(2, 2))
    listed = images(root)
    train, validation, test = rt.held_out(listed, 5, validation=0.25, test=0.25, stratify=True)
    assert [len(part) for part in (train, validation, test)] == [12, 6, 6]
    for part in (validation, test):
        assert sorted(np.bincount(part.labels).tolist()) == [2, 2, 2]
    assert sorted([*train.paths, *validation.paths, *test.paths]) == sorted(listed.paths)
    _, held = rt.split_files(listed, 0.25, 5, stratify=True)
    assert held.paths.tolist() == validation.paths.tolist()  # a test split leaves them as they were
    assert len(rt.checked_test_data(test, 4)) == 4
    with pytest.raises(rt.UserError, match="the test data is empty"):
        rt.checked_test_data(test.rows(slice(0)))


@pytest.mark.parametrize("position", [0, 9, 17], ids=["first", "middle", "last"])
def test_a_file_that_cannot_be_decoded_stops_the_stream_naming_it(tmp_path, position):
    root = tmp_path / "shapes"
    written = write_images(root, per_class=6, size=(2, 2))
    bad = sorted(written)[position]
    bad.write_bytes(bad.read_bytes()[:30])  # truncated
    listed = images(root)
    pairs = rt.listed(listed).shuffle(64, 3, reshuffle_each_iteration=False)
    for dataset in (listed.dataset(), rt.decoded(pairs, listed).batch(4)):
        with pytest.raises(tf.errors.InvalidArgumentError) as raised:
            list(dataset.as_numpy_iterator())
        assert rt.cli.is_users(raised.value)
        assert rt.cli.first_line(raised.value) == f"{bad}: cannot be read as an image (png, jpeg, gif or bmp)"


def test_files_decoded_after_a_seeded_shuffle_come_in_the_same_order_every_time(tmp_path):
    root = tmp_path / "shapes"
    write_images(root, per_class=6, size=(2, 2))
    listed = images(root)

    def epoch(seed):
        pairs = rt.listed(listed).shuffle(64, seed, reshuffle_each_iteration=False)
        return [y for _, y in examples_of(rt.decoded(pairs, listed))]

    assert epoch(4) == epoch(4) and epoch(4) != epoch(5)
    assert sorted(epoch(4)) == sorted(listed.labels.tolist())


def test_a_folders_file_list_is_shuffled_whole_whatever_the_buffer(tmp_path):
    """Listed class by class, a buffer of 4 would start every epoch with one class."""
    write_images(tmp_path / "shapes", per_class=6, size=(2, 2))
    listed = images(tmp_path / "shapes")
    assert rt.shuffle_buffer(listed, 4) == 18 and rt.shuffle_buffer(listed, 64) == 64
    assert rt.shuffle_buffer(({"image": np.zeros((18, 8, 8, 3))}, {}), 4) == 4
    pairs = rt.listed(listed).shuffle(rt.shuffle_buffer(listed, 4), 1, reshuffle_each_iteration=False)
    first = [int(label) for _, label in pairs.take(6).as_numpy_iterator()]
    assert len(set(first)) > 1


def test_text_files_are_read_whole_and_a_file_that_is_not_utf8_is_named(tmp_path):
    root = tmp_path / "reviews"
    write_texts(root, {"bad": ["dull, slow", "ça ne va pas"], "good": ["a great film\nsee it"]})
    inputs = {"text": rt.Field((), "string")}
    targets = {"label": rt.Field((), "int64", classes=2)}
    listed = rt.text_folder(str(root), inputs, targets)
    read = [(x["text"].decode(), int(y["label"])) for x, y in listed.dataset().as_numpy_iterator()]
    assert read == [("dull, slow", 0), ("ça ne va pas", 0), ("a great film\nsee it", 1)]
    (root / "good" / "001.txt").write_bytes(b"caf\xe9 latin-1")
    with pytest.raises(tf.errors.InvalidArgumentError) as raised:
        list(rt.text_folder(str(root), inputs, targets).dataset())
    assert rt.cli.first_line(raised.value) == f"{root}/good/001.txt: cannot be read as UTF-8 text"


def test_listed_class_names_give_the_ids_and_every_folder_must_be_one_of_them(tmp_path):
    root = tmp_path / "shapes"
    write_images(root, per_class=1, size=(2, 2))
    inputs, _ = fields()
    listed = {"shape": rt.Field((), "int32", classes=3, names=("stripes", "circle", "square"))}
    examples = rt.image_folder(str(root), inputs, listed, image_size=(8, 8))
    assert examples.names == ("stripes", "circle", "square")
    assert [path.split("/")[-2] for path in examples.paths] == ["circle", "square", "stripes"]
    assert examples.labels.tolist() == [1, 2, 0]
    assert files.class_names((examples, None), listed) == {"shape": ["stripes", "circle", "square"]}
    other = {"shape": rt.Field((), "int32", classes=3, names=("circle", "square", "triangle"))}
    with pytest.raises(
        rt.UserError, match=r"shapes/stripes: not a class the target lists \(circle, square, triangle\)"
    ):
        rt.image_folder(str(root), inputs, other, image_size=(8, 8))
    (root / "stripes" / "000.jpg").rename(root / "000.jpg")
    (root / "stripes").rmdir()
    more = {"shape": rt.Field((), "int32", classes=4, names=("circle", "square", "stripes", "triangle"))}
    with pytest.raises(rt.UserError, match=r"shapes: no folder for the class `stripes`"):
        rt.image_folder(str(root), inputs, more, image_size=(8, 8))


def test_class_names_are_the_folders_and_the_validation_folder_must_have_the_same(tmp_path):
    write_images(tmp_path / "train", per_class=1, size=(2, 2))
    write_images(tmp_path / "held", classes=("circle", "square", "triangle"), per_class=1, size=(2, 2))
    _, targets = fields()
    train = images(tmp_path / "train")
    assert files.class_names((train, None), targets) == {"shape": list(SHAPES)}
    assert files.class_names(({"image": np.zeros((1, 8, 8, 3))}, None), targets) == {}
    with pytest.raises(rt.UserError, match="the validation folder's classes are circle, square, triangle, not"):
        files.class_names((train, images(tmp_path / "held")), targets)


@pytest.mark.slow
def test_images_are_those_of_keras_image_dataset_from_directory(tmp_path):
    """The same pixels as Keras's loader over the same files, for each resize option."""
    import keras

    root = tmp_path / "shapes"
    write_images(root, per_class=3, size=(13, 9), jpegs=2)
    options = [{}, {"interpolation": "nearest"}, {"crop_to_aspect_ratio": True}, {"color_mode": "grayscale"}]
    for option in options:
        ours = examples_of(images(root, size=(6, 5), **option).dataset())
        theirs = keras.utils.image_dataset_from_directory(
            root, image_size=(6, 5), shuffle=False, batch_size=None, **option
        )
        pairs = list(zip(ours, theirs.as_numpy_iterator(), strict=True))
        for (x, y), (their_x, their_y) in pairs:
            np.testing.assert_allclose(x, their_x, atol=1e-4)
            assert y == their_y
