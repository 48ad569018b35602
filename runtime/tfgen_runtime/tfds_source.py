"""TensorFlow Datasets (the `tfds` extra), streamed in the order TFDS stores them."""

import os

import tensorflow as tf

from .data import element_shapes, named_dataset
from .errors import UserError

EXTRA = 'pip install "tfgen[tfds]"'


def load_tfds(name, split, inputs, targets, data_dir=None, x=None, y=None):
    """A TFDS split as a dataset of `({input: x}, {target: y})` examples.

    `x` and `y` name the features of the inputs and targets (one name, or one per input or
    target); both None: the dataset's supervised `(input, target)` pair. Files are read in
    order (tfgen shuffles, seeded per epoch), and features cast to the declared dtypes.
    """
    tfds = import_tfds()
    where = f"tfds {name} ({split})"
    try:
        # A malformed split fails here, before any download.
        tfds.core.ReadInstruction.from_spec(split)
    except load_errors(tfds) as error:
        raise UserError(f"{where}: {first_line(error)}") from None
    require_folder(data_dir, name, where)
    folder = missing_folder(tfds, name, data_dir)
    try:
        data, info = tfds.load(
            name,
            split=split,
            data_dir=data_dir,
            shuffle_files=False,
            as_supervised=x is None,
            with_info=True,
        )
    except Exception as error:  # any failure to fetch a missing dataset: the line below
        if folder:
            raise UserError(not_downloaded(where, name, folder, error)) from None
        if isinstance(error, load_errors(tfds)):
            raise UserError(f"{where}: {first_line(error)}") from None
        raise
    try:
        return checked(data, info, inputs, targets, x=x, y=y)
    except UserError as error:
        raise UserError(f"{where}: {error}") from None


def checked(data, info, inputs, targets, x=None, y=None):
    """TFDS's elements named, checked against the fields and cast to their dtypes."""
    if x is not None:
        data = data.map(feature_picker(data.element_spec, x, y, inputs, targets))
    data = named_dataset(data, inputs, targets)
    # The shapes, and strings only where the spec declares strings.
    element_shapes(data, inputs, targets, "the split")
    check_classes(info, target_features(info, y, targets), targets)
    return data.map(cast_to(inputs, targets))


def import_tfds():
    """The tensorflow_datasets module, or UserError naming the extra that installs it."""
    try:
        import tensorflow_datasets
    except ImportError as error:
        needs = f"a `tfds` source needs TensorFlow Datasets ({EXTRA})"
        raise UserError(f"{needs}: {error}") from None
    return tensorflow_datasets


def require_folder(data_dir, name, where):
    """UserError when `data_dir` names something that is not a folder."""
    if data_dir is None or not os.path.exists(data_dir) or os.path.isdir(data_dir):
        return
    fix = f"`tfds build {name} --data_dir DIR` makes one"
    raise UserError(f"{where}: data_dir {data_dir} is not a folder of datasets ({fix})")


def missing_folder(tfds, name, data_dir):
    """Where TFDS looks for the dataset when it is not there yet (None: it is there, or the
    name is one `tfds.load` will refuse on its own)."""
    try:
        builder = tfds.builder(name, data_dir=data_dir)
        return None if builder.is_prepared() else builder.data_dir
    except load_errors(tfds):  # a bad name: tfds.load says what is wrong with it
        return None


def not_downloaded(where, name, folder, error):
    """The line for a dataset that is not in its folder and could not be fetched here."""
    why = f"{type(error).__name__}: {first_line(error)}"
    found = f"{where}: not downloaded (looked in {folder}; fetching it failed: {why})"
    way = f"`tfds build {name} --data_dir DIR` on a connected machine (or a run there)"
    return (
        f"{found}: download it with {way}, then copy DIR here and give it as `data_dir`"
    )


def load_errors(tfds):
    """What `tfds.load` raises for a name, split, version, download or data folder that fails."""
    return (
        ValueError,
        AssertionError,
        OSError,
        tf.errors.OpError,
        tfds.download.DownloadError,
    )


def first_line(error):
    """The first line of an exception's message (TFDS lists every dataset after it)."""
    lines = str(error).strip().splitlines()
    return lines[0] if lines else type(error).__name__


def by_name(mapping, fields):
    """`{input or target: feature}` from one feature name or a mapping."""
    if isinstance(mapping, str):
        return {next(iter(fields)): mapping}
    return dict(mapping)


def feature_picker(spec, x, y, inputs, targets):
    """The map from TFDS's feature dicts to `({input: x}, {target: y})`.

    UserError naming a feature the dataset does not have.
    """
    x_features = by_name(x, inputs)
    y_features = by_name(y, targets)
    for feature in [*x_features.values(), *y_features.values()]:
        if feature not in spec:
            raise UserError(f"no feature `{feature}` (it has {sorted(spec)})")

    def pick(example):
        picked_x = {key: example[f] for key, f in x_features.items()}
        picked_y = {key: example[f] for key, f in y_features.items()}
        return picked_x, picked_y

    return pick


def target_features(info, y, targets):
    """`{target: feature name}` of the targets, where the dataset says which feature."""
    if y is not None:
        return by_name(y, targets)
    keys = info.supervised_keys
    if keys and len(keys) == 2 and isinstance(keys[1], str):
        return {next(iter(targets)): keys[1]}
    return {}


def check_classes(info, features, targets):
    """UserError where a class target's count is not its ClassLabel feature's."""
    for key, feature in features.items():
        classes = getattr(info.features[feature], "num_classes", None)
        wanted = targets[key].classes
        if classes is None or wanted is None or classes == wanted:
            continue
        found = f"`{feature}` has {classes} classes"
        raise UserError(f"{found}, targets.{key} has classes: {wanted}")


def cast_to(inputs, targets):
    """The map casting each feature to its input's or target's declared dtype."""

    def cast(x, y):
        x = {key: tf.cast(x[key], field.dtype) for key, field in inputs.items()}
        y = {key: tf.cast(y[key], field.dtype) for key, field in targets.items()}
        return x, y

    return cast
