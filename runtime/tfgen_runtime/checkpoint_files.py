"""The checkpoints in a run's folder (`checkpoint_paths`): from its state file only when every
path it lists is a `ckpt-N` of the folder's own, else from the folder's files; a forged state
file is rebuilt from them before TensorFlow's manager reads it (`own_state_file`)."""

import re
from pathlib import Path

import tensorflow as tf

from .regular_files import RUN_FILE_CAP, require_regular

# What reading a damaged or foreign checkpoint (or its state file) raises.
CORRUPT = (tf.errors.OpError, ValueError, AssertionError, LookupError, TypeError)


def checkpoint_paths(directory):
    """The checkpoints in `directory`, oldest first.

    Its state file's list, when every path in it is a `ckpt-N` of `directory` with its
    index file; else (lost, garbage, or naming files elsewhere) the folder's own files.
    """
    listed = listed_paths(directory)
    if listed and all(is_own_checkpoint(directory, path) for path in listed):
        return listed
    found = [str(file.with_suffix("")) for file in Path(directory).glob("ckpt-*.index")]
    own = [path for path in found if is_own_checkpoint(directory, path)]
    return sorted(own, key=checkpoint_number)


def listed_paths(directory):
    """The paths the state file of `directory` lists, latest last (empty: none, or unreadable);
    UserError naming the state file when it is not a regular file (a FIFO would block).
    """
    state_file = Path(directory) / "checkpoint"
    if state_file.exists():  # (a dangling link: TensorFlow finds nothing there)
        require_regular(state_file, RUN_FILE_CAP, "checkpoint state file")
    try:
        state = tf.train.get_checkpoint_state(str(directory))
    except CORRUPT:
        state = None
    if not state:
        return []
    listed = list(state.all_model_checkpoint_paths)
    if state.model_checkpoint_path not in listed:  # the manager also reads this one
        listed.append(state.model_checkpoint_path)
    return listed


def is_own_checkpoint(directory, path):
    """Whether `path` is a `ckpt-N` right in `directory` (no link, glob or `..`), with its index."""
    path = Path(path)
    if path.parent != Path(directory) or not is_numbered(path.name):
        return False
    index = path.with_name(path.name + ".index")
    return index.is_file() and not index.is_symlink()


def is_numbered(name):
    """Whether `name` is `ckpt-N`."""
    return re.fullmatch(r"ckpt-[0-9]+", name) is not None


def checkpoint_number(path):
    """The number N of the checkpoint `.../ckpt-N`."""
    return int(Path(path).name.removeprefix("ckpt-"))


def own_state_file(directory):
    """Make the state file of `directory` list its own checkpoints only (rewritten when it
    lists anything else; removed when the folder holds none)."""
    own = checkpoint_paths(directory)
    if listed_paths(directory) == own:
        return
    state_file = Path(directory) / "checkpoint"
    if not own:
        state_file.unlink(missing_ok=True)
        return
    names = [Path(path).name for path in own]  # relative: the folder may move
    # When each was written: the manager prunes only those after the last preserved time.
    times = [Path(path + ".index").stat().st_mtime for path in own]
    tf.compat.v1.train.update_checkpoint_state(
        str(directory),
        names[-1],
        names,
        all_model_checkpoint_timestamps=times,
        last_preserved_timestamp=0.0,
    )
