"""How the script lists an `image_folder` source: `rt.image_folder(directory, ..., image_size=..., <changed options>)`."""

from __future__ import annotations

from tfgen.generate.code import keywords, literal
from tfgen.generate.source_plan import keyword_text
from tfgen.generate.views import Part, SourceView
from tfgen.sources.image_folder.model import ImageFolderSource

# The image options the script passes when the spec changes them (`image_size` always).
IMAGE_OPTIONS = ("color_mode", "extensions", "interpolation", "crop_to_aspect_ratio")


def view(source: ImageFolderSource, part: Part, spec=None) -> SourceView:
    defaults = ImageFolderSource.model_fields
    options = {"image_size": tuple(source.image_size)}
    for name in IMAGE_OPTIONS:
        value = getattr(source, name)
        if value != defaults[name].default:
            options[name] = tuple(value) if isinstance(value, list) else value
    return SourceView("image_folder", part, path=literal(source.directory), kwargs=keywords(options))


def read_call(s: SourceView, weights: str) -> str:
    return f"rt.image_folder({s.path}, INPUTS, TARGETS, {keyword_text(s.kwargs)})"


def description(source: ImageFolderSource) -> str:
    return f"images in the class folders of `{source.directory}`"
