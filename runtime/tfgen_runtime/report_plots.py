"""The run report's PNGs, drawn with matplotlib's object API (no pyplot: no GUI backend,
no global state): a figure's curves per epoch, and a confusion matrix.

matplotlib is imported when a report is drawn, not with this module: where it cannot be
imported, the run still ends (`report_run` says so in one line).
"""

import numpy as np

from .run_report import file_name

COLOURS = [f"C{i}" for i in range(10)]


def new_figure(width, height):
    """A matplotlib Figure of `width` x `height` inches at 100 dpi."""
    from matplotlib.figure import Figure

    return Figure(figsize=(width, height), dpi=100)


def curves(runs, name, images, validation=True):
    """`(path, caption)` of `name`'s PNG: each run's training curve (solid) and validation
    curve (`val_<name>`, dashed) in the run's colour, and its phases' starts (dotted lines).
    """
    from matplotlib.ticker import MaxNLocator

    figure = new_figure(6.4, 4)
    axes = figure.subplots()
    for index, run in enumerate(runs):
        colour = COLOURS[index % len(COLOURS)]
        keys = (
            [(name, "-", "train"), (f"val_{name}", "--", "validation")]
            if validation
            else [(name, "-", "")]
        )
        for key, style, part in keys:
            epochs, values = run.series(key)
            if epochs:
                label = (
                    " ".join(filter(None, [run.label if len(runs) > 1 else "", part]))
                    or name
                )
                axes.plot(epochs, values, style, color=colour, marker=".", label=label)
        for start in run.phase_starts():
            axes.axvline(start - 0.5, color=colour, linestyle=":", linewidth=1)
    axes.xaxis.set_major_locator(MaxNLocator(integer=True))
    axes.set_xlabel("epoch")
    axes.set_ylabel(name)
    axes.set_title(name)
    axes.grid(alpha=0.3)
    axes.legend(fontsize="small")
    path = images / f"{file_name(name)}.png"
    figure.savefig(path, bbox_inches="tight")
    return path, name


def confusion(run, target, images):
    """`(path, caption)` of one run's confusion matrix of `target`: counts coloured, and
    written in each cell; rows are the true classes."""
    entry = run.confusion["targets"][target]
    counts = np.asarray(entry["counts"])
    names = entry["class_names"]
    size = max(3.0, 0.5 * len(names) + 1.5)
    figure = new_figure(size + 1, size)
    axes = figure.subplots()
    shown = axes.imshow(counts, cmap="Blues")
    figure.colorbar(shown, ax=axes)
    ticks = range(len(names))
    axes.set_xticks(ticks, names, rotation=45, ha="right")
    axes.set_yticks(ticks, names)
    axes.set_xlabel("predicted")
    axes.set_ylabel("true")
    middle = counts.max() / 2
    for (row, column), count in np.ndenumerate(counts):
        colour = "white" if count > middle else "black"
        axes.text(
            column,
            row,
            str(count),
            ha="center",
            va="center",
            color=colour,
            fontsize="small",
        )
    split = run.confusion.get("split", "")
    caption = f"{run.label}: {target} ({split} data)"
    axes.set_title(caption)
    path = images / f"confusion_{file_name(run.label)}_{file_name(target)}.png"
    figure.savefig(path, bbox_inches="tight")
    return path, caption
