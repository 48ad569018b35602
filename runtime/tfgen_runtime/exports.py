"""A run's exports (`model.keras`, `saved_model/`, `model.tflite`), each written under a
temporary name in its folder and then renamed: a kill leaves the old file or the new one,
never part.
"""

import shutil
import tempfile
import zipfile
from pathlib import Path

import tensorflow as tf
from tensorflow.lite.python.convert_phase import ConverterError  # not in tf.lite's API

from .checkpoint import CORRUPT
from .errors import UserError

NAMES = {"keras": "model.keras", "saved_model": "saved_model", "tflite": "model.tflite"}
# The TFLite export's second file: the same model with dynamic-range quantized weights.
QUANTIZED = "model.quantized.tflite"


def export(model, run, kinds, *, finished=False, best=None):
    """Write the exports `kinds` ("keras", "saved_model", "tflite") of `model` into `run.output`.

    Only the chief writes them. `best` (a `KeepBest`, when the run restores the best
    epoch's weights) is loaded first. A `finished` run (nothing was trained) writes
    only an export that is missing or unreadable, from the checkpoint it restored, and
    says so; when every export reads back, it changes nothing.
    """
    if finished:
        kinds = [kind for kind in kinds if not readable(run.output / NAMES[kind])]
        if not kinds or not run.chief:
            return
        names = " and ".join(NAMES[kind] for kind in kinds)
        are = "is" if len(kinds) == 1 else "are"
        weights = "the best epoch's weights" if best else "the last checkpoint"
        print(f"{names} {are} missing or unreadable: writing again from {weights}")
    if best is not None:
        best.restore()
    if not run.chief:
        return
    for kind in kinds:
        SAVERS[kind](model, run.output / NAMES[kind])


def save_keras(model, path):
    """`model.save(path)`, through a partial file renamed into place."""
    partial = path.with_name(f"{path.stem}.partial.keras")  # Keras wants `.keras`
    model.save(partial)
    partial.replace(path)


def save_saved_model(model, path):
    """`model.export(path)` (a SavedModel folder), through a partial folder renamed into
    place (the one it replaces is removed after)."""
    partial = path.with_name(f"{path.name}.partial")
    shutil.rmtree(partial, ignore_errors=True)
    model.export(str(partial), verbose=False)
    replace_folder(partial, path)


def save_tflite(model, path):
    """`model.tflite` (float32) and `model.quantized.tflite` (dynamic-range quantized
    weights, float inputs and outputs), converted from the model's SavedModel; each
    written as a partial file renamed into place, the quantized one first."""
    with tempfile.TemporaryDirectory(prefix="tfgen-tflite-") as folder:
        served = Path(folder) / "saved_model"
        model.export(str(served), verbose=False)
        quantized = convert(served, quantize=True)
        plain = convert(served, quantize=False)
    for name, content in ((QUANTIZED, quantized), (path.name, plain)):
        partial = path.with_name(f"{name}.partial")
        partial.write_bytes(content)
        partial.replace(path.with_name(name))


def convert(served, *, quantize):
    """The TFLite flatbuffer of the SavedModel folder `served`; a model TFLite's built-in
    ops cannot express is one line naming the first op it lacks."""
    converter = tf.lite.TFLiteConverter.from_saved_model(str(served))
    if quantize:
        converter.optimizations = [tf.lite.Optimize.DEFAULT]
    try:
        return converter.convert()
    except ConverterError as error:
        reason = next(
            (line for line in str(error).splitlines() if "error:" in line), str(error)
        )
        raise UserError(
            f"model.tflite: TFLite cannot convert this model: {reason.strip()[:300]}"
        ) from None


SAVERS = {"keras": save_keras, "saved_model": save_saved_model, "tflite": save_tflite}


def replace_folder(new, path):
    """Rename the folder `new` to `path`; an old `path` becomes `<path>.old` until then
    (the only moment neither is there), and is removed after."""
    old = path.with_name(f"{path.name}.old")
    shutil.rmtree(old, ignore_errors=True)
    if path.exists():
        path.rename(old)
    new.rename(path)
    shutil.rmtree(old, ignore_errors=True)


def readable(path):
    """Whether the export at `path` is whole (a zip that reads back; a SavedModel with
    its graph and a variables index that opens)."""
    if path.suffix == ".keras":
        return keras_readable(path)
    if path.suffix == ".tflite":
        return all(
            tflite_readable(path.with_name(name)) for name in (path.name, QUANTIZED)
        )
    if not (path / "saved_model.pb").is_file():
        return False
    try:
        tf.train.load_checkpoint(str(path / "variables" / "variables"))
    except CORRUPT:
        return False
    return True


def tflite_readable(path):
    """Whether `path` is a regular file holding a TFLite flatbuffer (its identifier
    `TFL3` at bytes 4-8; a partial file is never renamed into place)."""
    if not path.is_file():
        return False
    with path.open("rb") as file:
        head = file.read(8)
    return head[4:8] == b"TFL3"


def keras_readable(path):
    """Whether `path` is a .keras archive whose every member reads back (CRC-checked); not
    when it is no regular file (a FIFO would block the read: it is written again)."""
    if not path.is_file():
        return False
    try:
        with zipfile.ZipFile(path) as archive:
            whole = archive.testzip() is None
            return whole and "config.json" in archive.namelist()
    except (OSError, zipfile.BadZipFile):
        return False
