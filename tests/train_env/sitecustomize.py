"""Run at the start of every Python process the tests start (tests/conftest.py puts this folder
first on PYTHONPATH): the process sees the packages of `pip install "tfgen[train]"`, the
generated scripts' documented install, not IPython or matplotlib, which this checkout may hold
(matplotlib for benchmarks/run.py's plots) and which Keras imports at start-up only when they
are installed, for its notebook and plotting helpers: about 2 s of CPU in every process that
imports TensorFlow. Importing either raises ImportError, as where it is not installed."""

import sys

for name in ("IPython", "matplotlib"):
    sys.modules.setdefault(name, None)
