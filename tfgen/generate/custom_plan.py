"""Planning the user's own objects (`type: "module:Name"`): which function of the script binds
which reference, by `rt.function` (the lookup, place and trust rule of builders and `python` sources),
where it is used; nothing of it is emitted for a spec that names none."""

from __future__ import annotations

from typing import Any

from tfgen.generate.code import literal
from tfgen.generate.views import Binding, CustomView
from tfgen.spec.custom_objects import PLACES, is_custom, local_name, references_in, spec_objects
from tfgen.spec.loader import dotted
from tfgen.spec.models import Spec
from tfgen.spec.models.model import Residual

# The top-level names a script with custom losses defines or imports besides the others.
CUSTOM_NAMES = frozenset(["functools", "build_losses"])


def custom_view(spec: Spec) -> CustomView:
    objects = spec_objects(spec)
    bindings = {
        part: [_binding(part, ref, place, located) for _, ref, place in references_in(located, PLACES[part])]
        for part, located in objects.items()
    }
    return CustomView(**bindings, losses_code="build_losses()" if bindings["losses"] else "LOSSES")


def _binding(part: str, reference: str, place: str | None, located: list[tuple[tuple, Any]]) -> Binding:
    found = f"{literal(reference)}, SPEC_DIR, {literal(place)}"
    if part == "losses":
        return Binding(local_name(reference), f"rt.function({found})")
    places = tuple(dotted(loc) for loc, used in uses(located) if used == reference)
    return Binding(local_name(reference), f"rt.own_object({found}, {literal(places)})")


def uses(located: list[tuple[tuple, Any]]) -> list[tuple[tuple, str]]:
    """(location, reference) of every use of a custom reference among located Keras objects,
    in the order the script constructs them (a nested object before the one it is given to)."""
    found = []
    for loc, item in located:
        if isinstance(item, Residual):
            found += uses([((*loc, "residual", i), layer) for i, layer in enumerate(item.residual)])
            continue
        name, args = (item.get("type"), item) if isinstance(item, dict) else (item.type, item.args)
        nested = [((*loc, k), v) for k, v in args.items() if k != "type" and isinstance(v, dict) and "type" in v]
        found += uses(nested)
        if is_custom(name):
            found.append((loc, name))
    return found
