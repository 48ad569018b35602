"""Planning the folder sources (`image_folder`, `text_folder`): how the script lists them."""

from __future__ import annotations

from tfgen.generate.code import keywords, literal
from tfgen.generate.views import Part, SourceType, SourceView
from tfgen.spec.models.data import ImageFolderSource

# The image options the script passes when the spec changes them (`image_size` always).
IMAGE_OPTIONS = ("color_mode", "extensions", "interpolation", "crop_to_aspect_ratio")


def folder_source(source, part: Part) -> SourceView:
    """`rt.image_folder(directory, ..., image_size=..., <changed options>)` or `rt.text_folder(directory, ...)`."""
    kind = SourceType(source.type)
    if kind is SourceType.TEXT_FOLDER:
        return SourceView(kind, part, path=literal(source.directory))
    defaults = ImageFolderSource.model_fields
    options = {"image_size": tuple(source.image_size)}
    for name in IMAGE_OPTIONS:
        value = getattr(source, name)
        if value != defaults[name].default:
            options[name] = tuple(value) if isinstance(value, list) else value
    return SourceView(kind, part, path=literal(source.directory), kwargs=keywords(options))


def folder_description(source) -> str:
    """The script's docstring line of a folder source."""
    what = "images" if source.type == "image_folder" else "text files"
    return f"{what} in the class folders of `{source.directory}`"
