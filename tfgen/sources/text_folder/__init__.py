"""The `text_folder` source: UTF-8 `.txt` files in one sub-folder per class, one file an example.

Runtime part: `runtime/tfgen_runtime/files.py` (`rt.text_folder`) and `class_folders.py` (the listing).
"""

from __future__ import annotations

from tfgen.sources.text_folder.model import TextFolderSource
from tfgen.sources.text_folder.rules import rules
from tfgen.sources.unit import Source

DOCS = """
A `text_folder` is listed as an `image_folder` is; each `.txt` file is one example of the one
`string` input, read as UTF-8 as it streams.
"""

SOURCE = Source(model=TextFolderSource, docs=DOCS, rules=rules, folder=True)
