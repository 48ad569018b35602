"""Lint's precision on published training code: the corpus's sources, their judged findings, the table.

The published files themselves are not committed (they are other projects' code): `SOURCES.tsv` pins
each one (raw URL at a commit, and the sha256 of the code tfgen lints), and `fetch` brings them
into `code/` (ignored by git). Each `NAME.judged` lists every finding lint must make on NAME, judged
`true` or `false` with a one-line reason, and the real pitfalls it misses (`missed`):

    155:16: TFG006 true  map(random_jitter) then cache(): every epoch sees epoch 1's crops
    12:3: TFG004 missed  the pipeline comes from an imported helper the linter cannot read

    python tests/lint/published.py fetch   # download the pinned files (sha256 checked)
    python tests/lint/published.py fetch --clones DIR...   # or read them from local git clones
    python tests/lint/published.py table   # lint them, compare with the judgements, print the table
"""

from __future__ import annotations

import hashlib
import json
import subprocess
import sys
import urllib.request
from dataclasses import dataclass
from pathlib import Path

HERE = Path(__file__).resolve().parent / "corpus" / "published"
CODE = HERE / "code"
VERDICTS = ("true", "false", "missed")


@dataclass(frozen=True)
class Source:
    name: str
    url: str
    sha256: str


@dataclass(frozen=True)
class Judged:
    where: str  # "line:col: CODE", as the .expected files of the corpus write a finding
    verdict: str
    reason: str

    @property
    def code(self) -> str:
        return self.where.split()[-1]


def sources() -> list[Source]:
    rows = (line.split("\t") for line in (HERE / "SOURCES.tsv").read_text().splitlines()[1:] if line.strip())
    return [Source(name, url, sha) for name, url, sha in rows]


def judgements(name: str) -> list[Judged]:
    judged = []
    for line in (HERE / f"{name}.judged").read_text().splitlines():
        if line.strip() and not line.startswith("#"):
            where, _, rest = line.partition(" TFG")
            code, verdict, reason = ("TFG" + rest).split(maxsplit=2)
            assert verdict in VERDICTS, f"{name}.judged: {line!r}: the verdict is one of {VERDICTS}"
            judged.append(Judged(f"{where} {code}", verdict, reason))
    return judged


def notebook_code(text: str) -> str:
    """A notebook's Python code cells, one after another, without shell and magic lines (`!pip`, `%...`)."""
    cells = []
    for cell in json.loads(text)["cells"]:
        source = "".join(cell["source"]).splitlines()
        if cell["cell_type"] == "code" and not _shell_cell(source):
            cells.append("\n".join(line for line in source if not line.lstrip().startswith(("!", "%"))))
    return "\n\n".join(cells) + "\n"


def _shell_cell(lines: list[str]) -> bool:
    """A `%%bash` (or other non-Python) cell magic; `%%writefile` cells hold Python and are kept."""
    first = lines[0].strip() if lines else ""
    return first.startswith("%%") and not first.startswith("%%writefile")


def lintable(url: str, raw: str) -> str:
    """The text tfgen lints: a header line naming the source and its license, then the code."""
    code = notebook_code(raw) if url.endswith(".ipynb") else raw.replace("\r\n", "\n")
    return f"# From {url} (Apache License 2.0); code only\n{code}"


def digest(text: str) -> str:
    return hashlib.sha256(text.encode()).hexdigest()


def _from_clone(source: Source, clones: list[str]) -> str | None:
    """The file at the pinned commit from the first local git clone that has it, else None."""
    commit, path = source.url.split("/", 6)[5:7]
    for clone in clones:
        shown = subprocess.run(["git", "-C", clone, "show", f"{commit}:{path}"], capture_output=True, check=False)
        if shown.returncode == 0:
            return shown.stdout.decode()
    return None


def _download(source: Source) -> str:
    try:
        with urllib.request.urlopen(source.url, timeout=60) as response:
            return response.read().decode()
    except OSError as error:
        raise SystemExit(f"{source.url}: cannot download ({error}); give local clones with --clones") from None


def fetch(clones: list[str]) -> None:
    """Write each pinned file into code/, from a local clone holding its commit or else downloaded."""
    CODE.mkdir(exist_ok=True)
    for source in sources():
        raw = _from_clone(source, clones)
        text = lintable(source.url, raw if raw is not None else _download(source))
        if digest(text) != source.sha256:
            raise SystemExit(f"{source.url}: sha256 {digest(text)}, not the pinned {source.sha256}")
        (CODE / f"{source.name}.py").write_text(text)


def missing() -> list[str]:
    """The names whose code is absent or not the pinned text."""
    absent = []
    for source in sources():
        path = CODE / f"{source.name}.py"
        if not path.is_file() or digest(path.read_text()) != source.sha256:
            absent.append(source.name)
    return absent


def found(name: str) -> list[str]:
    from tfgen.lint import lint_source

    path = CODE / f"{name}.py"
    return [f"{f.line}:{f.column}: {f.code}" for f in lint_source(path.read_text(), str(path))]


def expected(name: str) -> list[str]:
    return sorted((j.where for j in judgements(name) if j.verdict != "missed"), key=_order)


def _order(where: str):
    line, column, code = where.replace(":", " ").split()
    return int(line), int(column), code


def counts() -> dict[str, dict[str, int]]:
    """{code: {true, false, missed}} over the whole corpus's judgements."""
    table: dict[str, dict[str, int]] = {}
    for source in sources():
        for judged in judgements(source.name):
            row = table.setdefault(judged.code, dict.fromkeys(VERDICTS, 0))
            row[judged.verdict] += 1
    return table


def _ratio(part: int, whole: int) -> str:
    return f"{part / whole:.2f}" if whole else "-"


def table() -> str:
    """The markdown table of docs/lint.md: per rule, findings judged true and false, misses, precision, recall."""
    rows = [
        "| Rule | Findings | True | False | Missed | Precision | Recall (known misses) |",
        "|---|---|---|---|---|---|---|",
    ]
    from tfgen.lint import RULES

    total, judged = dict.fromkeys(VERDICTS, 0), counts()
    for code in sorted(RULES):
        row = judged.get(code, dict.fromkeys(VERDICTS, 0))
        rows.append(_row(code, row))
        for verdict in VERDICTS:
            total[verdict] += row[verdict]
    rows.append(_row("all", total))
    return "\n".join(rows)


def _row(label: str, row: dict) -> str:
    made = row["true"] + row["false"]
    cells = [label, made, row["true"], row["false"], row["missed"]]
    cells += [_ratio(row["true"], made), _ratio(row["true"], row["true"] + row["missed"])]
    return "| " + " | ".join(str(c) for c in cells) + " |"


def precision() -> float:
    total = counts().values()
    true, false = sum(r["true"] for r in total), sum(r["false"] for r in total)
    return true / (true + false)


def main(argv: list[str]) -> int:
    if argv[1:2] == ["fetch"] and argv[2:3] in ([], ["--clones"]):
        fetch(argv[3:])
        return 0
    if argv[1:] == ["table"]:
        if missing():
            print(
                f"{len(missing())} of {len(sources())} files not fetched: run `python {argv[0]} fetch`", file=sys.stderr
            )
            return 2
        differ = [s.name for s in sources() if found(s.name) != expected(s.name)]
        print(table())
        print(f"{len(sources())} files; overall precision {precision():.3f}; findings differ from the judged: {differ}")
        return 1 if differ or precision() < 0.95 else 0
    print(__doc__, file=sys.stderr)
    return 2


if __name__ == "__main__":
    sys.exit(main(sys.argv))
