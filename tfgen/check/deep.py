"""`tfgen validate --deep`: build every Keras object of a spec as its script would, in seconds.

Imports Keras (never trains, never reads data): constructs each Keras object from the constructor
text the planner emits into the script (`tfgen.generate.code.keras_call`), imports the `python`
sources, the `builder` and the user's own objects (tfgen.check.deep_custom), builds the model on
`keras.Input`s of the spec's inputs, and checks each head against its target and loss; lists a
folder source's class folders. Every failure is a located issue: `spec.yaml:18:5: model.layers.1: Dense: <message>`.
"""

from __future__ import annotations

import math
import re
import sys
import warnings
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tfgen.check.deep_applications import deep_runtime
from tfgen.check.deep_custom import custom_names, keyed, metric_params
from tfgen.check.deep_distillation import teacher_problems
from tfgen.check.deep_heads import (
    BINARY,
    ONE_HOT,
    PROBABILISTIC,
    PROBABILITY_ONLY,
    SPARSE,
    THRESHOLD_ARGUMENT,
    UNCHECKED_SHAPES,
    _final_activation,
    _names,
    _same_shape,
    _shape,
    _squeezed,
    summary_table,
)
from tfgen.check.deep_integers import integers_refused
from tfgen.check.deep_merge import merge
from tfgen.check.deep_phases import phase_problems
from tfgen.check.deep_sources import source_issues
from tfgen.check.deep_strings import strings_misused
from tfgen.check.keras_import import import_keras
from tfgen.check.modules import LookupFailed, import_function, lookup_path
from tfgen.errors import SpecError
from tfgen.generate.code import application_call, keras_call
from tfgen.generate.plan import optimizer_view
from tfgen.generate.wiring import Role, Step, Wiring, model_wiring
from tfgen.spec import catalog
from tfgen.spec.loader import Loc, Located
from tfgen.spec.models import KerasObject, Spec
from tfgen.spec.models.applications import ApplicationSpec
from tfgen.spec.names import output_names
from tfgen.spec.script_rules import imported_references
from tfgen.spec.support import ADAPTABLE

_ANSI = re.compile(r"\x1b\[[0-9;]*m")
_EXAMPLE_LENGTH = 3  # a variable-length axis in the tiny batch losses and metrics are tried on


@dataclass
class DeepResult:
    """What deep validation found for one spec: the model's summary table, when it was built."""

    summary: str


def deep_validate(doc: Located, spec: Spec, spec_dir: Path, trust: bool = False) -> DeepResult:
    """Build the spec's Keras objects and model; raise SpecError with every problem found.
    `trust`: import any module the spec names (else only the project's and tfgen's libraries)."""
    keras = import_keras()
    checker = _Deep(keras, doc, spec, spec_dir, trust)
    with warnings.catch_warnings(), lookup_path(spec_dir):
        warnings.simplefilter("ignore")  # Keras's warnings repeat what the checks below say in one line
        keras.backend.clear_session(free_memory=False)  # names restart per spec (no slow gc pass)
        policy = keras.mixed_precision.global_policy()
        try:
            if spec.algorithm.type == "contrastive":
                from tfgen.check.deep_contrastive import deep_contrastive

                checker.issues, summary = deep_contrastive(keras, doc, spec, spec_dir, trust)
            elif spec.networks is None:
                summary = checker.run()
            else:  # an algorithm of several networks: each built on its own
                from tfgen.check.deep_networks import deep_networks

                checker.issues, summary = deep_networks(keras, doc, spec, spec_dir, trust)
        finally:
            keras.mixed_precision.set_global_policy(policy)
    for warning in sorted(set(checker.warnings)):
        print(warning, file=sys.stderr)
    if checker.issues:
        raise SpecError(checker.issues)
    return DeepResult(summary)


def first_line(error: BaseException) -> str:
    """The line of a Keras exception that says what is wrong (not Keras's 'Exception encountered
    when calling ...' preamble, nor its terminal colours)."""
    lines = [line.strip() for line in _ANSI.sub("", str(error)).splitlines()]
    lines = [line for line in lines if line and not line.startswith("Exception encountered when calling")]
    if len(lines) > 1 and lines[0].endswith("Error encountered:"):  # Keras's wrapper of a failed `call`
        return f"its call fails on the model's tensors: {lines[1]}"
    return lines[0] if lines else type(error).__name__


class _StandInSizes(dict):
    """`vocabulary_sizes` as --deep builds the model: it never adapts, so a lookup whose width is
    its vocabulary's size gets a stand-in width (the script finds the real one before it builds)."""

    def __missing__(self, name: str) -> int:
        return 64


STAND_IN_SIZES = _StandInSizes()


class _Deep:
    def __init__(self, keras, doc: Located, spec: Spec, spec_dir: Path, trust: bool = False):
        self.keras, self.doc, self.spec, self.spec_dir = keras, doc, spec, spec_dir
        self.trust = trust  # import any module the spec names (modules.import_function)
        self.issues, self.warnings = [], []
        self.built: dict[Loc, Any] = {}  # each model layer item's layer (a backbone: its apply)
        self.graph_outputs: dict[str, Any] = {}  # a builder model's own output tensors, by name
        self.wiring: Wiring | None = None  # the model as the script wires it (the planner's steps)
        self.preprocessed: Any = None  # the model input that `preprocess` gives (None: as declared)

    def fail(self, loc: Loc, message: str) -> None:
        self.issues.append(self.doc.issue(loc, message))

    def warn(self, loc: Loc, message: str) -> None:
        """A warning line: what the script will do may not be what the spec means."""
        self.warnings.append(self.doc.issue(loc, f"warning: {message}"))

    # --- constructing ------------------------------------------------------------------------

    def construct(
        self, obj: KerasObject | dict, kind: str, loc: Loc, extra: dict[str, str] | None = None, code: str | None = None
    ) -> Any:
        """The object the script's constructor call builds (None, with an issue, if Keras refuses):
        `code`, the planner's call, else `keras_call(obj, kind, extra)`."""
        name, args = (obj["type"], obj) if isinstance(obj, dict) else (obj.type, obj.args)
        for arg, value in args.items():  # nested objects first, so an error names their own node
            if arg != "type" and isinstance(value, dict) and "type" in value:
                nested = catalog.nested_kind(str(arg), str(value["type"]))
                if nested is None:  # structural validation reports it first; never pass silently
                    self.fail((*loc, arg, "type"), f"`{value['type']}` is not a Keras class that `{arg}` takes")
                    return None
                if self.construct(value, nested, (*loc, arg)) is None:
                    return None
        names = custom_names(self, obj, kind, loc)  # the user's own objects it names, imported
        code = code or keras_call(obj, kind, extra)
        return None if names is None else self.evaluate(code, loc, name, **names)

    def evaluate(self, code: str, loc: Loc, name: str, **names: Any) -> Any:
        """Run one constructor call as the script writes it (the planner's text: validated class
        and argument names, values as Python literals), with only `keras` and `names` in scope."""
        try:
            scope = {"keras": self.keras, "vocabulary_sizes": STAND_IN_SIZES, **names}
            return eval(code, {"__builtins__": {}, **scope})
        except Exception as error:
            self.fail(loc, f"{name}: {first_line(error)}")
            return None

    def apply(self, layer: Any, x: Any, loc: Loc, name: str, **kwargs: Any) -> Any:
        try:
            return layer(x, **kwargs)
        except Exception as error:
            self.fail(loc, f"{name}: {first_line(error)}")
            return None

    def step(self, step: Step, tensors: dict[str, Any]) -> Any:
        """The tensor one step of the planner's wiring assigns, as the script's line computes it
        (None: it, or a step before it, failed; each failure is reported once, at its step). Every
        layer is constructed even after a step before it failed, so each constructor error is reported."""
        sources = [tensors.get(source) for source in step.sources]
        if step.role is Role.LAYER:
            layer = self.built[step.loc] = self.layer(step.item, step.loc, step.code)
            x = self.no_strings(step.item, sources[0], step.loc)
            y = None if layer is None or x is None else self.apply(layer, x, step.loc, step.item.type)
            return None if y is None else self.no_integers(step.item, layer, x, y, step.loc)
        if step.role is Role.MERGE:
            return merge(self, step, dict(zip(self.wiring.ends, sources, strict=True)))
        if step.role is Role.ADD:
            shortcut, x = tensors.get(step.shortcut), sources[0]
            if shortcut is None or x is None:
                return None
            return self.apply(self.keras.layers.Add(), [shortcut, x], step.loc, "residual: Add")
        if step.role is Role.PREPROCESSED:
            return self.preprocessed_input(sources[0])
        return sources[0]  # an alias

    def no_integers(self, item: KerasObject, layer: Any, x: Any, y: Any, loc: Loc) -> Any:
        """`y` (the layer's output of `x`), or None with an issue where `x` holds integers the
        layer's call cannot compute on."""
        why = integers_refused(layer, x)
        if why:
            self.fail(loc, f"{item.type}: {why}")
        return None if why else y

    def no_strings(self, item: KerasObject, x: Any, loc: Loc) -> Any:
        """`x`, or None with an issue where strings reach a layer that cannot take them."""
        why = strings_misused(item.type, x)
        if why:
            self.fail(loc, why)
        return None if why else x

    def layer(self, item: KerasObject, loc: Loc, code: str | None = None) -> Any:
        """The layer of `item` as `code` (its constructor call, as the planner wrote it for the
        script) builds it; None, with an issue, if it cannot be built."""
        if isinstance(item, ApplicationSpec):
            rt = deep_runtime(lambda message: self.warn(loc, f"{item.type}: {message}"))
            return self.evaluate(code or application_call(item), loc, item.type, rt=rt)
        stats = ADAPTABLE.get(item.type)
        adapted = getattr(item, "adapt_batches", None)
        if stats and not any(arg in item.args for arg in stats) and not adapted:
            given = " and ".join(f"`{arg}`" for arg in stats)
            them = "them" if len(stats) > 1 else "it"
            self.fail(
                loc,
                f"{item.type}: no {given}: add `adapt: true` to compute {them} from the training data "
                f"before training, or give {them}",
            )
            return None
        return self.construct(item, "layers", loc, code=code)

    # --- the run ---------------------------------------------------------------------------

    def run(self) -> str:
        spec, keras = self.spec, self.keras
        for loc, reference in imported_references(spec):
            if loc[0] == "data":  # the builder is imported where the model is built
                self.function(reference, loc, "data")
        self.issues += source_issues(self.doc, spec)
        self.wiring = model_wiring(spec, output_names(spec))
        self.preprocessing()
        if spec.precision != "float32":
            keras.mixed_precision.set_global_policy(spec.precision)
        model, outputs = self.builder_model() if spec.model.builder else self.layer_model()
        for name in output_names(spec):
            self.head(name, outputs.get(name) if outputs else None)
        self.optimizer(model)
        for loc, message in phase_problems(spec, self.built) if model is not None else ():
            self.fail(loc, message)
        for loc, message in teacher_problems(spec, keras, model):
            self.fail(loc, message)
        if model is None and not self.issues:  # every way to lose the model records why; keep it so
            self.fail(("model",), "the model could not be built")
        return "" if model is None else summary_table(model)

    def function(self, reference: str, loc: Loc, place: str):
        """What `reference` names, imported and checked to fit `place` (None, with an issue, if not)."""
        try:
            return import_function(reference, self.spec_dir, place, self.trust)
        except LookupFailed as error:
            self.fail(loc, str(error))
            return None

    def declared(self) -> dict[str, Any]:
        """The model's inputs as the spec declares them (`INPUTS` in the script)."""
        return {k: self.keras.Input(tuple(f.shape), dtype=f.dtype, name=k) for k, f in self.spec.model.inputs.items()}

    def inputs(self) -> dict[str, Any]:
        """The inputs a builder's model is called on: declared, but the one `preprocess` maps is
        what its layers give (the batches it is fed)."""
        inputs = self.declared()
        name = next(iter(inputs))
        inputs[name] = self.preprocessed_input(inputs[name])
        return inputs

    def preprocessed_input(self, declared: Any) -> Any:
        """The script's `preprocessed(...)`: an input of what the preprocessing layers give (the
        declared input when there are none, or they failed: reported there)."""
        if self.preprocessed is None:
            return declared
        shape, dtype = tuple(self.preprocessed.shape[1:]), self.preprocessed.dtype
        return self.keras.Input(shape, dtype=dtype, name=next(iter(self.spec.model.inputs)))

    def preprocessing(self) -> None:
        """The preprocessing then augmentation layers, applied to the input they map as the
        pipeline does. Two sides: `preprocess` takes the source's examples (the declared input)
        and gives the model's input, whatever its shape and dtype; `augment` must keep it."""
        train = self.spec.data.train
        if not (train.preprocess or train.augment):
            return
        name, declared = next(iter(self.spec.model.inputs.items()))
        x = self.keras.Input(tuple(declared.shape), dtype=declared.dtype, name=name)
        x = self.mapped(self.wiring.pipeline["preprocess"], x, training=False)
        if train.preprocess and x is not None:
            self.preprocessed = x
        given = x
        x = self.mapped(self.wiring.pipeline["augment"], x, training=True)
        if x is not None and given is not None and not _same_shape(tuple(x.shape[1:]), tuple(given.shape[1:])):
            side = "the preprocessed input" if train.preprocess else f"the declared input `{name}`"
            self.fail(
                ("data", "train", "augment", len(train.augment) - 1),
                f"{train.augment[-1].type}: after it a training example is {_shape(x.shape[1:])}, but "
                f"{side} is {_shape(given.shape[1:])} (augmentation runs on training batches only: it must "
                "keep the shape)",
            )

    def mapped(self, steps: list[Step], x: Any, training: bool) -> Any:
        """`x` through one group of the pipeline's layers (`preprocess` or `augment`), each built
        from the planner's call for the script's layer list."""
        for step in steps:
            layer = self.layer(step.item, step.loc, step.code)
            x = self.no_strings(step.item, x, step.loc)
            x = (
                None
                if layer is None or x is None
                else self.apply(layer, x, step.loc, step.item.type, training=training)
            )
        return x

    def layer_model(self):
        """The model as the script's `build_model` wires it: the planner's steps, walked."""
        spec, wiring = self.spec, self.wiring
        tensors = {wiring.inputs[name]: tensor for name, tensor in self.declared().items()}
        for step in wiring.steps():
            tensors[step.target] = self.step(step, tensors)
        inputs = {name: tensors[variable] for name, variable in wiring.inputs.items()}
        outputs = {
            name: tensors[wiring.output(name)] for name in wiring.heads if tensors[wiring.output(name)] is not None
        }
        if len(outputs) < len(spec.model.outputs):
            return None, outputs
        try:
            return self.keras.Model(inputs=inputs, outputs=outputs, name=spec.name), outputs
        except Exception as error:
            self.fail(("model",), f"Model: {first_line(error)}")
            return None, outputs

    def builder_model(self):
        spec, loc = self.spec, ("model", "builder")
        build = self.function(spec.model.builder, loc, "builder")
        if build is None:
            return None, None
        try:
            model = build(**spec.model.kwargs)
        except Exception as error:
            self.fail(loc, f"`{spec.model.builder}` raised {type(error).__name__}: {first_line(error)}")
            return None, None
        if (model := keyed(self, model, loc)) is None:  # a keras.Model, keyed by input name as the script keys it
            return None, None
        try:
            outputs = model(self.inputs())  # the batches are dicts keyed by input name
        except Exception as error:
            self.fail(loc, f"the model refuses the spec's inputs ({', '.join(spec.model.inputs)}): {first_line(error)}")
            return None, None
        if not isinstance(outputs, dict) or set(outputs) != set(spec.targets):
            found = _names(outputs) if isinstance(outputs, dict) else f"a {type(outputs).__name__}"
            self.fail(
                loc, f"the model's outputs must be a dict keyed by the targets ({_names(spec.targets)}), found {found}"
            )
            return model, None
        if isinstance(model.output, dict):  # its own graph shows each head's last layer
            self.graph_outputs = model.output
        if spec.precision != "float32":
            for name, out in outputs.items():
                if out.dtype != "float32":
                    self.fail(
                        loc,
                        f"output `{name}` is {out.dtype} under {spec.precision}: give its last layer "
                        "dtype='float32' (losses never run in float16)",
                    )
        return model, outputs

    # --- heads: output vs target, loss and metrics -----------------------------------------

    def head(self, name: str, out: Any) -> None:
        spec = self.spec
        loss_spec = spec.losses[name]
        loss_loc = ("losses", name)
        loss = self.construct(loss_spec, "losses", loss_loc, {"reduction": "None"})
        metrics = [
            (i, m, self.construct(m, "metrics", ("metrics", name, i))) for i, m in enumerate(spec.metrics.get(name, []))
        ]
        if out is None:
            return
        target = spec.targets[name]
        where = self.head_loc(name)
        if not str(out.dtype).startswith(("float", "bfloat")):
            self.fail(where, f"output `{name}` is {out.dtype}: a loss needs floating-point predictions")
            return
        output_shape, target_shape = tuple(out.shape[1:]), tuple(target.shape)
        shape_ok = self.shapes(loss_spec.type, output_shape, target_shape, target.class_count, loss_loc, name)
        for i, metric, _ in metrics if shape_ok else ():  # a wrong head is reported once, at its loss
            shape_ok &= self.shapes(
                metric.type, output_shape, target_shape, target.class_count, ("metrics", name, i), name
            )
        self.activation(name, out, loss_spec, output_shape, metrics)
        if shape_ok and loss is not None and loss_spec.type not in UNCHECKED_SHAPES:
            self.try_on_batch(name, out, loss, loss_spec.type, loss_loc, metrics)

    def head_loc(self, name: str) -> Loc:
        if self.spec.model.builder:
            return ("model", "builder")
        head = self.spec.model.outputs[name]
        return ("model", "outputs", name, len(head) - 1) if head else ("model", "outputs", name)

    def shapes(self, kind: str, output: tuple, target: tuple, classes: int | None, loc: Loc, name: str) -> bool:
        """Whether the head's output fits the target under this loss or metric (else an issue)."""
        if kind in SPARSE:
            if len(target) == len(output) and target and target[-1] == 1:
                target = target[:-1]  # Keras squeezes a trailing 1 from class ids
            if len(output) != len(target) + 1 or not _same_shape(output[:-1], target):
                self.fail(
                    loc,
                    f"{kind}: target `{name}` of shape {_shape(target)} holds class ids, so the output "
                    f"must be {_shape((*target, 'classes'))}, but it is {_shape(output)}",
                )
                return False
        elif kind in UNCHECKED_SHAPES or (kind not in catalog.classes("losses") and kind not in ONE_HOT):
            return True
        elif not _same_shape(*_squeezed(output, target)):
            hint = ""
            if kind in ONE_HOT and classes and output == (*target, classes):
                hint = f"; for class ids use Sparse{kind}"
            self.fail(
                loc, f"{kind}: output `{name}` is {_shape(output)} per example but its target is {_shape(target)}{hint}"
            )
            return False
        if kind in BINARY and classes and classes > 2 and (not target or target[-1] != classes):
            self.fail(
                loc,
                f"{kind}: takes 0/1 targets, but target `{name}` has `classes: {classes}`: for class ids "
                f"use SparseCategoricalCrossentropy on {classes} outputs",
            )
            return False
        if classes and (kind in SPARSE or kind in ONE_HOT) and output and output[-1] not in (None, classes):
            self.fail(
                loc,
                f"{kind}: output `{name}` gives {output[-1]} class scores but target `{name}` has `classes: {classes}`",
            )
            return False
        return True

    def activation(self, name: str, out: Any, loss_spec: KerasObject, output_shape: tuple, metrics: list) -> None:
        """from_logits against the head's last activation; thresholds of metrics on logits."""
        final, layer = _final_activation(self.keras, self.graph_outputs.get(name, out))
        where = self.head_loc(name)
        if final == "softmax" and output_shape and output_shape[-1] == 1:
            self.fail(where, f"{layer}: a softmax over one unit is always 1.0: use a sigmoid for one output unit")
            return
        if loss_spec.type not in PROBABILISTIC:
            return
        logits = bool(loss_spec.args.get("from_logits", False))
        if logits and final in ("softmax", "sigmoid"):
            self.fail(
                ("losses", name, "from_logits"),
                f"{loss_spec.type}: output `{name}` ends in a {final} "
                f"({layer}), so it is not logits: remove `from_logits: true` or the activation",
            )
            return
        if not logits and final == "linear":
            self.fail(
                ("losses", name),
                f"{loss_spec.type}: output `{name}` has no activation ({layer}), so it "
                "gives logits, but the loss expects probabilities: set `from_logits: true`",
            )
            return
        if not logits:
            return
        for i, metric, _ in metrics:
            loc = ("metrics", name, i)
            argument = THRESHOLD_ARGUMENT.get(metric.type)
            if argument and argument not in metric.args:
                self.fail(
                    loc,
                    f"{metric.type}: thresholds at 0.5, but output `{name}` gives logits (its loss has "
                    f"`from_logits: true`): set `{argument}: 0.0` (a logit of 0 is a probability of 0.5)",
                )
            elif metric.type in PROBABILITY_ONLY:
                self.fail(
                    loc,
                    f"{metric.type}: reads probabilities in [0, 1], but output `{name}` gives logits "
                    "(its loss has `from_logits: true`)",
                )
            elif "from_logits" in metric_params(metric.type) and not metric.args.get("from_logits"):
                self.fail(
                    loc,
                    f"{metric.type}: output `{name}` gives logits (its loss has `from_logits: true`): "
                    "set `from_logits: true`",
                )

    def try_on_batch(self, name: str, out: Any, loss: Any, kind: str, loc: Loc, metrics: list) -> None:
        """Call the loss and update the metrics on a batch of two zero examples (never data)."""
        zeros, target = self.keras.ops.zeros, self.spec.targets[name]
        y_pred = zeros([2, *(d or _EXAMPLE_LENGTH for d in out.shape[1:])], dtype=out.dtype)
        y_true = zeros([2, *(d or _EXAMPLE_LENGTH for d in target.shape)], dtype=target.dtype)
        try:
            loss(y_true, y_pred)
        except Exception as error:
            self.fail(loc, f"{kind}: {first_line(error)}")
        for i, metric, built in metrics:
            if built is None:
                continue
            try:
                built.update_state(y_true, y_pred)
            except Exception as error:
                self.fail(("metrics", name, i), f"{metric.type}: {first_line(error)}")

    # --- optimizer ---------------------------------------------------------------------------

    def optimizer(self, model: Any) -> None:
        spec, view = self.spec, optimizer_view(self.spec)
        rate = spec.optimizer.args.get("learning_rate")
        if isinstance(rate, dict):
            schedule = self.construct(rate, "schedules", ("optimizer", "learning_rate"))
            if schedule is None:
                return
            learning_rate = schedule
            try:
                first = float(schedule(0))
            except Exception as error:
                self.fail(("optimizer", "learning_rate"), f"{rate['type']}: {first_line(error)}")
                return
            if not math.isfinite(first) or first < 0:
                self.fail(("optimizer", "learning_rate"), f"{rate['type']}: the rate at step 0 is {first}")
                return
        else:
            learning_rate = rate
        # as build_optimizer writes it: whole, or taking the wrapped rate by the name `learning_rate`
        custom = custom_names(self, spec.optimizer, "optimizers", ("optimizer",))
        if custom is None:  # a reference refused or not found: said, and nothing to construct
            return
        optimizer = self.evaluate(view.call, ("optimizer",), spec.optimizer.type, **custom, learning_rate=learning_rate)
        if optimizer is None:
            return
        if spec.precision == "mixed_float16":
            optimizer = self.keras.optimizers.LossScaleOptimizer(optimizer)
        if model is not None:
            try:
                optimizer.build(model.trainable_variables)  # the script builds the slots before step 1
            except Exception as error:
                self.fail(("optimizer",), f"{spec.optimizer.type}: {first_line(error)}")
