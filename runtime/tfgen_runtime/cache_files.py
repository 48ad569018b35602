"""`cache:` in a pipeline (`cached`): one cache per source for every epoch, and a cache
file kept only for the data it was made of.

tf.data reads a finished cache file (`<file>.index`, `<file>.data-*`) without looking at
the source again: made of other data, it would train on that. A file `<file>.source`
beside it records what it was made of (the spec's STATE_SHA256, and the source's content:
its arrays, its folder's files, or the data files' fingerprints); a cache of anything
else is removed and made again.
"""

import hashlib
import json
import os
import re
from pathlib import Path

import numpy as np

from .caches import once_per_source
from .files import FileExamples
from .run_dir import fingerprints

# The files of a finished tf.data cache at a prefix (the suffixes after it).
CACHE_FILES = re.compile(r"\.index|\.data-\d+-of-\d+")


def cached(ds, source, filename="", spec_state="", data_files=()):
    """`cache: true`: `ds.cache(filename)`, made the first time for `source`.

    `ds` is what the pipeline made of `source` before the cache (it depends on the
    source only, not on the epoch). A file's cache is first checked to be of this
    source and spec (`spec_state`; `data_files`: the files a streamed source reads).
    """

    def make():
        if filename:
            keep_if_same(filename, made_of(source, spec_state, data_files))
        return ds.cache(filename)

    return once_per_source("cache", source, make)


def made_of(source, spec_state, data_files):
    """The sha256 of what a cache of `source` holds: the spec, and the source's content."""
    digest = hashlib.sha256(spec_state.encode())
    if isinstance(source, tuple):  # arrays `({input: x}, {target: y})`
        for part in source:
            for name in sorted(part):
                add_array(digest, name, np.asarray(part[name]))
    elif isinstance(source, FileExamples):
        for path in source.paths.tolist():
            status = os.stat(path)
            digest.update(f"{path}\0{status.st_size}\0{status.st_mtime_ns}\n".encode())
        add_array(digest, "labels", np.asarray(source.labels))
    else:  # a dataset streamed from the spec's files
        found = json.dumps(fingerprints(data_files), sort_keys=True)
        digest.update(found.encode())
    return digest.hexdigest()


def add_array(digest, name, array):
    """Add an array's name, dtype, shape and values to `digest`."""
    digest.update(f"{name}\0{array.dtype}\0{array.shape}\n".encode())
    if array.dtype.kind in "OUS":  # text
        digest.update(repr(array.tolist()).encode())
    else:
        digest.update(np.ascontiguousarray(array).tobytes())


def keep_if_same(filename, key):
    """Remove the cache at `filename` unless `<filename>.source` says it is of `key`; record
    `key` there (tf.data makes the cache again as the first epoch reads the source)."""
    record = Path(f"{filename}.source")
    folder = record.parent
    name = Path(filename).name
    files = []
    if folder.is_dir():
        files = [p for p in folder.iterdir() if is_cache_file(p.name, name)]
    if files and read_key(record) == key:
        return
    for path in files:
        path.unlink()
    if files:
        print(f"{filename}: a cache of other data (or of another spec's): made again")
    folder.mkdir(parents=True, exist_ok=True)
    partial = record.with_name(f"{record.name}.partial")
    partial.write_text(json.dumps({"made_of": key}) + "\n")
    partial.replace(record)


def is_cache_file(found, name):
    """Whether the file name `found` is a part of the finished cache named `name`."""
    return found.startswith(name) and bool(CACHE_FILES.fullmatch(found[len(name) :]))


def read_key(record):
    """The key `record` holds (None: no file, or not one of tfgen's)."""
    try:
        return json.loads(record.read_text())["made_of"]
    except (OSError, ValueError, KeyError, TypeError):
        return None
