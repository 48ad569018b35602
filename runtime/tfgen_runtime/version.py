"""The runtime's version, and the check every generated script runs before anything else.

Only the standard library here: a script imports this module, and checks that it is the
runtime the script was generated for, before TensorFlow is imported. The version changes
whenever the runtime's code does (runtime/CONTRACT records each version's sources).
"""

import sys
from pathlib import Path

__version__ = "0.7.0"


def require_version(wanted, script):
    """Exit (code 2, one line on stderr) unless this runtime is version `wanted`.

    Args:
        wanted: the runtime version the script was generated for.
        script: the script's file name, as the line names it.
    """
    if wanted != __version__:
        print(mismatch(script, wanted, __version__), file=sys.stderr)
        sys.exit(2)


def mismatch(script, wanted, found):
    """The line a script prints when the runtime it imports is not the one it needs."""
    return (
        f"error: {script} needs tfgen-runtime {wanted}, found {found} (in {Path(__file__).parent}):"
        f' pip install "tfgen-runtime=={wanted}"'
    )
