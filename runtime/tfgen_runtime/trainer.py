"""The loops around a script's per-replica steps (`StandardTrainer`, as orbit's), and
helpers those steps call."""

import abc
import time

import keras
import tensorflow as tf

from .carry import carried_metrics, carry_in, carry_out, fold_metrics, metric_states
from .errors import UserError
from .input_wait import InputWait
from .moving_statistics import average_moving_statistics
from .report import metric_values, reset

IN_MEMORY_BUDGET_BYTES = 2**30  # larger training arrays stream through tf.data
COMPILE_FROM_STEPS = 1000  # XLA: ~1 s to compile; 0.25-0.8 ms a step saved (CPU)
PROVIDED = (  # what a subclass's __init__ sets: see StandardTrainer
    "model",
    "optimizer",
    "variables",
    "state",
    "train_metrics",
    "validation_metrics",
    "checkpoint",
)


class StandardTrainer(abc.ABC):
    """Runs a subclass's per-replica `train_step` many times per tf.function call.

    As orbit's StandardTrainer: from in-memory arrays (sliced inside the compiled loop)
    or from a distributed tf.data iterator. A subclass implements `train_step` and
    `test_step`, and its `__init__` sets these attributes (`use_data` checks them):
    `train_step` takes and returns `carried`, the figures the steps of a call carry
    (`start_carry`), which the call folds into the metrics and the state once (`fold_carry`).

    Attributes:
        model: the keras.Model trained.
        optimizer: its optimizer (its rate and loss scale are reported each epoch).
        variables: the variables `train_step` updates (checked finite after each call).
        state: the run's `RunState`.
        train_metrics: dict of history name -> metric, whose states `train_step`
            carries (`carry_metrics`).
        validation_metrics: the same for `test_step`.
        checkpoint: the run's `RunCheckpoint` (named when the weights become
            non-finite).
    """

    steps_per_call = 100  # `steps_per_execution: auto`: doubled while calls are short

    def __init__(
        self, *, strategy, pipeline, examples_per_update, update_metrics=None, seed=None
    ):
        """Args:
        strategy: the tf.distribute strategy the steps run under.
        pipeline: `pipeline(train, epoch)`: the batches of one epoch of streamed data.
        examples_per_update: the examples of one update, over all replicas.
        update_metrics: `update_metrics(metrics, *args)` updates a dict of metrics
            (what `carry_metrics` applies to the carried states).
        seed: the seed of the in-memory order (shuffled per epoch); None: unshuffled.
        """
        self.strategy = strategy
        self.pipeline = pipeline
        self.examples_per_update = examples_per_update
        self.update_metrics = update_metrics
        self.seed = seed

    @abc.abstractmethod
    def train_step(self, features, targets, carried):
        """One update from this replica's part of the global batch; the new `carried`."""

    @abc.abstractmethod
    def test_step(self, features, targets):
        """Update `validation_metrics` with one batch on this replica."""

    def require_attributes(self):
        """Raise TypeError naming the attributes of the contract a subclass did not set."""
        missing = [name for name in PROVIDED if not hasattr(self, name)]
        if missing:
            names = ", ".join(missing)
            kind = type(self).__name__
            raise TypeError(f"{kind}.__init__ sets no {names} (see StandardTrainer)")

    def prepare(self, features, targets):
        """A batch sliced from the in-memory arrays, before the step."""
        return features, targets

    def use_data(self, train, placement, most_steps=None):
        """Keep the training data (in memory where it may); return an epoch's steps."""
        self.require_attributes()
        self.train = train
        self.in_memory = placement == "memory"
        if placement == "auto" and not isinstance(train, tf.data.Dataset):
            size = sum(a.nbytes for arrays in train for a in arrays.values())
            self.in_memory = size <= IN_MEMORY_BUDGET_BYTES
        if self.in_memory and isinstance(train, tf.data.Dataset):
            raise UserError("`in_memory: true` needs arrays; the source gave a Dataset")
        if self.in_memory:
            steps = self.keep_arrays(train)
        else:
            steps = self.count_batches(train)
        if steps == 0:
            self.refuse_no_batch()
        if most_steps:
            steps = min(steps, most_steps)
        self.measure_input_wait(steps)
        return steps

    def measure_input_wait(self, steps_per_epoch):
        """Streamed data, one worker: `run_steps` measures an epoch's wait for input."""
        self.input_wait = None
        cluster = getattr(self.strategy, "cluster_resolver", None) is not None
        if self.in_memory or cluster:
            return
        # A tf.function step: XLA compiles it on its first run.
        compiled = isinstance(self.train_step, tf.types.experimental.GenericFunction)
        self.input_wait = InputWait(self.run_steps, steps_per_epoch, compiled)
        self.run_steps = self.input_wait.run

    def keep_arrays(self, train):
        """Keep the training arrays as tensors; return an epoch's steps."""
        self.arrays = [{k: tf.constant(a) for k, a in part.items()} for part in train]
        self.examples = len(next(iter(train[1].values())))
        return self.examples // self.examples_per_update

    def count_batches(self, train):
        """The batches of an epoch of streamed data (counted once when unknown)."""
        steps = int(self.pipeline(train).cardinality())
        if steps < 0:  # unknown (a file or generator source): count once
            steps = int(self.pipeline(train).reduce(0, lambda n, _: n + 1))
        return steps

    def refuse_no_batch(self):
        """Raise UserError: the training data makes no full batch."""
        if self.in_memory:
            have = f"{self.examples} training examples"
        else:
            have = "the training examples"
        batch = f"{self.examples_per_update} (batch_size x accumulation steps)"
        fix = "more data or a smaller batch"
        raise UserError(f"{have} make no full batch of {batch}: {fix}")

    def compile_step_if_long(self, steps):
        """XLA-compile `train_step` for a run of `steps` steps, if long enough to repay it."""
        if steps >= COMPILE_FROM_STEPS:
            self.train_step = compiled_step(self.train_step, jit_compile=True)
            if self.input_wait is not None:
                self.input_wait.compiled = True

    def start_epoch(self, epoch, step):
        """Reset the metrics (a resumed epoch keeps its first part's) and the data."""
        if step == 0:
            reset(self.train_metrics)
        reset(self.validation_metrics)
        if not self.in_memory:
            # A seeded pipeline per epoch: a resume at `step` skips its first batches.
            batches = self.pipeline(self.train, epoch).skip(step)
            self.iterator = iter(self.strategy.experimental_distribute_dataset(batches))

    def run_steps(self, epoch, step, steps):
        """Run `steps` training steps of `epoch` from `step`, in one compiled call."""
        started = time.perf_counter()
        if self.in_memory:
            position = (tf.constant(epoch), tf.constant(step), tf.constant(steps))
            finite = self.train_from_memory(*position)
        else:
            finite = self.train_from_iterator(self.iterator, tf.constant(steps))
        # Fewer, longer calls (a stop signal waits < 0.5 s); a cluster's workers keep 100.
        short = steps == self.steps_per_call and time.perf_counter() - started < 0.25
        if short and getattr(self.strategy, "cluster_resolver", None) is None:
            self.steps_per_call *= 2
        # Off XLA, relu(NaN) is 0: a NaN update can leave the loss finite (the state's check).
        if not finite and self.state.bad_step.numpy() < 0:
            where = f"steps {step + 1}-{step + steps} of epoch {epoch}"
            message = f"the weights became non-finite in {where}"
            self.state.stop(message, self.checkpoint.latest)

    def finite_weights(self):
        finite = [tf.reduce_all(tf.math.is_finite(v)) for v in self.variables]
        return tf.reduce_all(finite)

    @tf.function
    def train_from_memory(self, epoch, first_step, steps):
        """Run `steps` steps of `epoch` from `first_step` in one graph; finite weights?"""
        order = tf.range(self.examples)
        if self.seed is not None:  # seeded per epoch: the position is (epoch, step)
            order = tf.random.experimental.stateless_shuffle(order, [self.seed, epoch])
        carried = carry_out(self.strategy, self.on_replicas(self.start_carry))
        for step in tf.range(first_step, first_step + steps):
            args = (order, step, carry_in(self.strategy, carried))
            carried = carry_out(
                self.strategy, self.on_replicas(self.train_step_on_slice, *args)
            )
        self.on_replicas(self.fold_carry, carry_in(self.strategy, carried), steps)
        return self.finite_weights()

    def on_replicas(self, function, *args):
        """`function(*args)` on each replica, as written.

        The functions a step runs hold no Python control flow over tensors, so AutoGraph,
        which would rewrite each of them on its first trace (about 0.6 s of a run's
        start), is left out; only the loops over steps are converted.
        """
        as_written = tf.autograph.experimental.do_not_convert(function)
        return self.strategy.run(as_written, args=args)

    def train_step_on_slice(self, order, step, carried):
        """Gather this replica's rows of update `step` from the arrays; train on them."""
        context = tf.distribute.get_replica_context()
        share = self.examples_per_update // context.num_replicas_in_sync
        replica = tf.cast(context.replica_id_in_sync_group, tf.int32)
        start = step * self.examples_per_update + replica * share
        rows = tf.slice(order, [start], [share])
        batch = [{k: tf.gather(a, rows) for k, a in p.items()} for p in self.arrays]
        return self.replica_step(*self.prepare(*batch), carried)

    def replica_step(self, features, targets, carried):
        """`train_step` on this replica, then the replicas' BatchNormalization statistics
        averaged (`average_moving_statistics`); the new `carried`."""
        carried = self.train_step(features, targets, carried)
        average_moving_statistics(self.model)
        return carried

    @tf.function
    def train_from_iterator(self, iterator, steps):
        """Run `steps` steps in one graph, pulling batches from the iterator; finite weights?

        Each batch is read while the step before it runs (the two overlap), as `fit` reads
        them; none is read after the last step's.
        """
        carried = carry_out(self.strategy, self.on_replicas(self.start_carry))
        nothing = tf.experimental.Optional.empty(iterator.element_spec)

        def read_if(condition, otherwise):
            """The next batch (an Optional) if `condition`, else `otherwise`."""
            return tf.cond(condition, iterator.get_next_as_optional, lambda: otherwise)

        def more(step, carried, upcoming):
            return step < steps

        def train(step, carried, upcoming):
            args = (*upcoming.get_value(), carry_in(self.strategy, carried))
            carried = carry_out(
                self.strategy, self.on_replicas(self.replica_step, *args)
            )
            return step + 1, carried, read_if(step + 1 < steps, upcoming)

        first = (tf.constant(0), carried, read_if(steps > 0, nothing))
        _, carried, _ = tf.while_loop(more, train, first)
        self.on_replicas(self.fold_carry, carry_in(self.strategy, carried), steps)
        return self.finite_weights()

    def start_carry(self):
        """What the steps of a call carry: the training metrics' states and the run state's."""
        return {
            "metrics": metric_states(self.train_metrics),
            **self.state.start(self.optimizer),
        }

    def carry_metrics(self, carried, *args):
        """`update_metrics(train_metrics, *args)` on the carried states: the new carry."""
        return carried_metrics(carried, self.train_metrics, self.update_metrics, *args)

    def fold_carry(self, carried, steps):
        """Keep what the `steps` steps of a call carried, once per call."""
        fold_metrics(self.train_metrics, carried["metrics"])
        state = {k: v for k, v in carried.items() if k != "metrics"}
        self.state.fold(state, self.optimizer, steps)

    @tf.function(autograph=False)
    def distributed_test_step(self, features, targets):
        self.on_replicas(self.test_step, features, targets)

    def evaluate(self, validation):
        """Run the validation set; return its `val_` history values."""
        batches = 0
        for batches, (features, targets) in enumerate(validation, 1):
            self.distributed_test_step(features, targets)
        if not batches:
            raise UserError("the validation data is empty")
        return metric_values(self.validation_metrics, prefix="val_")

    def epoch_values(self, started, trained, steps):
        """The last rate, loss scale (float16), updates skipped so far, and the speed.

        `steps`: the epoch's length less the step it started from. A resume past the
        end of a shorter epoch (--steps-per-epoch) runs no step: the epoch ends with
        the steps it had, and its row has no speed.
        """
        values = {"lr": float(self.state.learning_rate.numpy())}
        if isinstance(self.optimizer, keras.optimizers.LossScaleOptimizer):
            values["loss_scale"] = float(self.optimizer.dynamic_scale.numpy())
        values["skipped_steps"] = int(self.state.skipped.numpy())
        if self.input_wait is not None:
            values.update(self.input_wait.values())
        values["epoch_seconds"] = time.perf_counter() - started
        if steps > 0:
            speed = steps * self.examples_per_update / (trained - started)
            values["examples_per_second"] = speed
        return values


def compiled_step(step, jit_compile):
    """`step` as a tf.function (XLA-compiled if `jit_compile`), run as written: without
    AutoGraph, as `on_replicas` runs the functions a step calls."""
    return tf.function(step, jit_compile=jit_compile, autograph=False)
