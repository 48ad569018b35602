"""`validate --deep` of the folder sources (`image_folder`, `text_folder`): the folder exists, has
two or more class folders, each holding a file the source reads, and they match the target's
`classes` (their count, or the names it lists). The files are listed by the script's own code
(`tfgen_runtime/class_folders.py`): a FIFO, a device, a dangling link, a file over the size cap or
in two classes is refused here as the script refuses it. Reads listings and file types, never a file."""

from __future__ import annotations

import os
from collections.abc import Iterator

from tfgen.check.modules import runtime_module
from tfgen.errors import SpecIssue
from tfgen.spec.loader import Loc, Located
from tfgen.spec.models import Spec


def folder_issues(doc: Located, spec: Spec, loc: Loc, source, ends: tuple[str, ...], cap: str) -> list[SpecIssue]:
    """The problems of a folder source's folder (`ends`: the file extensions it reads; `cap`: the
    runtime's size cap of its files, a name in class_folders.py)."""
    return list(_folder(doc, spec, loc, source, ends, cap))


def _folder(doc: Located, spec: Spec, loc: Loc, source, ends: tuple[str, ...], cap_name: str) -> Iterator[SpecIssue]:
    import tensorflow as tf  # --deep has imported it already (with Keras); gfile reads gs:// too

    directory = source.directory
    where = (*loc, "directory")
    if not tf.io.gfile.isdir(directory):
        yield doc.issue(where, f"no folder `{directory}` (relative paths start at {os.getcwd()})")
        return
    names = sorted(name.rstrip("/") for name in tf.io.gfile.listdir(directory))
    folders = [name for name in names if _is_class_folder(tf, directory, name)]
    if len(folders) < 2:
        yield doc.issue(
            where, f"`{directory}` has {len(folders)} class folder(s): it needs one sub-folder per class, two or more"
        )
        return
    listing = runtime_module("class_folders")
    cap = getattr(listing, cap_name)
    files = {}
    try:
        for name in folders:
            folder = os.path.join(directory, name)
            files[folder] = listing.files_under(folder, [end[1:] for end in ends], cap)
            if not files[folder]:
                yield doc.issue(where, f"`{folder}` holds no {', '.join(ends)} file")
        listing.one_class_each(files)
    except runtime_module("errors").UserError as error:
        yield doc.issue(where, str(error))
    target_name, target = next(iter(spec.targets.items()))
    yield from _classes(doc, ("targets", target_name, "classes"), where, directory, folders, target)


def _classes(doc: Located, loc: Loc, where: Loc, directory: str, folders: list[str], target) -> Iterator[SpecIssue]:
    """The class folders against the target's `classes`: a count, or the names it lists."""
    listed = target.class_names
    if listed is None:
        if len(folders) != target.class_count:
            found = f"{len(folders)} class folders ({_shown(folders)})"
            yield doc.issue(loc, f"`{directory}` has {found}, not {target.class_count}")
        return
    for name in folders:
        if name not in listed:
            yield doc.issue(loc, f"`{os.path.join(directory, name)}` is not a class listed here")
    for name in listed:
        if name not in folders:
            yield doc.issue(where, f"`{directory}` has no folder for the class `{name}`")


def _is_class_folder(tf, directory: str, name: str) -> bool:
    return not name.startswith(".") and tf.io.gfile.isdir(os.path.join(directory, name))


def _shown(names: list[str], most: int = 5) -> str:
    more = f", ... ({len(names)} in all)" if len(names) > most else ""
    return ", ".join(names[:most]) + more
