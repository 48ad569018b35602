"""The `synthetic` source: random data of the declared input and target shapes.

Runtime part: `runtime/tfgen_runtime/data.py` (`rt.synthetic_arrays`, also what `--synthetic`
draws for any source).
"""

from __future__ import annotations

from tfgen.sources.synthetic.model import SyntheticSource
from tfgen.sources.unit import Source

DOCS = """
A `synthetic` source draws `examples` random examples of the declared shapes and dtypes (seeded),
as `--synthetic` does in place of any source.
"""

SOURCE = Source(model=SyntheticSource, docs=DOCS, in_memory=True, drawn=True)
