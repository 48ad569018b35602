"""Training phases: consecutive runs of epochs, each with its frozen layers and rate factor.

The phase is a function of the epoch, so a resumed run enters the phase its epoch is in.
Each phase traces its own step (and the loops around it) once: freezing a layer changes
which variables the step updates and turns its BatchNormalization layers to inference
mode, both read when a step is traced.
"""

from typing import NamedTuple

import tensorflow as tf

from .applications import keep_batchnorm_inference
from .errors import UserError
from .trainer import StandardTrainer, compiled_step

LOOPS = ("train_from_iterator", "train_from_memory")


class Phase(NamedTuple):
    epochs: int
    frozen: tuple  # the names of the layers it does not train
    learning_rate_factor: float


class PhasePlan:
    """The phases in order, and the rate factor of the current one (a variable)."""

    def __init__(self, phases):
        self.phases = tuple(phases)
        # Set when a phase starts (from the epoch): no checkpointed state of its own.
        self.factor = tf.Variable(1.0, trainable=False, name="phase_rate_factor")

    def index(self, epoch):
        """The phase that `epoch` (1-based) is in; epochs past the plan are in the last."""
        end = 0
        for index, phase in enumerate(self.phases):
            end += phase.epochs
            if epoch <= end:
                return index
        return len(self.phases) - 1

    def trains_nothing(self, index):
        """Why phase `index` cannot run: it freezes every layer that has weights."""
        first = sum(phase.epochs for phase in self.phases[:index]) + 1
        last = first + self.phases[index].epochs - 1
        epochs = f"epoch {first}" if first == last else f"epochs {first}-{last}"
        return (
            f"train.phases.{index}: the phase freezes every layer that has weights, so "
            f"{epochs} would train nothing: leave some layer out of `frozen`"
        )

    def record(self):
        """The plan as run.json records it."""
        return [phase._asdict() for phase in self.phases]

    def layers(self, model):
        """Every layer any phase freezes, by name (UserError for a name the model lacks)."""
        names = dict.fromkeys(n for phase in self.phases for n in phase.frozen)
        found = {layer.name: layer for layer in model.layers}
        missing = [name for name in names if name not in found]
        if missing:
            raise UserError(f"train.phases: the model has no layer `{missing[0]}`")
        return {name: found[name] for name in names}


class PhasedTrainer(StandardTrainer):
    """A StandardTrainer whose subclass sets `phase_plan` (a PhasePlan) and calls
    `enter_phase(epoch)` before each epoch's steps."""

    phase = None  # the index of the current phase

    def enter_phase(self, epoch):
        """Freeze the phase's layers, set its rate factor and use its compiled steps."""
        index = self.phase_plan.index(epoch)
        if index == self.phase:
            return
        if self.phase is None:
            self.first_phase()
        self.phase = index
        phase = self.phase_plan.phases[index]
        for name, layer in self.phased_layers.items():
            # Sets its inner layers' flags too, when it changes (TensorFlow skips setting
            # an attribute to the value it has); `batchnorm: inference` holds in any phase.
            layer.trainable = self.given_trainable[name]
            if getattr(layer, "batchnorm_inference", False):
                keep_batchnorm_inference(layer)
        skipped = self.frozen_variables(phase)
        for name in phase.frozen:  # their BatchNormalization layers: inference mode
            self.phased_layers[name].trainable = False
        self.variables = [v for v in self.all_variables if id(v) not in skipped]
        self.phase_plan.factor.assign(phase.learning_rate_factor)
        if index not in self.compiled:
            self.compiled[index] = self.phase_functions()
        self.train_step, *loops = self.compiled[index]
        for name, function in zip(LOOPS, loops, strict=True):
            setattr(self, name, function)

    def first_phase(self):
        """Note what the phases start from: every variable, the layers' own flags; refuse
        a phase that would train nothing (before the first step)."""
        self.all_variables = list(self.variables)  # the optimizer's slots: all of them
        self.phased_layers = self.phase_plan.layers(self.model)
        self.given_trainable = {
            name: layer.trainable for name, layer in self.phased_layers.items()
        }
        for index, phase in enumerate(self.phase_plan.phases):
            if {id(v) for v in self.all_variables} <= self.frozen_variables(phase):
                raise UserError(self.phase_plan.trains_nothing(index))
        self.compiled = {}
        step = vars(self).get("train_step", type(self).train_step)
        self.step_jit = getattr(step, "_jit_compile", None)  # tf.function's flag
        if "train_step" in vars(self):  # XLA-compiled for a long run
            self.step_jit = True

    def frozen_variables(self, phase):
        """The ids of the variables `phase` does not train (its layers' flags as given)."""
        frozen = [self.phased_layers[name] for name in phase.frozen]
        return {id(v) for layer in frozen for v in layer.trainable_variables}

    def phase_functions(self):
        """Fresh tf.functions of the step and the loops: each traces the phase anew."""
        step = type(self).train_step
        step = getattr(step, "python_function", step).__get__(self)
        if self.step_jit is not None:
            step = compiled_step(step, jit_compile=self.step_jit)
        loops = [getattr(StandardTrainer, name).python_function for name in LOOPS]
        return [step, *(tf.function(loop.__get__(self)) for loop in loops)]
