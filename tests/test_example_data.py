"""The example data under data/ is exactly what data/make_examples.py writes, and is what the
example specs expect of it: the class folders, the CSV headers, the counts, a few MB at most."""

from __future__ import annotations

import csv
import struct
import subprocess
import sys

from conftest import ROOT

DATA = ROOT / "data"
SCRIPT = DATA / "make_examples.py"
WRITTEN = ("shapes", "reviews", "houses.csv", "reviews.csv")


def files_under(folder):
    """{relative path: bytes} of the files the script writes, under `folder`."""
    found = {}
    for name in WRITTEN:
        path = folder / name
        paths = sorted(p for p in path.rglob("*") if p.is_file()) if path.is_dir() else [path]
        found.update({p.relative_to(folder).as_posix(): p.read_bytes() for p in paths if p.exists()})
    return found


def test_running_the_script_again_writes_the_committed_files_byte_for_byte(tmp_path):
    result = subprocess.run(
        [sys.executable, str(SCRIPT), "--out", str(tmp_path)], capture_output=True, text=True, timeout=120, check=False
    )
    assert result.returncode == 0, result.stderr
    fresh, committed = files_under(tmp_path), files_under(DATA)
    assert sorted(fresh) == sorted(committed)
    assert [name for name in fresh if fresh[name] != committed[name]] == []


def test_the_images_are_150_32x32_rgb_pngs_per_class():
    classes = sorted(path.name for path in (DATA / "shapes").iterdir())
    assert classes == ["circle", "square", "stripes"]
    for name in classes:
        images = sorted((DATA / "shapes" / name).iterdir())
        assert len(images) == 150
        for image in images:
            head = image.read_bytes()[:26]
            assert head[:8] == b"\x89PNG\r\n\x1a\n" and head[12:16] == b"IHDR"
            assert struct.unpack(">IIBB", head[16:26]) == (32, 32, 8, 2)  # width, height, 8 bits, RGB


def test_houses_csv_has_its_header_2000_rows_and_six_cities():
    with open(DATA / "houses.csv", newline="") as file:
        rows = list(csv.reader(file))
    assert rows[0] == ["sqft", "bedrooms", "age", "city", "price"]
    assert len(rows) == 2001 and all(len(row) == 5 for row in rows)
    assert len({row[3] for row in rows[1:]}) == 6
    assert all(float(value) >= 0 for row in rows[1:] for value in (row[0], row[1], row[2], row[4]))


def test_the_reviews_are_400_per_class_in_folders_and_the_same_in_the_csv():
    folders = {label: sorted((DATA / "reviews" / label).glob("*.txt")) for label in ("neg", "pos")}
    assert {label: len(files) for label, files in folders.items()} == {"neg": 400, "pos": 400}
    texts = sorted(
        (path.read_text(encoding="utf-8").strip(), label) for label, files in folders.items() for path in files
    )
    with open(DATA / "reviews.csv", newline="", encoding="utf-8") as file:
        rows = list(csv.reader(file))
    assert rows[0] == ["text", "label"]
    assert sorted((text, label) for text, label in rows[1:]) == texts


def test_the_example_data_is_under_3_mb():
    assert sum(len(data) for data in files_under(DATA).values()) < 3_000_000
