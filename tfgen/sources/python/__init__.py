"""The `python` source: a function returning `(x, y)` arrays, or a tf.data.Dataset of examples.

Runtime part: `runtime/tfgen_runtime/data.py` (`rt.from_function`).
"""

from __future__ import annotations

from tfgen.sources.python.model import PythonSource
from tfgen.sources.python.rules import rules
from tfgen.sources.unit import Source

DOCS = """
**What a `python` source must do for exact resume** (a rerun after a kill continues
bit-identically): return the same examples in the same order on every call and every iteration,
unbatched (one example per element), and leave shuffling to tfgen (`data.train.shuffle`, seeded
per epoch). tfgen checks what it can see: a function that returns one array, or a tuple that is
not an `(x, y)` pair, is one line naming what it returned; a Dataset whose elements are batches,
or of the wrong shape, is one line naming the input or target; a Dataset whose first elements
differ between two iterations (it shuffles or draws at random itself) is a warning at start;
Keras's folder loaders (`keras.utils.image_dataset_from_directory`, `text_dataset_from_directory`,
`audio_dataset_from_directory`) called directly are validation errors unless given
`shuffle: false` and `batch_size: null`, and their own `validation_split`/`subset` (which holds
out whole classes when not shuffling) is refused; `data.validation_split` on a Dataset is an error
(at build time for those loaders, at start otherwise): give the held-out examples as
`data.validation`.
"""

SOURCE = Source(
    model=PythonSource,
    docs=DOCS,
    rules=rules,
    in_memory=True,
    function_field="function",
    arguments_field="kwargs",
)
