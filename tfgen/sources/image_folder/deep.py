"""`validate --deep` of an `image_folder` source's class folders (tfgen/sources/folders/deep.py)."""

from __future__ import annotations

from tfgen.errors import SpecIssue
from tfgen.sources.folders.deep import folder_issues
from tfgen.spec.loader import Loc, Located
from tfgen.spec.models import Spec


def deep(doc: Located, spec: Spec, loc: Loc, source) -> list[SpecIssue]:
    ends = tuple(f".{extension.lower()}" for extension in source.extensions)
    return folder_issues(doc, spec, loc, source, ends, "IMAGE_FILE_CAP")
