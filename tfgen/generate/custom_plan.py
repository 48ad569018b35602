"""Planning the user's own objects (`type: "module:Name"`): which function of the script binds
which reference, by `rt.function` (the lookup, place and trust rule of builders and `python` sources),
where it is used; nothing of it is emitted for a spec that names none."""

from __future__ import annotations

from dataclasses import dataclass

from tfgen.generate.code import literal
from tfgen.spec.custom_objects import PLACES, local_name, references_in, spec_objects
from tfgen.spec.models import Spec

# The top-level names a script with custom losses defines or imports besides the others.
CUSTOM_NAMES = frozenset(["functools", "build_losses"])


@dataclass(frozen=True)
class Binding:
    """`name = rt.function(reference, SPEC_DIR, place)` at the top of the function that uses it."""

    name: str
    reference: str  # a Python literal
    place: str  # the kind of Keras object it must be (`layers`, `losses`, ...: rt.imports)


@dataclass(frozen=True)
class CustomView:
    """The bindings of each script function that builds Keras objects."""

    model: list[Binding]
    preprocess: list[Binding]
    augment: list[Binding]
    losses: list[Binding]  # any: the losses are made by `build_losses()` (once), not at import
    metrics: list[Binding]
    optimizer: list[Binding]

    @property
    def losses_code(self) -> str:
        """What the script's code reads the losses from."""
        return "build_losses()" if self.losses else "LOSSES"


def custom_view(spec: Spec) -> CustomView:
    objects = spec_objects(spec)
    bindings = {
        part: [Binding(local_name(ref), literal(ref), place) for _, ref, place in references_in(located, PLACES[part])]
        for part, located in objects.items()
    }
    return CustomView(**bindings)
