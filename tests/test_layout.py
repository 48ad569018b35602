"""Where a check lives, by its name: a static check (reads the spec only) is `tfgen/spec/<topic>_rules.py`,
a deep one (imports Keras or reads data, `validate --deep`) is `tfgen/check/deep_<topic>.py`; a data
source's own pair is `rules.py` and `deep.py` in its unit, `tfgen/sources/<type>/` (the topic is the folder)."""

from __future__ import annotations

from conftest import ROOT

# tfgen/check's modules that are not one topic's deep check: the command each runs, and shared parts.
CHECK_TOOLS = {"__init__", "deep", "smoke", "modules", "keras_import"}


def _stems(folder: str) -> set[str]:
    return {path.stem for path in (ROOT / "tfgen" / folder).glob("*.py")}


def test_static_checks_are_named_topic_rules():
    named_otherwise = {stem for stem in _stems("spec") if stem.endswith(("_check", "_checks", "_deep"))}
    assert not named_otherwise, "a static check of spec/ is named <topic>_rules.py"


def test_deep_checks_are_named_deep_topic():
    named_otherwise = {stem for stem in _stems("check") - CHECK_TOOLS if not stem.startswith("deep_")}
    assert not named_otherwise, "a deep check of check/ is named deep_<topic>.py"


def test_a_sources_checks_are_its_units_rules_and_deep():
    """In tfgen/sources/, a check is a unit's `rules.py` (static) or `deep.py` (deep), never named otherwise."""
    stems = {path.relative_to(ROOT).as_posix() for path in (ROOT / "tfgen" / "sources").rglob("*.py")}
    named_otherwise = {
        stem for stem in stems if stem.rsplit("/", 1)[-1].removesuffix(".py").endswith(("_rules", "_check", "_checks"))
    }
    named_otherwise |= {stem for stem in stems if stem.rsplit("/", 1)[-1].startswith("deep_")}
    assert not named_otherwise, "a source's checks are its unit's rules.py and deep.py"
