"""A run's checkpoint (`RunCheckpoint`): what it holds, what run wrote it, and how a
resume finds the newest one that reads back whole."""

import json
import sys
from functools import cached_property

import tensorflow as tf

from .carry import SummedOnFirst
from .checkpoint_files import CORRUPT, checkpoint_paths, own_state_file
from .errors import UserError

IDENTITY_KEY = "identity/.ATTRIBUTES/VARIABLE_VALUE"


class RunCheckpoint:
    """Everything the rest of a run depends on, not just the weights.

    The keys of its `tf.train.Checkpoint` are its keyword arguments' names (and
    `random_state`, `identity`); the optional objects are saved only when given.
    Its `identity` records the spec's hashes, the variables' names and shapes, and
    `run` (set before `restore`: whether the data is --synthetic, the data files'
    fingerprints), so that a checkpoint of another run is refused before anything is
    restored.

    Args:
        model: the keras.Model.
        optimizer: its optimizer (built, so that its slots exist before a restore).
        state: the run's `RunState`.
        train_metrics: dict of history name -> the training metrics (with the epoch
            and step, a resumed epoch goes on with their running values, exactly).
        keep: how many checkpoints to keep.
        adapted: variables of adapted layers kept outside the model, if any.
        augment_random_state: the augmentation layers' random state, if any.
        weighting: the adaptive loss weighting, if any.
        early_stopping: the `EarlyStopping` tracker, if any.
        plateau: the `ReduceOnPlateau` tracker, if any.
        best_weights: the `KeepBest` tracker, if any.
        state_sha256: the spec's sha256 less what a resume may change (STATE_SHA256):
            a checkpoint with another is refused.
    """

    def __init__(
        self,
        *,
        model,
        optimizer,
        state,
        train_metrics,
        keep,
        adapted=None,
        augment_random_state=None,
        weighting=None,
        early_stopping=None,
        plateau=None,
        best_weights=None,
        state_sha256=None,
    ):
        self.state = state
        self.keep = keep
        self.early_stopping = early_stopping
        self.shapes = [(v.path, list(v.shape)) for v in model.variables]
        self.manager = None  # opened by `open`, once the run's directory is known
        self.state_sha256 = state_sha256  # None: written by an older runtime
        optional = {
            "adapted": adapted,
            "augment_random_state": augment_random_state,
            "weighting": weighting,
            "early_stopping": early_stopping,
            "plateau": plateau,
            "best_weights": best_weights,
        }
        given = {key: value for key, value in optional.items() if value is not None}
        self.checkpoint = tf.train.Checkpoint(
            model=model,
            optimizer=optimizer,
            state=state,
            train_metrics=[v for m in train_metrics.values() for v in m.variables],
            random_state=[v for v in model.variables if "seed_gen" in v.path],
            identity=tf.Variable("", dtype=tf.string),  # what wrote it: `identity`
            **given,
        )

    @cached_property
    def summed_on_first(self):
        """The training metrics' summed states, kept on the first replica (SummedOnFirst)."""
        return SummedOnFirst(self.checkpoint.train_metrics)

    def identity(self, spec_sha256, facts):
        """The identity (JSON) of checkpoints of this model written from this spec, by a
        run of these `facts` (its data: synthetic or not, the files' fingerprints)."""
        identity = {"spec_sha256": spec_sha256}
        if self.state_sha256:
            identity["state_sha256"] = self.state_sha256
        identity.update(facts)
        identity["variables"] = self.shapes
        return json.dumps(identity)

    def restore(self, directory, spec_sha256, resume=True, facts=None):
        """Resume from the newest checkpoint in `directory` that reads back whole, if it
        is of this run; return its path (None: nothing restored).

        One of another spec or model is refused before anything is restored; an
        unreadable one is skipped (read in full first: a fallback restores nothing
        partially). `resume=False` restores nothing: the run starts over. `facts` (the
        run's data facts) are part of the identity.
        """
        ours = self.identity(spec_sha256, facts or {})
        self.checkpoint.identity.assign(ours)
        self.restored = None
        paths = checkpoint_paths(directory) if resume else []
        for path in reversed(paths):
            saved = read_or_warn(path)
            if saved is None:
                continue
            theirs = json.loads(saved.get(IDENTITY_KEY, b"{}"))
            refuse_another_run(path, theirs, json.loads(ours))
            self.checkpoint.restore(path).assert_existing_objects_matched()
            self.checkpoint.identity.assign(ours)
            self.summed_on_first.put(saved_metrics(self.checkpoint, saved))
            epoch = self.state.epoch.numpy() + 1
            step = self.state.step_in_epoch.numpy()
            print(f"Resuming from {path} (epoch {epoch}, step {step})")
            self.restored = path
            return path
        return None

    def epoch(self):
        """The last epoch finished (0: none)."""
        return int(self.state.epoch.numpy())

    def stopped_early(self):
        """Whether early stopping has ended the run."""
        return self.early_stopping is not None and self.early_stopping.should_stop

    def open(self, directory):
        """Save into `directory` from now on (keeping the newest `keep`).

        The manager deletes the files of every path its state file lists when it prunes:
        that file first lists only `directory`'s own checkpoints.
        """
        own_state_file(directory)
        manager = tf.train.CheckpointManager(self.checkpoint, str(directory), self.keep)
        self.manager = manager

    def save(self, number):
        """Save a checkpoint numbered `number`; return its path."""
        self.summed_on_first.gather()
        return self.manager.save(checkpoint_number=number)

    def save_in_epoch(self, step):
        """Save at `step` of the epoch under way, numbered by the steps run; its path."""
        self.state.step_in_epoch.assign(step)
        return self.save(int(self.state.steps_run.numpy()))

    @property
    def latest(self):
        """The newest checkpoint's path (None: none yet)."""
        return self.manager.latest_checkpoint


def read_or_warn(path):
    """Every tensor of the checkpoint `path`, or None (warning) when it is unreadable."""
    try:
        return read_whole(path)
    except CORRUPT as error:
        why = f"is unreadable ({type(error).__name__}); trying the one before"
        print(f"warning: {path} {why}", file=sys.stderr)
        return None


def saved_metrics(checkpoint, saved):
    """The values in `saved` (the tensors read from a checkpoint file) of the training
    metrics' variables of `checkpoint`, in order (None: not in it)."""
    key = "train_metrics/{}/.ATTRIBUTES/VARIABLE_VALUE"
    count = len(checkpoint.train_metrics)
    return [saved.get(key.format(number)) for number in range(count)]


def read_whole(path):
    """Every tensor of a checkpoint, read (and so CRC-checked) before anything is restored."""
    reader = tf.train.load_checkpoint(path)
    names = reader.get_variable_to_shape_map()
    return {name: reader.get_tensor(name) for name in names}


def refuse_another_run(path, theirs, ours):
    """Raise UserError naming what differs when a checkpoint is of another run; warn
    when a data file changed since it was written."""
    differences = []
    if state_changed(theirs, ours):
        differences.append("the spec changed since")
    mixed = data_mixed(theirs, ours)
    if mixed:
        differences.append(mixed)
    changed = variable_change(theirs.get("variables", []), ours["variables"])
    if changed:
        differences.append(changed)
    if differences:
        ways = "pass --fresh to discard it, or another --output-dir to keep it"
        found = "; ".join(differences)
        raise UserError(f"{path} is of another run ({found}): {ways}")
    warn_if_data_changed(theirs.get("data"), ours.get("data"))


def state_changed(theirs, ours):
    """Whether the spec changed in what the saved state means (STATE_SHA256).

    A checkpoint written before the state's hash existed compares the whole spec's.
    """
    key = "state_sha256"
    if key not in theirs or key not in ours:
        key = "spec_sha256"
    return theirs.get(key) != ours.get(key)


def data_mixed(theirs, ours):
    """How synthetic and real data would mix (None: they would not)."""
    if theirs.get("synthetic", ours.get("synthetic")) == ours.get("synthetic"):
        return None
    if theirs.get("synthetic"):
        return "it trained on --synthetic data, this run reads the real data"
    return "it trained on the real data, this run is --synthetic"


def warn_if_data_changed(theirs, ours):
    """Warn (one line) naming the data files whose fingerprints changed since `theirs`."""
    if theirs is None or ours is None:
        return
    before = {file["path"]: file for file in theirs}
    now = {file["path"]: file for file in ours}
    paths = sorted(before.keys() | now.keys())
    changed = [path for path in paths if before.get(path) != now.get(path)]
    if changed:
        files = ", ".join(changed)
        goes_on = "training goes on with it as it is now"
        why = f"the data changed since this run started ({files})"
        print(f"warning: {why}: {goes_on}", file=sys.stderr)


def variable_change(theirs, ours):
    """How the variables `(path, shape)` changed (None: they did not).

    Layer names are numbered per process (dense_3): what each variable is and its shape
    are compared, in order, and it is named by its path.
    """
    for (name, was), (other, now) in zip(theirs, ours):
        if (name.rsplit("/")[-1], was) != (other.rsplit("/")[-1], now):
            return f"variable {name} was {tuple(was)}, is {tuple(now)} now"
    if len(theirs) != len(ours):
        return "the model has another number of variables"
    return None
