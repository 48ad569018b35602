"""The `csv` source: a CSV file with a header row, read into memory or streamed.

Runtime part: `runtime/tfgen_runtime/csv_files.py` (`rt.read_csv`) and `csv_rows.py` (the rows'
checks); `held_out.py` holds out a streamed file's rows.
"""

from __future__ import annotations

from tfgen.sources.csv.model import CsvSource
from tfgen.sources.csv.rules import rules
from tfgen.sources.unit import Source

DOCS = """
**A `csv` file** is read the same way in memory and streamed (TensorFlow's CSV parser: quoted
fields may hold the delimiter and `""`, not a line break; a row is a line, numbered as the file's
lines, the header being row 1). Every row is checked before the first step, streamed or not: a
missing column, a ragged row, a value that is not a number of its column's dtype (`3.5` for an
integer, `300` for `uint8`), an empty or missing value where none may be and an unknown label are
one line naming the file, the row and the column. Unshuffled, a file read into memory and one
streamed train to the same history; shuffled, they differ (the in-memory order is a seeded
permutation, a stream's a seeded shuffle buffer), each resuming exactly. `validation_split` and
`test_split` hold out the same rows of a streamed file as of one read into memory, by the seeded
order of its row count (a streamed part keeps the file's order).
"""

SOURCE = Source(
    model=CsvSource,
    docs=DOCS,
    rules=rules,
    in_memory=True,
    rows_held_out=True,
    example_weights=True,
    file_field="path",
)
