"""Functions that deep-validation cases name (found next to the specs, by the lookup rule)."""


def load_data():
    raise AssertionError("deep validation never calls a data source")


def broken_model(width=8):
    raise ValueError(f"cannot build a model of width {width}: the block needs an even width")
