"""The `tfrecord` source: tf.train.Example records, parsed by the feature description.

Runtime part: `runtime/tfgen_runtime/tfrecords.py` (`rt.checked_tfrecords`); the script's
`load_tfrecord` is this unit's `source.py.jinja`.
"""

from __future__ import annotations

from tfgen.sources.tfrecord.model import TFRecordFeature, TFRecordSource
from tfgen.sources.tfrecord.rules import rules
from tfgen.sources.unit import Source

__all__ = ["SOURCE", "TFRecordFeature", "TFRecordSource"]

DOCS = """
`tfrecord` records are parsed 256 at a time (about 3x faster than one by one), then one example
per element again.
"""

SOURCE = Source(model=TFRecordSource, docs=DOCS, rules=rules, file_shards=True, file_field="files")
