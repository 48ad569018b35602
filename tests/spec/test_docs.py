"""The docs: a spec reference generated from the models and kept fresh, a short README, live links."""

from __future__ import annotations

import re
import shutil
import typing
from pathlib import Path

from conftest import ROOT, tfgen_here
from pydantic import BaseModel, TypeAdapter

from tfgen.spec.models import Spec
from tfgen.spec.models.base import KerasObject, field_types
from tfgen.spec.reference import REFERENCE_PATH, spec_reference

README = ROOT / "README.md"
REFERENCE = ROOT / REFERENCE_PATH
# Written by benchmarks/run.py from its measurements, not by hand.
MEASURED = {"benchmarks.md", "benchmarks-notes.md"}
PAGES = [README, *sorted(page for page in (ROOT / "docs").glob("*.md") if page.name not in MEASURED)]
ROW = re.compile(r"^\| `([^`]+)` \| (.*) \|$", re.MULTILINE)
LINK = re.compile(r"\]\(([^)\s]+)\)")


def reference_rows() -> list[tuple[str, list[str]]]:
    """The reference's field rows: (dotted path, [type, default, example, description])."""
    rows = []
    for path, rest in ROW.findall(REFERENCE.read_text()):
        rows.append((path, [cell.strip() for cell in re.split(r"(?<!\\)\|", rest)]))
    return rows


def reachable_models() -> dict[type, set[str]]:
    """Every model a spec can hold, with the names it documents (Keras objects: the keys tfgen reads)."""
    found: dict[type, set[str]] = {}

    def visit(annotation) -> None:
        for kind in flatten(annotation):
            if not (isinstance(kind, type) and issubclass(kind, BaseModel)) or kind in found:
                continue
            own = kind.reserved if issubclass(kind, KerasObject) else tuple(kind.model_fields)
            found[kind] = set(own)
            for name in own:
                visit(annotation_of(kind, name))

    visit(Spec)
    return found


def annotation_of(model: type[BaseModel], name: str):
    """A field's type with its constraints (`Field(gt=0)`), forward references resolved."""
    hint = typing.get_type_hints(model, include_extras=True)[name]
    metadata = model.model_fields[name].metadata
    return typing.Annotated[(hint, *metadata)] if metadata else hint


def flatten(annotation) -> list:
    """The types inside an annotation: unions, Annotated, list items and mapping values opened."""
    origin = typing.get_origin(annotation)
    if origin is None:
        return [annotation]
    arguments = typing.get_args(annotation)
    if origin is typing.Annotated:
        return flatten(arguments[0])
    if origin is dict:
        return flatten(arguments[1])
    return [kind for argument in arguments for kind in flatten(argument)]


def test_committed_spec_reference_is_what_the_models_give():
    assert REFERENCE.read_text() == spec_reference(), (
        f"{REFERENCE_PATH} is stale: run python scripts/generate_spec_reference.py"
    )


def test_spec_reference_documents_every_field_of_every_model():
    paths = {path for path, _ in reference_rows()}
    for model, names in reachable_models().items():
        if not names:
            continue  # a plain Keras object: its arguments are Keras's
        if model is Spec:
            missing = sorted(name for name in names if name not in paths and not is_section(name))
            assert not missing, f"top-level fields missing from the reference: {missing}"
            continue
        prefixes = {path.rsplit(".", 1)[0] for path in paths if path.rsplit(".", 1)[-1] in names}
        homes = [prefix for prefix in prefixes if all(f"{prefix}.{name}" in paths for name in names)]
        assert homes, f"{model.__name__}: no place in the reference lists all of {sorted(names)}"


def is_section(name: str) -> bool:
    """A top-level field documented as a heading (its own fields are the rows)."""
    kinds = flatten(Spec.model_fields[name].annotation)
    return any(
        isinstance(kind, type) and issubclass(kind, BaseModel) and not issubclass(kind, KerasObject) for kind in kinds
    )


def test_every_path_in_the_reference_is_one_set_accepts():
    for path, _ in reference_rows():
        kinds: list = [Spec]
        for part in path.split("."):
            key: str | int = 0 if part == "<i>" else part
            kinds = field_types(kinds, key)
            assert kinds, f"`{path}`: `{part}` is not a field there"


def test_every_field_has_a_type_a_default_an_example_and_a_description():
    rows = reference_rows()
    assert len(rows) > 100
    for path, cells in rows:
        assert len(cells) == 4 and all(cells), f"`{path}` lacks a cell: {cells}"


def test_every_example_is_a_value_its_field_accepts():
    checked = 0
    for model, names in reachable_models().items():
        for name in sorted(names):
            for example in examples_of(model, name):
                accept(model, name, example)
                checked += 1
    assert checked > 100


def examples_of(model: type[BaseModel], name: str) -> list:
    """A field's examples: from its Field(), or from the schema of a key tfgen reads on a Keras object."""
    if issubclass(model, KerasObject):
        return model.reserved_schema[name].get("examples", [])
    return model.model_fields[name].examples or []


def accept(model: type[BaseModel], name: str, example) -> None:
    """Validate an example as the spec's loader would (strict types)."""
    if issubclass(model, KerasObject):
        model.model_validate({"type": "Dense", name: example})
        return
    TypeAdapter(annotation_of(model, name)).validate_python(example, strict=True)


def test_readme_is_a_front_page_under_25_kb():
    assert len(README.read_bytes()) < 25_000
    readme = README.read_text()
    for heading in ("## Set-up (two commands)", "## Example", "## Commands", "## Documentation"):
        assert heading in readme
    assert "## Spec reference" not in readme and "docs/spec-reference.md" in readme


def test_readme_example_is_the_digits_spec_and_what_build_prints(tmp_path):
    readme = README.read_text()
    spec = (ROOT / "specs" / "digits.yaml").read_text()
    assert f"```yaml\n{spec}```" in readme
    (tmp_path / "specs").mkdir()
    shutil.copy(ROOT / "specs" / "digits.yaml", tmp_path / "specs")
    (tmp_path / "tfgen.schema.json").write_text("{}")
    result = tfgen_here("build", "specs/digits.yaml", cwd=tmp_path)
    assert result.returncode == 0, result.stderr
    assert f"```text\n{result.stdout}```" in readme


def test_links_between_the_pages_resolve():
    for page in PAGES:
        for target in LINK.findall(without_code(page.read_text())):
            if re.match(r"[a-z]+:", target):
                continue  # a web address
            file, _, anchor = target.partition("#")
            linked = (page.parent / file).resolve() if file else page
            assert linked.exists(), f"{page.relative_to(ROOT)}: {target}: no such file"
            if anchor:
                assert anchor in anchors(linked), f"{page.relative_to(ROOT)}: {target}: no such heading"


def without_code(text: str) -> str:
    return re.sub(r"^```.*?^```", "", text, flags=re.MULTILINE | re.DOTALL)


def anchors(page: Path) -> set[str]:
    """The anchors GitHub gives a page's headings."""
    headings = re.findall(r"^#+ (.+)$", without_code(page.read_text()), flags=re.MULTILINE)
    return {re.sub(r"[^\w\- ]", "", heading.lower()).replace(" ", "-") for heading in headings}


def test_docs_describe_pitfalls_not_where_they_were_read():
    words = re.compile(r"seed article|\bissues? \d|/work/|\bnotes/", re.IGNORECASE)
    for page in PAGES:
        found = words.findall(page.read_text())
        assert not found, f"{page.relative_to(ROOT)}: {found}"
    assert REFERENCE in PAGES
