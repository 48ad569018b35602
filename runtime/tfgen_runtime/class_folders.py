"""A folder source's class folders and their files (`class_files`), each file once and in
one class only.

A class folder may be a link (to a folder elsewhere); inside one, links to folders are
not followed (a link back up the tree, `a/loop -> ..`, would list every class's files
again, as class `a`), and said so. A link to a file is read when it leads to a regular
file; a file reached twice in one class (two links, or a link and the file) is listed
once, under its first path; one reached from two classes, a FIFO, a device, a dangling
link or a file over the size cap is one line naming it. Remote folders (`gs://...`) are
listed with tf.io.gfile (no links there).
"""

import os
import sys

import tensorflow as tf

from .errors import UserError
from .regular_files import MIB, is_remote, require_regular

# The most bytes a file of a folder source may hold (read whole; an image also within
# `image_headers.PIXEL_CAP` pixels).
IMAGE_FILE_CAP = 256 * MIB
TEXT_FILE_CAP = 64 * MIB


def class_files(directory, extensions, cap):
    """{class folder name: its files, sorted}; UserError unless there are two or more
    class folders (hidden ones skipped), each with a file of `extensions`, and every file
    is a regular one of at most `cap` bytes in one class only."""
    if not tf.io.gfile.isdir(directory):
        where = f"relative paths start at {os.getcwd()}"
        fix = "pass --synthetic to train on random data instead"
        raise UserError(f"{directory}: no such folder ({where}); {fix}")
    names = sorted(n.rstrip("/") for n in tf.io.gfile.listdir(directory))
    folders = [n for n in names if is_class_folder(directory, n)]
    if len(folders) < 2:
        found = f"{len(folders)} class folder(s) ({shown(folders)})"
        needs = "it needs one sub-folder per class, two or more"
        raise UserError(f"{directory}: {found}; {needs}")
    files = {}
    for name in folders:
        folder = os.path.join(directory, name)
        files[folder] = files_under(folder, extensions, cap)
        if not files[folder]:
            kinds = ", ".join(f".{e}" for e in extensions)
            raise UserError(f"{folder}: no {kinds} file in it")
    one_class_each(files)
    return {name: list(found.values()) for name, found in zip(folders, files.values())}


def one_class_each(files):
    """UserError naming the first file that is in two class folders (`files`: {folder:
    `files_under` it})."""
    seen = {}  # a file's identity -> the class folder it is in
    for folder, found in files.items():
        for identity, path in found.items():
            first = seen.setdefault(identity, folder)
            if first != folder:
                two = f"the same file as one in {first}"
                raise UserError(f"{path}: {two}; a file belongs to one class only")


def is_class_folder(directory, name):
    """Whether `name` in `directory` is a folder that is not hidden."""
    return not name.startswith(".") and tf.io.gfile.isdir(os.path.join(directory, name))


def files_under(folder, extensions, cap):
    """{identity: path} of the files of `extensions` (any case) under `folder`, by path;
    hidden ones skipped, each file once (its identity: device and inode)."""
    if is_remote(folder):
        return {path: path for path in remote_files_under(folder, extensions)}
    ends = tuple(f".{e.lower()}" for e in extensions)
    paths = []
    for root, folders, names in os.walk(folder):
        folders[:] = [n for n in folders if n[:1] != "." and followed(root, n)]
        paths += [os.path.join(root, n) for n in names if is_wanted(n, ends)]
    found = {}
    for path in sorted(paths):
        found.setdefault(identity_of(path, cap), path)
    return found


def is_wanted(name, ends):
    """Whether the file `name` is one of `ends` (any case), and not hidden."""
    return name.lower().endswith(ends) and name[:1] != "."


def followed(root, name):
    """Whether the folder `name` in `root` is walked: not when it is a link (said so)."""
    path = os.path.join(root, name)
    if not os.path.islink(path):
        return True
    skipped = "a link to a folder inside a class folder is not followed"
    print(f"warning: {path}: {skipped} (its files are not read)", file=sys.stderr)
    return False


def identity_of(path, cap):
    """What makes `path` one file (device, inode), links followed; UserError unless it
    leads to a regular file of at most `cap` bytes."""
    try:
        status = require_regular(path, cap, "file of a folder source")
    except OSError as error:
        why = error.strerror or type(error).__name__
        raise UserError(f"{path}: cannot be read ({why}): a dangling link?") from None
    return status.st_dev, status.st_ino


def remote_files_under(folder, extensions):
    """The files of `extensions` under a remote `folder`, sorted; hidden ones skipped."""
    ends = tuple(f".{e.lower()}" for e in extensions)
    found = []
    for root, folders, names in tf.io.gfile.walk(folder):
        folders[:] = [n for n in folders if not n.startswith(".")]
        found += [os.path.join(root, n) for n in names if is_wanted(n, ends)]
    return sorted(found)


def shown(names, most=5):
    """Up to `most` names, comma-separated."""
    more = f", ... ({len(names)} in all)" if len(names) > most else ""
    return ", ".join(names[:most]) + more
