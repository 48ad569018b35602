"""Your own step (`algorithm: {type: custom}`): the context it is given, and its returns checked.

A custom step is `step(networks, features, targets, ctx)`, called per replica inside the
strategy's run, inside a tf.function. `networks` maps each network's name to its Keras model;
`features` and `targets` are this replica's part of the global batch (dicts by name); `ctx` is a
StepContext, which does the parts that are easy to get wrong across replicas. The step returns a
dict of the figures the spec declares in `algorithm.logs`: per example (a tensor whose first
axis is the replica's batch) or one value per batch; each is a history column (the mean over
the epoch's examples).
"""

import tensorflow as tf

from .errors import UserError
from .model_checks import regularization_loss, variable_path
from .reduced import apply_reduced, apply_unless_nonfinite, scaled, scaled_gradients

# tf.clip_by_* of the summed gradients, by the spec's `train.gradient_clipping` kind.
CLIPS = {
    "global_norm": lambda gradients, limit: tf.clip_by_global_norm(gradients, limit)[0],
    "norm": lambda gradients, limit: [tf.clip_by_norm(g, limit) for g in gradients],
    "value": lambda gradients, limit: [
        tf.clip_by_value(g, -limit, limit) for g in gradients
    ],
}


class StepContext:
    """What a custom step is given besides its networks and batch (one per traced step).

    Attributes:
        networks: the networks by name (the same dict the step is given).
        optimizers: each network's optimizer, by the network's name.
        global_batch_size: the examples of one step over every replica.
        step: the steps run before this one (an int64 tensor; checkpointed).
        skipped: with `skip_nonfinite` (train.on_nonfinite: skip), whether an update of this
            step was skipped (non-finite on some replica): the step's later updates are too.
    """

    def __init__(
        self,
        networks,
        optimizers,
        global_batch_size,
        seed,
        step,
        clipping=None,
        skip_nonfinite=False,
    ):
        self.networks = networks
        self.optimizers = optimizers
        self.global_batch_size = global_batch_size
        self.seed = seed
        self.step = step
        self.clipping = clipping  # (kind, limit) of train.gradient_clipping, or None
        self.draws = 0  # random draws so far in this step: keys the next one
        self.skip_nonfinite = skip_nonfinite
        self.skipped = tf.constant(False)

    def average(self, per_example):
        """The mean of a per-example loss over the GLOBAL batch (this replica's share of it):
        summed over the replicas by the update, it is the global batch's mean."""
        per_example = tf.convert_to_tensor(per_example)
        if per_example.shape.rank == 0:
            raise UserError(
                "ctx.average takes a loss per example (rank >= 1), not a scalar"
            )
        return tf.nn.compute_average_loss(
            per_example, global_batch_size=self.global_batch_size
        )

    def regularization(self, network):
        """The regularization losses of `network` (a name or a model), scaled for the replicas:
        call it inside the tape, or its regularizers get no gradient."""
        model = self.networks[network] if isinstance(network, str) else network
        return tf.nn.scale_regularization_loss(regularization_loss(model))

    def scale(self, loss, optimizer):
        """`loss` scaled by the named optimizer's loss scale (float16); as it is otherwise.
        For gradients you take yourself: take them of the scaled loss, and `apply_gradients`
        unscales them (`apply` scales its loss itself)."""
        found = self.optimizer(optimizer)
        if scaled(found):
            return found.scale_loss(loss)
        return loss

    def apply(self, optimizer, tape, loss, variables=None):
        """Update with the named optimizer by the gradients of `loss` (from `tape`) with respect
        to `variables` (default: the trainable variables of the network of that name).

        Clips the gradients summed over every replica when the spec asks
        (`train.gradient_clipping`), not each replica's part; a variable the loss does not
        reach is an error naming it. Returns the gradients applied.
        """
        if variables is None:
            variables = self.networks[optimizer].trainable_variables
        found = self.optimizer(optimizer)
        if scaled(found):  # float16
            gradients = scaled_gradients(found, tape, loss, variables)
        else:
            gradients = tape.gradient(loss, variables)
        return self.apply_gradients(optimizer, gradients, variables, loss)

    def apply_gradients(self, optimizer, gradients, variables, loss=None):
        """`apply` of gradients you computed (each None one is an error naming its variable).
        With `train.on_nonfinite: skip`, skipped on every replica when `loss` or a gradient is
        non-finite on one, or an earlier update of this step was skipped."""
        variables = list(variables)
        require_gradients(gradients, variables, optimizer)
        found = self.optimizer(optimizer)
        if self.clipping is None and not scaled(found):
            self.update(found, gradients, variables, loss, reduced=False)
            return gradients
        # Summed over the replicas here: clipped by the global batch's gradient, and seen whole
        # by a LossScaleOptimizer (Keras checks its own replica's gradients only for inf/NaN).
        context = tf.distribute.get_replica_context()
        gradients = [tf.convert_to_tensor(g) for g in gradients]
        gradients = context.all_reduce("sum", gradients)
        if self.clipping is not None:
            gradients = clipped(found, gradients, *self.clipping)
        self.update(found, gradients, variables, loss, reduced=True)
        return gradients

    def update(self, optimizer, gradients, variables, loss, reduced):
        """Apply (`reduced`: gradients summed over the replicas already), or with
        `skip_nonfinite` apply unless non-finite anywhere or skipped earlier in the step.
        """
        if self.skip_nonfinite:
            self.skipped = apply_unless_nonfinite(
                optimizer, gradients, variables, loss, self.skipped, reduced
            )
        elif reduced:
            apply_reduced(optimizer, gradients, variables)
        else:
            optimizer.apply_gradients(zip(gradients, variables))

    def optimizer(self, name):
        """The optimizer of the network `name` (a one-line error naming the known ones)."""
        if name not in self.optimizers:
            known = ", ".join(f"`{n}`" for n in self.optimizers)
            raise UserError(
                f"the step asks for the optimizer `{name}`; the spec's optimizers are {known}"
            )
        return self.optimizers[name]

    def normal(self, shape, mean=0.0, stddev=1.0, dtype=tf.float32):
        """Normal random numbers for each of this replica's examples: `shape` is one example's.
        The same numbers on any number of replicas, and again after a resume."""
        arguments = {"mean": mean, "stddev": stddev, "dtype": dtype}
        return self.draw(tf.random.stateless_normal, shape, arguments)

    def uniform(self, shape, minval=0.0, maxval=1.0, dtype=tf.float32):
        """Uniform random numbers in [minval, maxval) for each of this replica's examples."""
        arguments = {"minval": minval, "maxval": maxval, "dtype": dtype}
        return self.draw(tf.random.stateless_uniform, shape, arguments)

    def draw(self, kind, shape, arguments):
        """This replica's rows of a global batch of `kind` random numbers keyed by (seed,
        steps run, the draw's number in the step): the steps run are checkpointed."""
        key = tf.constant([self.seed, self.draws], tf.int64)
        self.draws += 1
        seed = tf.random.experimental.stateless_fold_in(key, self.step)
        context = tf.distribute.get_replica_context()
        share = self.global_batch_size // context.num_replicas_in_sync
        first = context.replica_id_in_sync_group * share
        numbers = kind([self.global_batch_size, *shape], seed, **arguments)
        return numbers[first : first + share]


def clipped(optimizer, gradients, kind, limit):
    """Gradients summed over the replicas, clipped (`kind`, `limit`) as unscaled ones."""
    scale = optimizer.dynamic_scale if scaled(optimizer) else None
    if scale is not None:
        gradients = [g / tf.cast(scale, g.dtype) for g in gradients]
    gradients = CLIPS[kind](gradients, limit)
    if scale is not None:
        gradients = [g * tf.cast(scale, g.dtype) for g in gradients]
    return gradients


def require_gradients(gradients, variables, optimizer):
    """A one-line error naming each variable the loss does not reach (found at trace time)."""
    unused = [variable_path(v) for g, v in zip(gradients, variables) if g is None]
    if unused:
        raise UserError(
            f"the step's loss for `{optimizer}` does not reach {', '.join(unused)}"
        )


def checked_logs(returned, declared, step):
    """The step's returned figures, each by its declared name (a one-line error otherwise)."""
    if not isinstance(returned, dict):
        raise UserError(
            f"{step} returns {type(returned).__name__}, not a dict of its `logs`"
        )
    extra = [f"`{k}`" for k in returned if k not in declared]
    missing = [f"`{k}`" for k in declared if k not in returned]
    if extra or missing:
        said = [
            f"undeclared {', '.join(extra)}" if extra else "",
            f"missing {', '.join(missing)}" if missing else "",
        ]
        fix = f"algorithm.logs declares {', '.join(f'`{k}`' for k in declared)}"
        raise UserError(f"{step} returns {'; '.join(s for s in said if s)} ({fix})")
    return {k: tf.cast(tf.convert_to_tensor(returned[k]), tf.float32) for k in declared}
