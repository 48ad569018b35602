"""Print the measures of the generated code (the tests assert the limits).

    python scripts/measure_readability.py

Lines per generated file, `main()` and the longest function, the deepest nesting, and the review
diff of one-value edits and of options turned on (measured exactly as tests/generate/test_readability.py
and tests/spec/test_spec_ux.py measure them: this script calls their helpers).
"""

from __future__ import annotations

import ast
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path[:0] = [str(ROOT), str(ROOT / "tests"), str(ROOT / "tests" / "generate"), str(ROOT / "tests" / "spec")]

from test_readability import GENERATED, functions, lines, nesting
from test_spec_ux import ONE_VALUE_EDITS, OPTIONS_TURNED_ON, _edited, _removed_and_added


def main() -> None:
    print("file                      lines  main  longest function              deepest")
    for path in sorted(GENERATED.glob("*.py")):
        found = dict(functions(ast.parse(path.read_text())))
        size = {name: f.end_lineno - f.lineno + 1 for name, f in found.items()}
        longest = max(size, key=size.get)
        main_lines = size.get("main", "-")
        deepest = max(nesting(f) for f in found.values())
        print(f"{path.name:25s} {lines(path):5d} {main_lines!s:>5}  {longest:24s} {size[longest]:3d}  {deepest:7d}")
    print("\nreview diff of the script (besides the sha256 line): removed / added")
    with tempfile.TemporaryDirectory() as folder:
        for name, edit in {**ONE_VALUE_EDITS, **OPTIONS_TURNED_ON}.items():
            removed, added = _removed_and_added(Path(folder), _edited(edit))
            print(f"  {name:32s} -{len(removed)} / +{len(added)}")


if __name__ == "__main__":
    main()
