"""How the script lists a `text_folder` source: `rt.text_folder(directory, ...)`."""

from __future__ import annotations

from tfgen.generate.code import literal
from tfgen.generate.views import Part, SourceView
from tfgen.sources.text_folder.model import TextFolderSource


def view(source: TextFolderSource, part: Part, spec=None) -> SourceView:
    return SourceView("text_folder", part, path=literal(source.directory))


def read_call(s: SourceView, weights: str) -> str:
    return f"rt.text_folder({s.path}, INPUTS, TARGETS)"


def description(source: TextFolderSource) -> str:
    return f"text files in the class folders of `{source.directory}`"
