"""The `keras` source: a `keras.datasets` dataset, downloaded and cached by Keras.

Runtime part: `runtime/tfgen_runtime/data.py` (`rt.checked_arrays`); the script's
`load_keras_dataset` is this unit's `source.py.jinja`.
"""

from __future__ import annotations

from tfgen.sources.keras.model import KerasSource
from tfgen.sources.unit import Source

DOCS = """
`keras` datasets are downloaded by Keras on first use; the tests use `--synthetic` instead.
"""

SOURCE = Source(model=KerasSource, docs=DOCS, in_memory=True)
