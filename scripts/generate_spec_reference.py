"""Write docs/spec-reference.md from the spec's pydantic models.

    python scripts/generate_spec_reference.py

Run it after changing a field of `tfgen/spec/models/` or the prose of `tfgen/spec/reference_text.py` (and
regenerate the JSON Schema: `python -m tfgen schema > tfgen.schema.json`);
tests/spec/test_docs.py fails until both are up to date.
"""

from __future__ import annotations

import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
sys.path.insert(0, str(ROOT))

from tfgen.spec.reference import REFERENCE_PATH, spec_reference


def main() -> None:
    path = ROOT / REFERENCE_PATH
    path.write_text(spec_reference())
    print(f"wrote {path.relative_to(ROOT)}")


if __name__ == "__main__":
    main()
