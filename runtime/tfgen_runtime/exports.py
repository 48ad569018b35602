"""A run's exports (`model.keras`, `saved_model/`), each written under a temporary name
in its folder and then renamed: a kill leaves the old file or the new one, never part.
"""

import shutil
import zipfile

import tensorflow as tf

from .checkpoint import CORRUPT

NAMES = {"keras": "model.keras", "saved_model": "saved_model"}


def export(model, run, kinds, *, finished=False, best=None):
    """Write the exports `kinds` ("keras", "saved_model") of `model` into `run.output`.

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
        if kind == "keras":
            save_keras(model, run.output / NAMES[kind])
        else:
            save_saved_model(model, run.output / NAMES[kind])


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
    if not (path / "saved_model.pb").is_file():
        return False
    try:
        tf.train.load_checkpoint(str(path / "variables" / "variables"))
    except CORRUPT:
        return False
    return True


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
