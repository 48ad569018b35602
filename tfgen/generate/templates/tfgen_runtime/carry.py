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
    """Assign the carried states to the metrics' variables (this replica's part; a
    summed one gathered on the first replica, see `gathered`)."""
    context = tf.distribute.get_replica_context()
    for name, metric in metrics.items():
        for variable, state in zip(metric.variables, states[name]):
            variable.assign(gathered(context, variable, state))


def gathered(context, variable, part):
    """A summed metric state of several replicas: the sum of their parts on the first
    replica, zeros on the others.

    A restore splits a summed state evenly over the replicas; a resumed epoch would then
    add its steps to other parts than the uninterrupted run did, and the history's figure
    would round differently. Gathered after every call, and put back gathered after a
    restore (`first_replica_holds`), the parts are the same on both.
    """
    if context.num_replicas_in_sync == 1 or variable.aggregation != "sum":
        return part
    total = context.all_reduce(tf.distribute.ReduceOp.SUM, part)
    first = tf.equal(context.replica_id_in_sync_group, 0)
    return tf.where(first, total, tf.zeros_like(total))


def first_replica_holds(variables, saved):
    """Put restored summed metric states back as `gathered` keeps them: each saved sum
    (`saved`: the values, in order; None: not saved) on the first replica of the whole
    run, zeros on the others."""
    held = [
        (variable, tf.constant(value))
        for variable, value in zip(variables, saved)
        if value is not None and variable.aggregation == "sum"
    ]
    strategy = (
        getattr(variables[0].value, "distribute_strategy", None) if held else None
    )
    if strategy is not None and strategy.num_replicas_in_sync > 1:
        hold = tf.function(lambda: strategy.run(hold_on_first, args=(held,)))
        hold()


def hold_on_first(held):
    """This replica's part of each summed state: its value on the first replica, else zeros."""
    context = tf.distribute.get_replica_context()
    first = tf.equal(context.replica_id_in_sync_group, 0)
    for variable, value in held:
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
