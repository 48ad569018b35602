"""The `csv` source's spec model."""

from __future__ import annotations

from typing import Annotated, Literal

from pydantic import Field, field_validator

from tfgen.spec.models.base import Column, Identifier, StrictModel

CSV_IN_MEMORY_MIB = 64  # larger CSV files stream from the file (see CsvSource)
Columns = Column | Annotated[list[Column], Field(min_length=1)]


class CsvSource(StrictModel):
    """A CSV file with a header row; `x` and `y` name its columns (one column, or a list stacked into a vector
    along the last axis; one entry, or a mapping per input/target)."""

    type: Literal["csv"] = Field(description="a CSV file with a header row", examples=["csv"])
    path: str = Field(
        min_length=1,
        description=f"the CSV file (a relative path starts at the working directory); up to {CSV_IN_MEMORY_MIB} MiB "
        "it is read into memory, a larger one streams from the file (`data.train.in_memory` forces either)",
        examples=["data/houses.csv"],
    )
    x: Columns | dict[Identifier, Columns] = Field(
        description="the column (or list of columns) of the only input, or a mapping `{input: column or columns}`",
        examples=[{"features": ["sqft", "bedrooms", "age"], "city": "city"}],
    )
    y: Columns | dict[Identifier, Columns] = Field(
        description="the column of the only target, or a mapping `{target: column or columns}`",
        examples=["price"],
    )
    delimiter: str = Field(
        ",", min_length=1, max_length=1, description="the one ASCII character between fields", examples=[";"]
    )
    na_values: list[str] = Field(
        [],
        description="values read as missing: NaN in a float column (then refused as any non-finite value is, "
        "naming its row); an error in an integer or string column",
        examples=[["NA", ""]],
    )

    @field_validator("delimiter")
    @classmethod
    def _delimiter(cls, value: str) -> str:
        if value in ('"', "\n", "\r"):
            raise ValueError("a delimiter cannot be a quote or a line break")
        if len(value.encode("utf-8")) != 1:  # tf.io.decode_csv's field_delim is one byte
            raise ValueError(
                f"a delimiter is one ASCII character (TensorFlow's CSV reader splits on one byte); "
                f"{value!r} is {len(value.encode('utf-8'))} bytes in UTF-8"
            )
        return value
