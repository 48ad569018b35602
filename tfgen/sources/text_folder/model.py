"""The `text_folder` source's spec model."""

from __future__ import annotations

from typing import Literal

from pydantic import Field

from tfgen.spec.models.base import StrictModel


class TextFolderSource(StrictModel):
    """UTF-8 text files (`.txt`) in one sub-folder per class (as
    `keras.utils.text_dataset_from_directory` reads them): one file is one example of the one
    `string` input, its sub-folder's name its class."""

    type: Literal["text_folder"] = Field(description="text files in class sub-folders", examples=["text_folder"])
    directory: str = Field(
        min_length=1,
        description="the folder holding one sub-folder per class (a relative path starts at the working directory)",
        examples=["data/reviews"],
    )
