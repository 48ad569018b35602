"""The `image_folder` source's spec model."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import AfterValidator, Field

from tfgen.spec.models.base import StrictModel

IMAGE_EXTENSIONS = ["png", "jpg", "jpeg", "bmp", "gif"]


def _extension(value: str) -> str:
    if not value.isascii() or not value.isalnum():
        raise ValueError(f"an extension is letters and digits without the dot (`png`), found `{value}`")
    return value


Extension = Annotated[str, AfterValidator(_extension)]


# The longest side `image_size` may have: an image of 8192 x 8192 is the most pixels the
# script decodes (tfgen_runtime/image_headers.py: PIXEL_CAP).
IMAGE_SIDE_MOST = 8192


class ImageFolderSource(StrictModel):
    """Images in one sub-folder per class (as `keras.utils.image_dataset_from_directory` reads
    them): the sorted sub-folder names are the classes of the one class target, the images fill
    the one input, decoded and resized as they stream."""

    type: Literal["image_folder"] = Field(description="image files in class sub-folders", examples=["image_folder"])
    directory: str = Field(
        min_length=1,
        description="the folder holding one sub-folder per class (a relative path starts at the working directory)",
        examples=["data/shapes"],
    )
    image_size: list[Annotated[int, Field(ge=1, le=IMAGE_SIDE_MOST)]] = Field(
        min_length=2,
        max_length=2,
        description=(
            "`[height, width]` every image is resized to (at most 8192 a side); "
            "the input's shape is `[height, width, channels]`"
        ),
        examples=[[32, 32]],
    )
    color_mode: Literal["rgb", "grayscale", "rgba"] = Field(
        "rgb", description="the images' channels: rgb 3, grayscale 1, rgba 4", examples=["grayscale"]
    )
    extensions: list[Extension] = Field(
        IMAGE_EXTENSIONS,
        min_length=1,
        description="the file extensions read (any case, no dot); other files are skipped",
        examples=[["png"]],
    )
    interpolation: Literal[
        "bilinear", "nearest", "bicubic", "area", "lanczos3", "lanczos5", "gaussian", "mitchellcubic"
    ] = Field("bilinear", description="how images are resized (`tf.image.resize`'s method)", examples=["nearest"])
    crop_to_aspect_ratio: bool = Field(
        False,
        description="crop each image's centre to the aspect ratio of `image_size` before resizing (no distortion)",
        examples=[True],
    )
