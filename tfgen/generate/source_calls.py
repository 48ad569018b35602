"""How load_data gets each source's examples: the call that reads it (by source type), and the
line that draws random arrays in its place (by part: a synthetic source, or any under --synthetic)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import replace

from tfgen.generate.views import Keywords, Part, SourceType, SourceView

DRAW_LINES = {
    Part.TRAIN: "train = rt.synthetic_arrays(SYNTHETIC_TRAIN_EXAMPLES, INPUTS, TARGETS, SEED)",
    Part.VALIDATION: "validation = rt.synthetic_arrays(SYNTHETIC_VALIDATION_EXAMPLES, INPUTS, TARGETS, SEED + 1)",
    Part.TEST: "test = rt.synthetic_arrays(SYNTHETIC_TEST_EXAMPLES, INPUTS, TARGETS, SEED + 2)",
}


def keyword_text(keywords: Keywords) -> str:
    """`name=value, ...`, or `**{...}`."""
    named = ", ".join(f"{name}={value}" for name, value in keywords.named.items())
    return named + (f"**{keywords.unpacked}" if keywords.unpacked else "")


def _more(keywords: Keywords | None) -> str:
    """The keyword arguments after the positional ones (none: nothing)."""
    return f", {keyword_text(keywords)}" if keywords is not None else ""


def _npz(s: SourceView, sample_weight: str) -> str:
    return f"load_npz({s.path}, {s.x}, {s.y}{sample_weight})"


# The call that reads a source, given its view and the training examples' weights argument (npz).
READ_CALLS: dict[SourceType, Callable[[SourceView, str], str]] = {
    SourceType.PYTHON: lambda s, _: f"rt.from_function({s.call}, INPUTS, TARGETS, SPEC_DIR{_more(s.kwargs)})",
    SourceType.NPZ: _npz,
    SourceType.KERAS: lambda s, _: f"load_keras_dataset({s.dataset}, {s.split})",
    SourceType.TFRECORD: lambda s, _: f"load_tfrecord({s.path}, {s.features}, {s.compression})",
    SourceType.TFDS: lambda s, _: f"rt.load_tfds({s.dataset}, {s.split}, INPUTS, TARGETS{_more(s.kwargs)})",
    SourceType.CSV: lambda s, _: (
        f"rt.read_csv({s.path}, INPUTS, TARGETS, x={s.x}, y={s.y}"
        + "".join(f", {option}" for option in s.options)
        + ")"
    ),
    SourceType.IMAGE_FOLDER: lambda s, _: f"rt.image_folder({s.path}, INPUTS, TARGETS, {keyword_text(s.kwargs)})",
    SourceType.TEXT_FOLDER: lambda s, _: f"rt.text_folder({s.path}, INPUTS, TARGETS)",
    SourceType.SYNTHETIC: lambda s, _: "",  # drawn, never read
}


def with_calls(view: SourceView, npz_weights: str | None) -> SourceView:
    """The view with its read call and draw line (`npz_weights`: the literal key of the training
    examples' weights in an .npz file, or None)."""
    weights = f", sample_weight={npz_weights}" if npz_weights and view.part is Part.TRAIN else ""
    return replace(view, read_call=READ_CALLS[view.type](view, weights), draw_line=DRAW_LINES[view.part])
