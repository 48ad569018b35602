"""Turn a located YAML document into a validated Spec, or a SpecError listing every problem."""

from __future__ import annotations

import typing
from typing import Any

from pydantic import BaseModel, TypeAdapter, ValidationError

from tfgen.errors import SpecError, SpecIssue
from tfgen.spec import catalog
from tfgen.spec.algorithm_rules import ONE_MODEL, algorithm_issues, supervised_issues
from tfgen.spec.application_rules import application_issues, is_application_item
from tfgen.spec.custom_objects import check_arguments, clashes, is_custom, reference_problem
from tfgen.spec.finetune_rules import finetune_issues
from tfgen.spec.loader import Loc, Located, dotted, walk
from tfgen.spec.models import Spec
from tfgen.spec.models.base import LayerSpec, field_types
from tfgen.spec.models.training import LossSpec

KERAS_PLACES = (
    # (path pattern, kind); "*" matches any key or index.
    (("model", "branches", "*", "*"), "layers"),
    (("model", "layers", "*"), "layers"),
    (("model", "outputs", "*", "*"), "layers"),
    (("data", "train", "preprocess", "*"), "layers"),
    (("data", "train", "augment", "*"), "layers"),
    (("losses", "*"), "losses"),
    (("metrics", "*", "*"), "metrics"),
    (("optimizer",), "optimizers"),
    (("networks", "*", "branches", "*", "*"), "layers"),
    (("networks", "*", "layers", "*"), "layers"),
    (("networks", "*", "outputs", "*", "*"), "layers"),
    (("optimizers", "*"), "optimizers"),
    (("algorithm", "views", "*"), "layers"),
    (("algorithm", "projection", "*"), "layers"),
    (("algorithm", "predictor", "*"), "layers"),
)
# Keys of a Keras object that tfgen reads itself (not constructor arguments), per kind.
RESERVED_KEYS = {"losses": LossSpec.reserved, "layers": LayerSpec.reserved}
# Arguments tfgen sets itself, per kind, with the reason given to the user.
OWNED_ARGUMENTS = {
    "losses": {
        "reduction": "tfgen builds losses with `reduction=None` and averages them over the global "
        "batch; remove `reduction`",
    },
}


def validate(doc: Located) -> Spec:
    """Validate a spec document; raise SpecError with every problem found, in file order."""
    from tfgen.spec.crosscheck import cross_check

    keras_issues = list(_keras_issues(doc))
    broken = {issue.field.split(".")[0] for issue in keras_issues}  # sections with bad Keras names
    try:
        spec = Spec.model_validate(doc.data)
    except ValidationError as exc:
        issues = keras_issues + [_pydantic_issue(doc, error) for error in exc.errors()]
        partial, valid = _valid_sections(doc.data, broken)
        if _supervised(partial, valid):
            issues.extend(supervised_issues(partial, doc))
            issues.extend(cross_check(partial, doc, valid))
            issues.extend(finetune_issues(partial, doc, valid))
        raise SpecError(issues) from None
    valid = {name for name in Spec.model_fields if getattr(spec, name) is not None} - broken
    issues = keras_issues + algorithm_issues(spec, doc)
    if _supervised(spec, valid):  # the other algorithms' rules are theirs (algorithm_rules)
        issues += list(cross_check(spec, doc, valid)) + list(finetune_issues(spec, doc, valid))
    if issues:
        raise SpecError(issues)
    return spec


def _supervised(spec: Spec, valid: set[str]) -> bool:
    """Whether the spec is (or, partly valid, reads as) one of a single model, as the default
    algorithm's (algorithm_rules.ONE_MODEL)."""
    return "algorithm" in valid and spec.algorithm.type in ONE_MODEL and spec.networks is None


def _valid_sections(data: dict, broken: set[str]) -> tuple[Spec, set[str]]:
    """A partial Spec of the top-level sections that validate on their own, and their names
    (a section left out that defaults to nothing is not one)."""
    sections: dict[str, Any] = {}
    for name, field in Spec.model_fields.items():
        if name in broken:
            continue
        if name in data:
            try:
                sections[name] = TypeAdapter(field.annotation).validate_python(data[name])
            except ValidationError:
                continue
        elif not field.is_required() and field.get_default(call_default_factory=True) is not None:
            sections[name] = field.get_default(call_default_factory=True)
    return Spec.model_construct(**sections), set(sections)


# --- pydantic errors -> located issues -------------------------------------------------------


def _data_loc(doc: Located, loc: tuple, keep_missing_last: bool) -> Loc:
    """Drop the union-member segments pydantic adds, keeping the path into the YAML data."""
    out: list[Any] = []
    node = doc.data
    for i, part in enumerate(loc):
        last = i == len(loc) - 1
        if (isinstance(node, dict) and part in node) or (
            isinstance(node, list) and isinstance(part, int) and part < len(node)
        ):
            node = node[part]
        elif not (last and keep_missing_last):
            continue
        out.append(part)
    return tuple(out)


def _model_at(doc: Located, loc: Loc) -> type[BaseModel] | None:
    """The pydantic model that validates the mapping at `loc` (for did-you-mean on keys)."""
    candidates: list[Any] = [Spec]
    node: Any = doc.data
    for part in loc:
        node = node[part] if isinstance(node, (dict, list)) else None
        following = field_types(candidates, part)
        models = [t for t in following if isinstance(t, type) and issubclass(t, BaseModel)]
        if isinstance(node, dict) and len(models) > 1 and "type" in node:
            models = [m for m in models if _tag(m) == node["type"]] or models
        candidates = models + [t for t in following if typing.get_origin(t) in (dict, list)]
    models = list(dict.fromkeys(c for c in candidates if isinstance(c, type) and issubclass(c, BaseModel)))
    return models[0] if len(models) == 1 else None


def _tag(model: type[BaseModel]) -> Any:
    field = model.model_fields.get("type")
    args = typing.get_args(field.annotation) if field else ()
    return args[0] if len(args) == 1 else None


def _pydantic_issue(doc: Located, error: dict) -> SpecIssue:
    raw = tuple(error["loc"])
    on_key = "[key]" in raw
    kind = error["type"]
    loc = _data_loc(doc, tuple(part for part in raw if part != "[key]"), kind in ("missing", "extra_forbidden"))
    value = error.get("input")
    if on_key:
        message = error["msg"].removeprefix("Value error, ")
        return doc.issue(loc, message, key=True)
    if kind == "missing":
        parent = loc[:-1]
        return SpecIssue(*doc.position(parent, key=True), dotted(loc), f"missing required field `{loc[-1]}`")
    if kind == "extra_forbidden":
        model = _model_at(doc, loc[:-1])
        hint = catalog.did_you_mean(str(loc[-1]), list(model.model_fields)) if model else ""
        if model and not hint:
            hint = "; expected one of: " + ", ".join(f for f in model.model_fields if f != "type")
        return doc.issue(loc, f"unknown key `{loc[-1]}`{hint}", key=True)
    if kind == "union_tag_invalid":
        expected = error["ctx"]["expected_tags"].replace("'", "")
        options = [t.strip() for t in expected.split(",")]
        tag = error["ctx"]["tag"]
        return doc.issue(
            (*loc, "type"),
            f"unknown type `{tag}`{catalog.did_you_mean(str(tag), options)} (expected one of: {expected})",
        )
    if kind == "union_tag_not_found":
        return doc.issue(loc, "missing `type`")
    if kind == "literal_error":
        expected = error["ctx"]["expected"]
        options = [o.strip(" '") for o in expected.replace(" or ", ",").split(",")]
        hint = catalog.did_you_mean(str(value), options) if isinstance(value, str) else ""
        return doc.issue(loc, f"expected one of {expected}, found {value!r}{hint}")
    message = error["msg"]
    if message.startswith("Value error, "):
        message = message[len("Value error, ") :]
        return doc.issue(loc, message)
    message = message[0].lower() + message[1:]
    if not isinstance(value, (dict, list)):
        message += f", found {value!r}"
    return doc.issue(loc, message)


# --- Keras names and arguments ---------------------------------------------------------------


def _matches(pattern: tuple, loc: Loc) -> bool:
    return len(pattern) == len(loc) and all(p == "*" or p == part for p, part in zip(pattern, loc, strict=False))


def _keras_issues(doc: Located):
    for loc, node in walk(doc.data):
        for pattern, kind in KERAS_PLACES:
            if _matches(pattern, loc):
                yield from _check_layer_item(doc, node, kind, loc)
    for loc, message in clashes(doc.data):
        yield doc.issue(loc, message)


def _check_layer_item(doc: Located, node: Any, kind: str, loc: Loc):
    """Check one Keras object; a `{residual: [...]}` block in a layer list is checked item by item."""
    if kind == "layers" and isinstance(node, dict) and "residual" in node and "type" not in node:
        if isinstance(node["residual"], list):
            for i, item in enumerate(node["residual"]):
                yield from _check_layer_item(doc, item, kind, (*loc, "residual", i))
        return
    if kind == "layers" and is_application_item(node):
        yield from application_issues(doc, node, loc)
        return
    yield from _check_keras(doc, node, kind, loc, RESERVED_KEYS.get(kind, ()))


def _check_keras(doc: Located, node: Any, kind: str, loc: Loc, reserved: tuple[str, ...] = ()):
    """Check one Keras object's class and arguments; `reserved` are the keys tfgen reads itself
    (only a spec item's own, never a nested object's: those are all constructor arguments)."""
    item = _keras_item(node, loc, reserved)
    if item is None:
        return  # the structural validation reports it
    name, args, type_loc = item
    if is_custom(name):
        yield from _check_custom(doc, name, args, kind, loc, type_loc)
        return
    known = catalog.classes(kind)
    if name not in known:
        yield doc.issue(type_loc, _unknown_class(name, kind, known))
        return
    entry = known[name]
    for arg, value in args.items():
        yield from _check_argument(doc, name, entry, kind, (*loc, arg), value)
    for required in entry["required"]:
        if required not in args:
            yield doc.issue(loc, f"`{name}` needs the argument `{required}`")
    if kind == "metrics" and entry.get("default_name") is None and "name" not in args:
        yield doc.issue(loc, f"give `{name}` a `name`: it is the metric's key in the history")


def _keras_item(node: Any, loc: Loc, reserved: tuple[str, ...]) -> tuple[str, dict, Loc] | None:
    """(class name, constructor arguments, the class name's location) of a Keras object, written
    as a bare class name or a mapping with `type`; None for anything else."""
    if isinstance(node, str):
        return node, {}, loc
    if isinstance(node, dict) and isinstance(node.get("type"), str):
        return node["type"], {k: v for k, v in node.items() if k != "type" and k not in reserved}, (*loc, "type")
    return None


def _unknown_class(name: str, kind: str, known: dict) -> str:
    """Why `name` is not a class of `kind`: a class of another kind, or a likely misspelling."""
    noun = catalog.KIND_NOUN[kind]
    elsewhere = [k for k in catalog.KIND_NOUN if name in catalog.classes(k)]
    if elsewhere:
        article = "an" if noun[0] in "aeiou" else "a"
        return f"`{name}` is a Keras {catalog.KIND_NOUN[elsewhere[0]]}, not {article} {noun}"
    return f"unknown Keras {noun} `{name}`{catalog.did_you_mean(name, known)}"


def _check_argument(doc: Located, name: str, entry: dict, kind: str, arg_loc: Loc, value: Any):
    """One constructor argument: not one tfgen owns, one the class takes, of a type it takes;
    a nested Keras object is checked in turn."""
    arg = arg_loc[-1]
    if arg in OWNED_ARGUMENTS.get(kind, {}):
        yield doc.issue(arg_loc, OWNED_ARGUMENTS[kind][arg], key=True)
    elif arg not in entry["params"]:
        yield doc.issue(
            arg_loc, f"`{name}` has no argument `{arg}`{catalog.did_you_mean(str(arg), entry['params'])}", key=True
        )
    elif (problem := catalog.type_error(kind, name, str(arg), value)) is not None:
        hint = f'; your own class is written `{{type: "{value}"}}`' if is_custom(value) else ""
        yield doc.issue(arg_loc, problem + hint)
    elif isinstance(value, dict) and "type" in value:
        inner = catalog.nested_kind(str(arg), str(value["type"]))
        if inner is None:
            yield doc.issue((*arg_loc, "type"), f"`{value['type']}` is not a Keras class that `{arg}` takes")
        else:
            yield from _check_keras(doc, value, inner, arg_loc)


def _check_custom(doc: Located, name: str, args: dict, kind: str, loc: Loc, type_loc: Loc):
    """The user's own `module:Name`: its reference and nested objects (`--deep` builds it and
    reports what its constructor refuses)."""
    problem = reference_problem(name)
    if problem is None and kind == "optimizers":
        problem = f"`{name}`: the optimizer is a Keras class (your own layers, losses, metrics, schedules, ... work)"
    if problem is not None:
        yield doc.issue(type_loc, problem)
        return
    for arg in args:
        if arg in OWNED_ARGUMENTS.get(kind, {}):
            yield doc.issue((*loc, arg), OWNED_ARGUMENTS[kind][arg], key=True)
    for arg_loc, message, inner in check_arguments(name, args, loc):
        if message is not None:
            yield doc.issue(arg_loc, message)
        else:
            node = args[arg_loc[-1]]
            yield from _check_keras(doc, node, inner, arg_loc)
