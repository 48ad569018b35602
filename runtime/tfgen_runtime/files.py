"""Folder sources (`image_folder`, `text_folder`): one sub-folder per class, its files listed
once and sorted, split as a list, then read and decoded in tf.data as they stream."""

import os
from collections import namedtuple

import numpy as np
import tensorflow as tf

from .caches import as_dataset
from .class_folders import (
    IMAGE_FILE_CAP,
    TEXT_FILE_CAP,
    class_files,
    files_under,
    shown,
)
from .data import first_rows, split_arrays
from .errors import UserError
from .image_headers import declared_sizes, is_jpeg, is_oversized, jpeg_size, oversized

CHANNELS = {"grayscale": 1, "rgb": 3, "rgba": 4}
IMAGE_EXTENSIONS = ("png", "jpg", "jpeg", "bmp", "gif")
# What a file that fails says (`cli.is_data_check` looks for FAILED).
FAILED = "cannot be read as"
IMAGE_FAILED = f"{FAILED} an image (png, jpeg, gif or bmp)"
TEXT_FAILED = f"{FAILED} UTF-8 text"

# How a folder's files become examples: the input and the target they fill, the input's
# shape and dtype, `read(path)` (in the graph: the example, and why it is refused or ""),
# what a file that fails is, and the most bytes a file may hold. With `declare` (images),
# the files' bytes are read first, `declare(bytes)` reads what a batch of them declares,
# and `read(bytes, declared)` makes each file's example (see `FileExamples.decoded`).
Reading = namedtuple(
    "Reading", "input target shape dtype read failed cap declare", defaults=(None,)
)
# The files whose headers `declare` reads at once.
DECLARED_TOGETHER = 64


class FileExamples:
    """A folder source's examples: files, their class ids, and how a file is read.

    Attributes:
        paths: the files (a str array), by class name then path.
        labels: each file's class id, in the target's dtype.
        names: the class names, by id.
        reading: a `Reading`.
    """

    def __init__(self, paths, labels, names, reading):
        self.paths = paths
        self.labels = labels
        self.names = names
        self.reading = reading

    def __len__(self):
        return len(self.paths)

    def rows(self, rows):
        """The examples at `rows` (indices, or a slice)."""
        paths = self.paths[rows]
        labels = self.labels[rows]
        return FileExamples(paths, labels, self.names, self.reading)

    def pairs(self):
        """The (path, label) pairs in order, still to be read (see `decoded`)."""
        return tf.data.Dataset.from_tensor_slices((self.paths, self.labels))

    def dataset(self):
        """The examples as `({input: x}, {target: y})`, read in order."""
        return self.decoded(self.pairs())

    def decoded(self, pairs):
        """`pairs` read in parallel, in order, as `({input: x}, {target: y})`.

        A file that fails is dropped by tf.data (`ignore_errors`); the pairs, zipped with
        what was read, find the gap and stop the run naming that file. A file read whole
        that is refused (an image over the pixel cap) stops it naming the file and why.
        """
        reading = self.reading
        if reading.declare is None:

            def read(path, label):
                x, refused = reading.read(path)
                return path, x, label, refused

            done = pairs.map(read, num_parallel_calls=tf.data.AUTOTUNE).ignore_errors()
        else:
            done = self.declared_then_read(pairs)
        empty = tf.zeros(reading.shape, reading.dtype)
        after = (tf.constant(""), empty, tf.zeros((), self.labels.dtype), "")
        ends = tf.data.Dataset.from_tensors(after).repeat()  # a gap at the end, too
        both = tf.data.Dataset.zip(pairs, done.concatenate(ends))
        return both.map(self.named, num_parallel_calls=tf.data.AUTOTUNE)

    def declared_then_read(self, pairs):
        """`(path, x, label, refused)` of the files of `pairs` whose reading has `declare`:
        each file's bytes read in parallel, what their headers declare read a batch of
        files at a time (a few ops per batch, not per file), then each file made an
        example in parallel. A file that fails to be read, or to decode, is dropped."""
        reading = self.reading

        def load(path, label):
            return path, tf.io.read_file(path), label

        def declare(paths, data, labels):
            return paths, data, labels, reading.declare(data)

        def read(path, data, label, declared):
            x, refused = reading.read(data, declared)
            return path, x, label, refused

        parallel = tf.data.AUTOTUNE
        loaded = pairs.map(load, num_parallel_calls=parallel).ignore_errors()
        declared = loaded.batch(DECLARED_TOGETHER).map(declare).unbatch()
        return declared.map(read, num_parallel_calls=parallel).ignore_errors()

    def named(self, pair, done):
        """The example read for `pair`, or an error naming its file when it was not."""
        path, x, y, refused = done
        failed = tf.strings.join([pair[0], ": ", self.reading.failed])
        tf.debugging.Assert(tf.equal(pair[0], path), [failed])
        why = tf.strings.join([path, ": ", FAILED, " ", refused])
        tf.debugging.Assert(tf.equal(refused, ""), [why])
        return {self.reading.input: x}, {self.reading.target: y}


def image_folder(
    directory,
    inputs,
    targets,
    image_size,
    color_mode="rgb",
    extensions=IMAGE_EXTENSIONS,
    interpolation="bilinear",
    crop_to_aspect_ratio=False,
    labelled=True,
):
    """The images in `directory`'s class sub-folders, resized to `image_size`, as the one
    input's dtype (uint8 pixels 0-255, cast; no rescaling), labelled by their folder
    (`labelled=False`: every image under `directory`, new data to predict on)."""
    field = next(iter(inputs.values()))
    shape = (*image_size, CHANNELS[color_mode])
    read = image_reader(shape, field.dtype, interpolation, crop_to_aspect_ratio)
    one_input, target = names_of(inputs, targets)
    reading = Reading(
        one_input,
        target,
        shape,
        field.dtype,
        read,
        IMAGE_FAILED,
        IMAGE_FILE_CAP,
        declared_sizes,
    )
    return listed_folder(directory, extensions, targets, reading, labelled)


def image_reader(shape, dtype, interpolation, crop_to_aspect_ratio):
    """`read(data, declared)`: a file's image of `shape` and `dtype`, decoded and resized
    (or zeros and the reason, for one whose declared size is over the cap: refused before
    it is decoded, so never in memory), from its bytes and its header's size."""
    size = shape[:2]

    def decode(data):
        image = tf.io.decode_image(data, channels=shape[2], expand_animations=False)
        if crop_to_aspect_ratio:
            image = centre_crop(image, size)
        image = tf.image.resize(image, size, method=interpolation)
        image.set_shape(shape)
        return pixels(image, dtype)

    def read(
        data, declared
    ):  # a JPEG's size is read here: its frame header is further in
        declared = tf.cond(is_jpeg(data), lambda: jpeg_size(data), lambda: declared)
        refuse = is_oversized(declared)
        image = tf.cond(refuse, lambda: tf.zeros(shape, dtype), lambda: decode(data))
        return image, tf.cond(refuse, lambda: oversized(declared), lambda: "")

    return read


def text_folder(directory, inputs, targets, labelled=True):
    """The `.txt` files in `directory`'s class sub-folders, one text each (UTF-8)
    (`labelled=False`: every `.txt` file under `directory`, new data to predict on)."""

    def read(path):
        text = tf.io.read_file(path)
        kept = tf.strings.unicode_transcode(text, "UTF-8", "UTF-8", errors="ignore")
        tf.debugging.Assert(tf.equal(kept, text), ["not UTF-8"])  # dropped: named after
        return text, tf.constant("")

    one_input, target = names_of(inputs, targets)
    reading = Reading(
        one_input, target, (), tf.string, read, TEXT_FAILED, TEXT_FILE_CAP
    )
    return listed_folder(directory, ("txt",), targets, reading, labelled)


def names_of(inputs, targets):
    """The names of the one input and the one target."""
    return next(iter(inputs)), next(iter(targets))


def centre_crop(image, size):
    """The centre of `image` with the aspect ratio of `size` (as Keras's smart_resize)."""
    height = tf.shape(image)[0]
    width = tf.shape(image)[1]
    crop_height = tf.cast(tf.cast(width * size[0], "float32") / size[1], "int32")
    crop_width = tf.cast(tf.cast(height * size[1], "float32") / size[0], "int32")
    crop_height = tf.minimum(height, crop_height)
    crop_width = tf.minimum(width, crop_width)
    top = tf.cast(tf.cast(height - crop_height, "float32") / 2, "int32")
    left = tf.cast(tf.cast(width - crop_width, "float32") / 2, "int32")
    return tf.image.crop_to_bounding_box(image, top, left, crop_height, crop_width)


def pixels(image, dtype):
    """A resized image in `dtype`: uint8 rounded and clipped to 0-255, floats cast."""
    if dtype == "uint8" and image.dtype != tf.uint8:
        image = tf.clip_by_value(tf.round(image), 0, 255)
    return tf.cast(image, dtype)


def listed_folder(directory, extensions, targets, reading, labelled=True):
    """The folder's files and class ids; UserError for a missing folder, fewer than two
    class folders, an empty one, or classes unlike the target's. Not `labelled`: every
    file under the folder (class id 0), sorted."""
    if not labelled:
        return unlabelled_files(directory, extensions, targets, reading)
    found = class_files(directory, extensions, reading.cap)
    field = targets[reading.target]
    names = class_names_of(found, field, directory)
    paths = []
    labels = []
    for name, files in found.items():
        paths += files
        labels += [names.index(name)] * len(files)
    kinds = "images" if reading.failed == IMAGE_FAILED else "text files"
    print(f"{directory}: {len(paths)} {kinds} in {len(names)} classes")
    labels = np.array(labels).astype(field.dtype)
    return FileExamples(np.array(paths), labels, names, reading)


def unlabelled_files(directory, extensions, targets, reading):
    """Every file of `extensions` under `directory` (new data), by path; UserError for a
    missing folder or one without such a file."""
    if not tf.io.gfile.isdir(directory):
        raise UserError(f"{directory}: no such folder")
    paths = list(files_under(directory, extensions, reading.cap).values())
    if not paths:
        kinds = ", ".join(f".{e}" for e in extensions)
        raise UserError(f"{directory}: no {kinds} file in it")
    dtype = targets[reading.target].dtype
    return FileExamples(np.array(paths), np.zeros(len(paths), dtype), (), reading)


def class_names_of(found, field, directory):
    """The class names by id: those the target lists, else the sorted folder names (as
    many as its `classes`); UserError naming a folder or class that does not match."""
    folders = list(found)
    listed = field.names
    if listed:
        unknown = [name for name in folders if name not in listed]
        if unknown:
            extra = os.path.join(directory, unknown[0])
            raise UserError(f"{extra}: not a class the target lists ({shown(listed)})")
        missing = [name for name in listed if name not in folders]
        if missing:
            raise UserError(f"{directory}: no folder for the class `{missing[0]}`")
        return tuple(listed)
    if len(folders) != field.classes:
        found = f"{len(folders)} class folders ({shown(folders)})"
        declared = f"the target has classes: {field.classes}"
        raise UserError(f"{directory}: {found}; {declared}")
    return tuple(folders)


def class_names(data, targets):
    """{target: [names]} of the class targets whose names are known: listed in the spec,
    or given by a folder source (the same folders for training and validation)."""
    known = {}
    for key, field in targets.items():
        if field.names:
            known[key] = list(field.names)
    for part in data:
        if not isinstance(part, FileExamples):
            continue
        key = part.reading.target
        names = known.setdefault(key, list(part.names))
        if names != list(part.names):
            differ = f"{shown(part.names)}, not {shown(names)}"
            raise UserError(f"the validation folder's classes are {differ}")
    return known


def listed(data):
    """A folder source's (path, label) pairs, still to be read (see `decoded`); other data
    (arrays, or --synthetic's) as a dataset."""
    if isinstance(data, FileExamples):
        return data.pairs()
    return as_dataset(data)


def shuffle_buffer(data, buffer):
    """`buffer`, or for a folder source's pairs the whole list: it is listed class by
    class, so a smaller buffer would give batches of one class (and paths are small)."""
    if isinstance(data, FileExamples):
        return max(buffer, len(data))
    return buffer


def decoded(dataset, data):
    """`dataset` (of `listed(data)`) read in parallel when `data` is a folder source's."""
    if isinstance(data, FileExamples):
        return data.decoded(dataset)
    return dataset


def split_files(data, fraction, seed, stratify=False):
    """`split_arrays` of a folder source's file list: the rows it holds out of arrays of
    these labels (other data: `split_arrays`)."""
    if not isinstance(data, FileExamples):
        return split_arrays(data, fraction, seed, stratify=stratify)
    rows = ({"rows": np.arange(len(data))}, {"labels": data.labels})
    kept, held = split_arrays(rows, fraction, seed, stratify=stratify)
    return [data.rows(kept[0]["rows"]), data.rows(held[0]["rows"])]


def first_examples(part, n):
    """The first `n` examples of a folder source's files, or of arrays or a dataset."""
    if isinstance(part, FileExamples):
        return part.rows(slice(n))
    return first_rows(part, n)
