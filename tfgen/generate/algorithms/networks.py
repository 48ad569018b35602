"""What the scripts of the algorithms of several networks (`gan`, `custom`) share: the view
`nets` that templates/algorithms/_networks, _metrics and _epochs lay out (each network's builder
and optimizer, the history's names, the exports, the epoch's extras)."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from tfgen.generate.algorithms.gan import NetworkView


@dataclass(frozen=True)
class NetworksView:
    networks: list[NetworkView]  # in the spec's order (a gan's: generator, discriminator)
    history: list[str]  # the training history's figures, each a keras.metrics.Mean
    exported: str  # the files export writes, as its docstring says them
    trained: str  # what main trains, as its docstring says it
    writes_samples: bool  # end_epoch calls write_samples (the template defines it)


def networks_view(networks: list[NetworkView], history: list[str], writes_samples: bool = False) -> NetworksView:
    """The shared view of `networks` (each's NetworkView, in the script's order)."""
    trained = "both networks" if len(networks) == 2 else "every network"
    return NetworksView(
        networks=networks,
        history=history,
        exported=spoken([f"{network.name}.keras" for network in networks]),
        trained=trained,
        writes_samples=writes_samples,
    )


def spoken(items: list[str]) -> str:
    """`a`, `a and b`, `a, b and c`."""
    return items[0] if len(items) == 1 else f"{', '.join(items[:-1])} and {items[-1]}"
