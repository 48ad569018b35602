"""How a script reads a folder source: the options a spec changes, the pipeline's order (the
file list shuffled before its files are read; read before a cache), and the split of the list."""

from __future__ import annotations

from conftest import base_spec, build


def folder_spec(source: dict, **train) -> dict:
    spec = base_spec()
    spec["data"] = {"train": {"source": source, "batch_size": 8, **train}, "validation_split": 0.25}
    spec["model"]["inputs"] = {"image": {"shape": [8, 6, 1], "dtype": "uint8"}}
    spec["model"]["layers"] = [{"type": "Flatten"}]
    return spec


def functions(script, *names):
    text = script.read_text()
    return {name: text.split(f"\ndef {name}(")[1].split("\ndef ")[0] for name in names}


def test_an_image_folder_passes_only_the_options_the_spec_changes(tmp_path):
    source = {
        "type": "image_folder",
        "directory": "data/shapes",
        "image_size": [8, 6],
        "color_mode": "grayscale",
        "extensions": ["png", "jpg", "jpeg", "bmp", "gif"],
        "crop_to_aspect_ratio": True,
    }
    script = build(tmp_path, folder_spec(source, shuffle=32))
    parts = functions(script, "load_data", "train_pipeline", "validation_pipeline")
    assert 'rt.image_folder(\n            "data/shapes",' in parts["load_data"]
    assert (
        'image_size=(8, 6),\n            color_mode="grayscale",\n            crop_to_aspect_ratio=True,\n'
        in (parts["load_data"])
    )
    assert "extensions" not in parts["load_data"] and "interpolation" not in parts["load_data"]
    assert "return rt.split_files(train, VALIDATION_SPLIT, SEED)" in parts["load_data"]
    lines = [line.strip() for line in parts["train_pipeline"].splitlines()]
    assert (
        lines.index("ds = rt.listed(train)  # a folder's (path, label) pairs: shuffled, then read")
        < lines.index("buffer = rt.shuffle_buffer(train, SHUFFLE_BUFFER)")
        < lines.index("ds = rt.decoded(ds, train)  # read and decoded in parallel, in order")
    )
    assert "ds = rt.decoded(ds, validation)" in parts["validation_pipeline"]


def test_a_cached_folder_is_read_before_the_cache_and_shuffled_after_it(tmp_path):
    source = {"type": "image_folder", "directory": "data/shapes", "image_size": [8, 6], "color_mode": "grayscale"}
    script = build(tmp_path, folder_spec(source, shuffle=32, cache=True))
    lines = [line.strip() for line in functions(script, "train_pipeline")["train_pipeline"].splitlines()]
    read = lines.index("ds = rt.decoded(ds, train)  # read and decoded in parallel, in order")
    assert lines[read + 1].startswith("ds = rt.cached(ds, train)")  # one cache for every epoch
    assert "ds = ds.shuffle(SHUFFLE_BUFFER, SEED + epoch, reshuffle_each_iteration=False)" in lines[read + 1 :]
