"""The runtime's contract: one version (the runtime's, the generator's and the `train` extra's
pin agree), its code recorded per version in runtime/CONTRACT (a change without a new version
fails here), and scripts that use its public API (`__all__`) and nothing else."""

from __future__ import annotations

import ast
import hashlib
import re
import subprocess
import sys

import pytest
from conftest import ROOT, base_spec, build

from tfgen.generate.runtime import RUNTIME_VERSION

RUNTIME = ROOT / "runtime" / "tfgen_runtime"
CONTRACT = ROOT / "runtime" / "CONTRACT"


def runtime_sha256() -> str:
    """The sha256 of the runtime's sources: each module's name and bytes, in name order."""
    digest = hashlib.sha256()
    for path in sorted(RUNTIME.glob("*.py")):
        digest.update(path.name.encode() + b"\0" + path.read_bytes() + b"\0")
    return digest.hexdigest()


def recorded() -> dict[str, str]:
    """runtime/CONTRACT: version -> the sha256 of its sources."""
    lines = [line.split() for line in CONTRACT.read_text().splitlines() if line and not line.startswith("#")]
    return {version: sha for version, sha in lines}


def runtime_version() -> str:
    (version,) = re.findall(r'^__version__ = "([^"]+)"$', (RUNTIME / "version.py").read_text(), re.MULTILINE)
    return version


def test_the_runtime_the_generator_and_the_train_extra_name_one_version():
    assert runtime_version() == RUNTIME_VERSION
    assert f'train = ["tfgen-runtime=={RUNTIME_VERSION}"]' in (ROOT / "pyproject.toml").read_text()
    assert 'path = "tfgen_runtime/version.py"' in (ROOT / "runtime" / "pyproject.toml").read_text()


def test_the_runtimes_code_changes_only_with_its_version():
    """A change to runtime/tfgen_runtime/ needs a new version (docs/layout.md: how to bump)."""
    versions = recorded()
    line = f"{runtime_version()} {runtime_sha256()}"
    assert runtime_version() in versions, f"runtime/CONTRACT has no line for this version: add `{line}`"
    assert versions[runtime_version()] == runtime_sha256(), (
        f"the runtime's code changed but its version ({runtime_version()}) did not: bump it in "
        f"runtime/tfgen_runtime/version.py, tfgen/generate/runtime.py and pyproject.toml, then add `{line}`"
    )
    assert len(set(versions.values())) == len(versions)  # one code, one version


def test_all_is_the_lazy_packages_names_and_the_version_check():
    """`__all__` lists what `tfgen_runtime.<name>` gives: each public name of a module, imported
    on first use, and the version check (read from the source: importing it is the next test's)."""
    tree = ast.parse((RUNTIME / "__init__.py").read_text())
    values = {
        n.targets[0].id: ast.literal_eval(n.value)
        for n in tree.body
        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) in ("PUBLIC", "__all__")
    }
    modules = {path.stem for path in RUNTIME.glob("*.py")}
    assert set(values["PUBLIC"]) <= modules
    public = [name for names in values["PUBLIC"].values() for name in names]
    assert sorted(values["__all__"]) == sorted([*public, "__version__", "require_version"])
    assert len(public) == len(set(public))


def test_the_version_check_imports_no_tensorflow(tmp_path):
    probe = subprocess.run(
        [
            sys.executable,
            "-I",  # the installed runtime: not one a folder or PYTHONPATH of another test puts first
            "-c",
            "import sys, tfgen_runtime.version; print(sorted(set(sys.modules) & {'tensorflow', 'keras', 'numpy'}))",
        ],
        capture_output=True,
        text=True,
        check=True,
        cwd=tmp_path,
    )
    assert probe.stdout == "[]\n"


def rt_names(text: str) -> list[str]:
    """Every `rt.<name>` a script's code uses."""
    return [
        node.attr
        for node in ast.walk(ast.parse(text))
        if isinstance(node, ast.Attribute) and isinstance(node.value, ast.Name) and node.value.id == "rt"
    ]


def runtime_imports(text: str) -> list[str]:
    """How a script imports the runtime: `import tfgen_runtime as rt` and `from ... import ...`."""
    found = []
    for node in sorted(ast.walk(ast.parse(text)), key=lambda n: getattr(n, "lineno", 0)):
        if isinstance(node, ast.Import):
            found += [f"import {a.name} as {a.asname}" for a in node.names if a.name.startswith("tfgen_runtime")]
        if isinstance(node, ast.ImportFrom) and (node.module or "").startswith("tfgen_runtime"):
            found += [f"from {node.module} import {a.name}" for a in node.names]
    return found


def public_names() -> set[str]:
    tree = ast.parse((RUNTIME / "__init__.py").read_text())
    (names,) = [
        ast.literal_eval(n.value)
        for n in tree.body
        if isinstance(n, ast.Assign) and getattr(n.targets[0], "id", None) == "__all__"
    ]
    return set(names)


def test_scripts_use_the_runtimes_public_names_only(tmp_path):
    """Every generated script, and a folder source's (`rt.split_files`): each `rt.<name>` is in
    `__all__` (so neither `rt._private` nor `rt.module.name`), and the runtime is imported as
    `rt` plus the version check."""
    folder = base_spec()
    folder["data"] = {
        "train": {"source": {"type": "image_folder", "directory": "data", "image_size": [8, 6]}, "batch_size": 8},
        "validation_split": 0.25,
    }
    folder["model"]["inputs"] = {"image": {"shape": [8, 6, 3], "dtype": "uint8"}}
    folder["model"]["layers"] = [{"type": "Flatten"}]
    scripts = {path.name: path.read_text() for path in (ROOT / "generated").glob("*.py")}
    scripts["folder.py"] = build(tmp_path, folder, "folder").read_text()
    used = {name for text in scripts.values() for name in rt_names(text)}
    assert "split_files" in used and "split_arrays" in used  # the planner's `split_function`, both ways
    assert used <= public_names(), sorted(used - public_names())
    for name, text in scripts.items():
        assert runtime_imports(text) == [
            "from tfgen_runtime.version import require_version",
            "import tfgen_runtime as rt",
        ], name


def test_the_runtime_passes_a_users_stock_ruff(tmp_path):
    """What --vendor writes into a user's repository: clean under ruff's defaults."""
    (tmp_path / "pyproject.toml").write_text("")  # no configuration found above
    result = subprocess.run(
        [sys.executable, "-m", "ruff", "check", "--isolated", "--no-cache", str(RUNTIME)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stdout + result.stderr


@pytest.mark.slow  # imports every module of the runtime (TensorFlow) in a process
def test_a_public_name_is_never_hidden_by_a_module_of_the_same_name():
    """`rt.class_weights` is the function even once the module `class_weights` is imported
    (importing a module binds it on its package): every name of `__all__`, after every module."""
    probe = (
        "import pkgutil, importlib, types, tfgen_runtime as rt\n"
        "for info in pkgutil.iter_modules(rt.__path__):\n"
        "    importlib.import_module(f'tfgen_runtime.{info.name}')\n"
        "print([name for name in rt.__all__ if isinstance(getattr(rt, name), types.ModuleType)])\n"
    )
    result = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, check=False)
    assert result.stdout == "[]\n", result.stdout + result.stderr[-2000:]
