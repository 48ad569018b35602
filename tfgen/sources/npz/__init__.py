"""The `npz` source: named arrays of a NumPy .npz file.

Runtime part: `runtime/tfgen_runtime/npz_files.py` (`rt.open_npz`); the script's `load_npz` is
this unit's `source.py.jinja`.
"""

from __future__ import annotations

from tfgen.sources.npz.model import NpzSource
from tfgen.sources.npz.rules import rules
from tfgen.sources.unit import Source

DOCS = """
An `npz` file is opened as a zip archive and checked before it is read: a file that is not one,
or an array declaring more bytes than the file holds, is one line naming the file.
"""

SOURCE = Source(
    model=NpzSource,
    docs=DOCS,
    rules=rules,
    in_memory=True,
    example_weights=True,
    weights_in_script=True,
    file_field="path",
    script_imports=("zipfile",),
)
