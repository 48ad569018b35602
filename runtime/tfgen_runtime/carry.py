"""What the steps of one compiled call carry from step to step (loop variables): the training
metrics' states and the run state's figures, folded into their variables once per call.

Each replica carries its own part of the metrics' states (as their variables keep it) and
the same run-state figures (`RunState.start`). The steps update the carried tensors with the
same arithmetic, in the same order, as the variables would have been: the figures the
history reads are the same to the last digit.
"""

import keras
import tensorflow as tf


def metric_states(metrics):
    """Each metric's variables, read (in a replica: this replica's part), by history name."""
    return {
        name: [tf.identity(v.value) for v in metric.variables]
        for name, metric in metrics.items()
    }


def carried_metrics(carried, metrics, update, *args):
    """`update(metrics, *args)` applied to the carried states: the carry with the new ones.

    Keras's StatelessScope gives the metrics the carried states to read, and keeps what
    they would assign, so that any metric (sums and counts, AUC's buckets) is carried.
    """
    states = carried["metrics"]
    pairs = [
        (v, s) for name, m in metrics.items() for v, s in zip(m.variables, states[name])
    ]
    with keras.StatelessScope(state_mapping=pairs) as scope:
        update(metrics, *args)
    new = {}
    for name, metric in metrics.items():
        current = [scope.get_current_value(v) for v in metric.variables]
        new[name] = [s if c is None else c for c, s in zip(current, states[name])]
    return {**carried, "metrics": new}


def fold_metrics(metrics, states):
    """Assign the carried states to the metrics' variables (this replica's part)."""
    for name, metric in metrics.items():
        for variable, state in zip(metric.variables, states[name]):
            variable.assign(state)


class SummedOnFirst:
    """Keeps the summed metric states of several replicas on the first replica of the
    whole run (their sum there, zeros on the others).

    A restore splits a summed state evenly over the replicas; a resumed epoch would then
    add its steps to other parts than the uninterrupted run did, and the history's figure
    would round differently. Gathered when a checkpoint is saved (`gather`) and put back
    that way after a restore (`put`), the parts are the same on both runs, and the steps
    run no collective for it.
    """

    def __init__(self, variables):
        self.numbers = [n for n, v in enumerate(variables) if v.aggregation == "sum"]
        self.variables = [variables[n] for n in self.numbers]
        first = self.variables[0].value if self.variables else None
        self.strategy = getattr(first, "distribute_strategy", None)
        self.hold = tf.function(self.hold_on_first, autograph=False)

    @property
    def needed(self):
        """Whether there are summed states on several replicas."""
        return self.strategy is not None and self.strategy.num_replicas_in_sync > 1

    def gather(self):
        """Move each summed state's total onto the first replica."""
        if self.needed:
            self.hold([v.value.read_value() for v in self.variables])

    def put(self, saved):
        """Put saved totals back on the first replica (`saved`: a value for each of the
        variables given, in order; None: not saved, its total now is kept)."""
        if self.needed:
            totals = [v.value.read_value() for v in self.variables]
            given = [saved[n] for n in self.numbers]
            self.hold(
                [t if g is None else tf.constant(g) for t, g in zip(totals, given)]
            )

    def hold_on_first(self, values):
        """On every replica, its part of each summed state: the total on the first, zeros
        on the others."""
        self.strategy.run(self.hold_on_replica, args=(values,))

    def hold_on_replica(self, values):
        context = tf.distribute.get_replica_context()
        first = tf.equal(context.replica_id_in_sync_group, 0)
        for variable, value in zip(self.variables, values):
            variable.assign(tf.where(first, value, tf.zeros_like(value)))


def carry_out(strategy, value):
    """A replica function's result as plain tensors a loop can carry: one structure per
    replica (a distributed value cannot be a loop variable)."""
    return strategy.experimental_local_results(value)


def carry_in(strategy, carried):
    """The per-replica structures of `carry_out` as the value a replica function takes."""
    if len(carried) == 1:
        return carried[0]
    return strategy.experimental_distribute_values_from_function(
        lambda context: carried[context.replica_id_in_sync_group]
    )
