"""Where a run is (`RunState`): the epoch done, the step reached, the steps run, the
rate used and the first non-finite step, all checkpointed."""

import tensorflow as tf


class RunState(tf.Module):
    """Where the run is: the epoch done, the step reached in the next, the steps run."""

    def __init__(self, outputs):
        super().__init__(name="run_state")
        self.names = ["loss", *(f"{name}_loss" for name in outputs)]
        first = tf.VariableAggregation.ONLY_FIRST_REPLICA  # the same on every replica
        self.epoch = tf.Variable(0, dtype=tf.int64)
        self.step_in_epoch = tf.Variable(0, dtype=tf.int64)
        self.steps_run = tf.Variable(0, dtype=tf.int64, aggregation=first)
        self.learning_rate = tf.Variable(0.0, trainable=False, aggregation=first)
        self.gradient_norm = tf.Variable(0.0, trainable=False, aggregation=first)
        # The first step whose loss was non-finite (-1: none), and its losses.
        self.bad_step = tf.Variable(tf.constant(-1, tf.int64), aggregation=first)
        self.bad_losses = tf.Variable(tf.zeros([len(self.names)]), aggregation=first)
        # Updates skipped (non-finite), counted; and the optimizer's updates last seen.
        self.skipped = tf.Variable(0, dtype=tf.int64, aggregation=first)
        self.updates = tf.Variable(0, dtype=tf.int64, aggregation=first)

    def finish_epoch(self, epoch):
        self.epoch.assign(epoch)
        self.step_in_epoch.assign(0)

    def record_rate(self, optimizer):
        """Remember the rate this step uses (what the history's `lr` reports)."""
        self.learning_rate.assign(tf.cast(optimizer.learning_rate, tf.float32))

    def record(self, loss, task_losses, optimizer):
        """Count the step; remember the first non-finite one.

        Cheaper than skipping: the loop stops after the running steps; nothing after the
        last checkpoint is saved.
        """
        context = tf.distribute.get_replica_context()
        replicas = context.num_replicas_in_sync
        means = [tf.reduce_mean(v) / replicas for v in task_losses.values()]
        losses = context.all_reduce("sum", tf.stack([loss, *means]))
        first = ~tf.math.is_finite(losses[0]) & (self.bad_step < 0)
        self.bad_step.assign(tf.where(first, self.steps_run, self.bad_step))
        self.bad_losses.assign(tf.where(first, losses, self.bad_losses))
        self.steps_run.assign_add(1)
        applied = tf.cast(optimizer.iterations, tf.int64) - self.updates  # 0: skipped
        self.skipped.assign_add(1 - applied)
        self.updates.assign_add(applied)

    def check_finite(self, epoch, last_checkpoint):
        """Raise FloatingPointError, with the losses, if a non-finite step was seen."""
        if self.bad_step.numpy() < 0:
            return
        pairs = zip(self.names, self.bad_losses.numpy())
        values = ", ".join(f"{k} = {v}" for k, v in pairs)
        step = self.bad_step.numpy() + 1
        message = f"the loss became non-finite at step {step} (epoch {epoch}): {values}"
        self.stop(message, last_checkpoint)

    def stop(self, message, last_checkpoint):
        """Raise FloatingPointError: `message`, and that nothing since was saved."""
        kept = f"nothing after the last good checkpoint ({last_checkpoint}) was saved"
        raise FloatingPointError(f"{message}; {kept}")
