"""Where a run is (`RunState`): the epoch done, the step reached, the steps run, the
rate used and the first non-finite step, all checkpointed; the steps of a call carry the
per-step figures (`start`, `record`) and the call keeps them once (`fold`)."""

import tensorflow as tf


class RunState(tf.Module):
    """Where the run is: the epoch done, the step reached in the next, the steps run."""

    def __init__(self, outputs=(), figures=None):
        """`outputs`: the outputs whose losses `record` keeps, named `<output>_loss` beside the
        `loss`; or `figures`: an algorithm's own figures, named as they are, beside their `sum`.
        """
        super().__init__(name="run_state")
        if figures is None:
            self.names = ["loss", *(f"{name}_loss" for name in outputs)]
        else:
            self.names = ["sum", *figures]
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

    def start(self, optimizer):
        """What the steps of a call carry: the rate used, the steps run, the first
        non-finite step and its losses, and the optimizer's updates when the call starts.
        """
        return {
            "learning_rate": tf.identity(self.learning_rate),
            "steps_run": tf.identity(self.steps_run),
            "bad_step": tf.identity(self.bad_step),
            "bad_losses": tf.identity(self.bad_losses),
            "updates": tf.cast(optimizer.iterations, tf.int64),
        }

    def record_rate(self, carried, optimizer):
        """Remember the rate this step uses (what the history's `lr` reports)."""
        return {
            **carried,
            "learning_rate": tf.cast(optimizer.learning_rate, tf.float32),
        }

    def record(self, carried, loss, task_losses):
        """Count the step; remember the first non-finite one.

        Cheaper than skipping: the loop stops after the running steps; nothing after the
        last checkpoint is saved.
        """
        context = tf.distribute.get_replica_context()
        replicas = context.num_replicas_in_sync
        means = [tf.reduce_mean(v) / replicas for v in task_losses.values()]
        losses = context.all_reduce("sum", tf.stack([loss, *means]))
        first = ~tf.math.is_finite(losses[0]) & (carried["bad_step"] < 0)
        bad_step = tf.where(first, carried["steps_run"], carried["bad_step"])
        bad_losses = tf.where(first, losses, carried["bad_losses"])
        return {
            **self.count(carried),
            "bad_step": bad_step,
            "bad_losses": bad_losses,
        }

    def count(self, carried):
        """Count the step (a step that skips its non-finite updates records nothing else)."""
        return {**carried, "steps_run": carried["steps_run"] + 1}

    def fold(self, carried, optimizer, steps):
        """Keep what the `steps` steps of a call carried; count the updates they skipped."""
        self.learning_rate.assign(carried["learning_rate"])
        self.bad_step.assign(carried["bad_step"])
        self.bad_losses.assign(carried["bad_losses"])
        self.steps_run.assign_add(tf.cast(steps, tf.int64))
        updates = tf.cast(optimizer.iterations, tf.int64)
        applied = (
            updates - carried["updates"]
        )  # fewer than the steps: some were skipped
        self.skipped.assign_add(tf.cast(steps, tf.int64) - applied)
        self.updates.assign(updates)

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
