"""`tfgen validate --deep` lists a folder source's folders: it exists, has two or more class
folders, each holding a file the source reads, and they match the target's `classes`."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml
from folder_data import image_spec, write_images

from tfgen.cli import main

pytestmark = pytest.mark.slow  # --deep imports Keras


def deep(tmp_path, spec, capsys, monkeypatch) -> tuple[int, str]:
    monkeypatch.chdir(tmp_path)
    Path("shapes.yaml").write_text(yaml.safe_dump(spec, sort_keys=False))
    code = main(["validate", "--deep", "shapes.yaml"])
    return code, capsys.readouterr().err


def test_deep_accepts_a_folder_of_three_classes_and_names_each_problem_of_a_bad_one(tmp_path, capsys, monkeypatch):
    write_images(tmp_path / "data" / "shapes", per_class=2, size=(2, 2))
    spec = image_spec(Path("data/shapes"))
    assert deep(tmp_path, spec, capsys, monkeypatch) == (0, "")
    (tmp_path / "data" / "shapes" / "triangle").mkdir()
    (tmp_path / "data" / "shapes" / "triangle" / "notes.txt").write_text("not an image")
    code, err = deep(tmp_path, spec, capsys, monkeypatch)
    assert code == 2
    assert all(line.startswith("shapes.yaml:") for line in err.splitlines())
    assert [line.split(": ", 1)[1] for line in err.splitlines()] == [
        "data.train.source.directory: `data/shapes/triangle` holds no .png, .jpg, .jpeg, .bmp, .gif file",
        "targets.shape.classes: `data/shapes` has 4 class folders (circle, square, stripes, triangle), not 3",
    ]


@pytest.mark.parametrize(
    "layout, message",
    [
        (None, "data.train.source.directory: no folder `data/shapes` (relative paths start at "),
        (("circle",), "data.train.source.directory: `data/shapes` has 1 class folder(s): it needs one sub-folder"),
    ],
    ids=["missing", "one-class"],
)
def test_deep_refuses_a_missing_folder_and_one_of_a_single_class(tmp_path, capsys, monkeypatch, layout, message):
    if layout:
        write_images(tmp_path / "data" / "shapes", classes=layout, per_class=1, size=(2, 2))
    code, err = deep(tmp_path, image_spec(Path("data/shapes")), capsys, monkeypatch)
    assert code == 2
    assert len(err.splitlines()) == 1 and message in err


def test_deep_checks_a_validation_folder_too(tmp_path, capsys, monkeypatch):
    write_images(tmp_path / "train", per_class=1, size=(2, 2))
    write_images(tmp_path / "held", classes=("circle", "square"), per_class=1, size=(2, 2))
    source = {"type": "image_folder", "directory": str(tmp_path / "held"), "image_size": [8, 8]}
    spec = image_spec(tmp_path / "train", validation={"source": source})
    del spec["data"]["validation_split"], spec["data"]["stratify"]
    code, err = deep(tmp_path, spec, capsys, monkeypatch)
    assert code == 2
    assert f"targets.shape.classes: `{tmp_path / 'held'}` has 2 class folders (circle, square), not 3" in err


def test_deep_compares_the_folders_with_the_class_names_the_target_lists(tmp_path, capsys, monkeypatch):
    write_images(tmp_path / "data" / "shapes", classes=("circle", "square", "blob"), per_class=1, size=(2, 2))
    spec = image_spec(Path("data/shapes"))
    spec["targets"]["shape"]["classes"] = ["circle", "square", "stripes"]
    code, err = deep(tmp_path, spec, capsys, monkeypatch)
    assert code == 2
    assert sorted(line.split(": ", 1)[1] for line in err.splitlines()) == [
        "data.train.source.directory: `data/shapes` has no folder for the class `stripes`",
        "targets.shape.classes: `data/shapes/blob` is not a class listed here",
    ]


def test_deep_refuses_what_the_script_refuses_in_a_class_folder_a_fifo_a_loop_and_a_file_in_two_classes(
    tmp_path, capsys, monkeypatch
):
    import os

    root = tmp_path / "data" / "shapes"
    write_images(root, per_class=2, size=(2, 2))
    spec = image_spec(Path("data/shapes"))
    (root / "circle" / "loop").symlink_to("..")  # not followed: the same files as the script lists
    code, err = deep(tmp_path, spec, capsys, monkeypatch)
    assert code == 0 and err.startswith("warning: data/shapes/circle/loop: a link to a folder"), err
    os.mkfifo(root / "square" / "zz.png")
    code, err = deep(tmp_path, spec, capsys, monkeypatch)
    assert code == 2 and len([line for line in err.splitlines() if line.startswith("shapes.yaml:")]) == 1, err
    assert "data.train.source.directory: data/shapes/square/zz.png: a FIFO (named pipe), not a regular file" in err
    (root / "square" / "zz.png").unlink()
    (root / "square" / "zz.png").symlink_to(root / "circle" / "001.png")
    code, err = deep(tmp_path, spec, capsys, monkeypatch)
    assert code == 2 and "data/shapes/square/zz.png: the same file as one in data/shapes/circle" in err, err
