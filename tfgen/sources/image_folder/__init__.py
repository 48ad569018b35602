"""The `image_folder` source: images in one sub-folder per class, decoded and resized as they stream.

Runtime part: `runtime/tfgen_runtime/files.py` (`rt.image_folder`), `class_folders.py` (the
listing) and `image_headers.py` (each image's header before it is decoded).
"""

from __future__ import annotations

from tfgen.sources.image_folder.model import ImageFolderSource
from tfgen.sources.image_folder.rules import rules
from tfgen.sources.unit import Source

DOCS = """
`image_folder` and `text_folder` list their class folders' files once, sorted (hidden files and
folders skipped); `validation_split` and the shuffle work on that list (the whole list, whatever
the buffer: it is listed class by class; with `cache`, the buffer of decoded examples is
`shuffle`'s), and each file is read as it streams: one that cannot be read stops the run naming it.
"""

SOURCE = Source(model=ImageFolderSource, docs=DOCS, rules=rules, folder=True)
