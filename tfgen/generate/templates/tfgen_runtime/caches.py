"""`cache: true`: one cache per training source, shared by every epoch's pipeline.

A script builds its training pipeline again each epoch (seeded per epoch); a
`Dataset.cache()` made in it would be a new, empty cache each time, and the source
would be read again every epoch.
"""

CACHED = {}  # id(source) -> (source, its cached dataset)


def cached(ds, source, filename=""):
    """`ds.cache(filename)`, made the first time for `source` and reused after.

    `ds` is what the pipeline made of `source` before the cache (it depends on the
    source only, not on the epoch).
    """
    kept = CACHED.get(id(source))
    if kept is None or kept[0] is not source:
        kept = (source, ds.cache(filename))
        CACHED[id(source)] = kept
    return kept[1]
