"""Write the example data sets that specs/shapes.yaml, houses.yaml and reviews.yaml train on.

    python data/make_examples.py [--out data]

- `shapes/{circle,square,stripes}/NNNN.png`: 32x32 RGB images, one shape each, drawn at a random
  position and size in a random bright colour on a noisy background of a random dark one;
- `houses.csv`: `sqft,bedrooms,age,city,price`, the price a noisy linear function of the numbers
  plus an offset per city;
- `reviews/{neg,pos}/NNNN.txt` and `reviews.csv` (`text,label`, the same reviews in a shuffled
  order): short film reviews made from templates, each class's opinion words mixed with neutral ones.

The files are the same bytes on every run and machine: numpy's legacy `RandomState` (whose stream
is frozen across numpy versions), integer geometry, plain arithmetic, and PNGs written here with
stored (uncompressed) deflate blocks, so no zlib version changes them. It writes only the files
named above, over any that exist (tests/test_example_data.py checks that the committed files are
what it writes). No TensorFlow needed.
"""

from __future__ import annotations

import argparse
import csv
import struct
import zlib
from pathlib import Path

import numpy as np

SEED = 23
SIZE = 32  # image height and width
IMAGES_PER_SHAPE = 150
HOUSES = 2000
REVIEWS_PER_CLASS = 400

# --- PNG ------------------------------------------------------------------------------------------


def png_bytes(pixels: np.ndarray) -> bytes:
    """An 8-bit RGB PNG of `pixels` (height, width, 3 uint8)."""
    height, width, _ = pixels.shape
    rows = b"".join(b"\x00" + pixels[row].tobytes() for row in range(height))  # filter 0 per row
    header = struct.pack(">IIBBBBB", width, height, 8, 2, 0, 0, 0)  # 8 bits, RGB, no interlace
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", stored_zlib(rows)) + chunk(b"IEND", b"")


def chunk(kind: bytes, data: bytes) -> bytes:
    return struct.pack(">I", len(data)) + kind + data + struct.pack(">I", zlib.crc32(kind + data))


def stored_zlib(data: bytes) -> bytes:
    """A zlib stream of `data` in stored deflate blocks: the same bytes under any zlib."""
    limit = 65535
    blocks = [data[start : start + limit] for start in range(0, len(data), limit)]
    stream = bytearray(b"\x78\x01")
    for number, block in enumerate(blocks):
        final = 1 if number == len(blocks) - 1 else 0
        stream += bytes([final]) + struct.pack("<HH", len(block), len(block) ^ 0xFFFF) + block
    return bytes(stream + struct.pack(">I", zlib.adler32(data)))


def draw(rng: np.random.RandomState, low: int, high: int, size: int | None = None):
    """Integers in [low, high) as int64 everywhere (the default integer differs by platform, and with it the stream)."""
    return rng.randint(low, high, size=size, dtype=np.int64)


# --- shapes ---------------------------------------------------------------------------------------


def colours(rng: np.random.RandomState) -> tuple[np.ndarray, np.ndarray]:
    """A dark background colour and a bright shape colour, each channel drawn on its own."""
    return draw(rng, 0, 100, size=3), draw(rng, 150, 256, size=3)


def shape_mask(kind: str, rng: np.random.RandomState) -> np.ndarray:
    """Where the shape is: a filled circle, a filled square, or a square patch of stripes."""
    rows, columns = np.mgrid[0:SIZE, 0:SIZE]
    if kind == "circle":
        radius = draw(rng, 7, 13)
        row, column = draw(rng, radius, SIZE - radius, size=2)
        return (rows - row) ** 2 + (columns - column) ** 2 < radius * (radius + 1)  # no lone pixel at the edges
    side = draw(rng, 12, 23) if kind == "square" else draw(rng, 14, 25)
    top, left = draw(rng, 0, SIZE - side + 1, size=2)
    inside = (rows >= top) & (rows < top + side) & (columns >= left) & (columns < left + side)
    if kind == "square":
        return inside
    along = [rows, columns, rows + columns][draw(rng, 0, 3)]  # horizontal, vertical or diagonal
    return inside & (along % 4 < 2)


def shape_image(kind: str, rng: np.random.RandomState) -> np.ndarray:
    background, colour = colours(rng)
    mask = shape_mask(kind, rng)
    image = np.where(mask[..., None], colour, background)
    noise = draw(rng, -16, 17, size=(SIZE, SIZE, 3))
    return np.clip(image + noise, 0, 255).astype(np.uint8)


def write_shapes(out: Path, rng: np.random.RandomState) -> None:
    for kind in ("circle", "square", "stripes"):
        folder = out / "shapes" / kind
        folder.mkdir(parents=True, exist_ok=True)
        for number in range(IMAGES_PER_SHAPE):
            (folder / f"{number:04d}.png").write_bytes(png_bytes(shape_image(kind, rng)))


# --- houses ---------------------------------------------------------------------------------------

CITY_OFFSETS = {
    "Springfield": 0,
    "Riverton": -35_000,
    "Lakeside": 60_000,
    "Hillcrest": 90_000,
    "Fairview": 25_000,
    "Oakdale": -60_000,
}


def house_rows(rng: np.random.RandomState) -> list[list]:
    """Rows of `sqft, bedrooms, age, city, price`; the noise a sum of uniforms (no log or exp)."""
    cities = list(CITY_OFFSETS)
    rows = []
    for _ in range(HOUSES):
        sqft = int(draw(rng, 500, 3501))
        bedrooms = int(min(6, max(1, sqft // 600 + draw(rng, -1, 2))))
        age = int(draw(rng, 0, 81))
        city = cities[draw(rng, 0, len(cities))]
        noise = float(rng.random_sample(4).sum() - 2.0) * 60_000  # about 35,000 standard deviation
        price = 120_000 + 150 * sqft + 12_000 * bedrooms - 600 * age + CITY_OFFSETS[city] + noise
        rows.append([sqft, bedrooms, age, city, round(price / 100) * 100])
    return rows


def write_houses(out: Path, rng: np.random.RandomState) -> None:
    with open(out / "houses.csv", "w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file, lineterminator="\n")
        writer.writerow(["sqft", "bedrooms", "age", "city", "price"])
        writer.writerows(house_rows(rng))


# --- reviews --------------------------------------------------------------------------------------

OPINIONS = {
    "pos": [
        "wonderful", "brilliant", "moving", "delightful", "superb", "charming", "funny", "clever",
        "beautiful", "gripping", "touching", "excellent", "fresh", "warm", "memorable", "stunning",
    ],
    "neg": [
        "boring", "dull", "awful", "terrible", "clumsy", "tedious", "predictable", "weak",
        "bland", "messy", "lifeless", "silly", "forgettable", "painful", "flat", "annoying",
    ],
}  # fmt: skip
VERDICTS = {
    "pos": ["I would watch it again.", "Highly recommended.", "A real treat.", "Worth every minute."],
    "neg": ["I would not watch it again.", "Not recommended.", "A waste of an evening.", "Skip this one."],
}
SUBJECTS = [
    "film", "plot", "acting", "ending", "script", "cast", "story", "music", "dialogue",
    "camera work", "lead actor", "pacing", "soundtrack", "second half", "opening scene",
]  # fmt: skip
TEMPLATES = [
    "The {subject} was {opinion}.",
    "I thought the {subject} was {opinion}.",
    "What a {opinion} {subject}.",
    "The {subject} felt {opinion} from start to finish.",
    "Honestly, the {subject} is {opinion}.",
    "My friends found the {subject} {opinion}, and so did I.",
]


def review(label: str, rng: np.random.RandomState) -> str:
    """Two or three sentences of the label's opinion, sometimes one of the other's, and a verdict."""
    other = "neg" if label == "pos" else "pos"
    sentences = []
    for _ in range(draw(rng, 2, 4)):
        sentiment = other if rng.random_sample() < 0.15 else label
        template = TEMPLATES[draw(rng, 0, len(TEMPLATES))]
        opinion = OPINIONS[sentiment][draw(rng, 0, len(OPINIONS[sentiment]))]
        sentences.append(template.format(subject=SUBJECTS[draw(rng, 0, len(SUBJECTS))], opinion=opinion))
    if rng.random_sample() < 0.5:
        sentences.append(VERDICTS[label][draw(rng, 0, len(VERDICTS[label]))])
    return " ".join(sentences)


def write_reviews(out: Path, rng: np.random.RandomState) -> None:
    rows = []
    for label in ("neg", "pos"):
        folder = out / "reviews" / label
        folder.mkdir(parents=True, exist_ok=True)
        for number in range(REVIEWS_PER_CLASS):
            text = review(label, rng)
            (folder / f"{number:04d}.txt").write_text(text + "\n", encoding="utf-8")
            rows.append([text, label])
    order = rng.permutation(len(rows))
    with open(out / "reviews.csv", "w", newline="", encoding="utf-8") as file:
        writer = csv.writer(file, lineterminator="\n")
        writer.writerow(["text", "label"])
        writer.writerows(rows[index] for index in order)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", type=Path, default=Path(__file__).resolve().parent, help="default: data/")
    out = parser.parse_args().out
    out.mkdir(parents=True, exist_ok=True)
    # One stream per data set: changing one leaves the others' bytes as they are.
    write_shapes(out, np.random.RandomState(SEED))
    write_houses(out, np.random.RandomState(SEED + 1))
    write_reviews(out, np.random.RandomState(SEED + 2))
    print(f"wrote {out / 'shapes'}, {out / 'houses.csv'}, {out / 'reviews'} and {out / 'reviews.csv'}")


if __name__ == "__main__":
    main()
