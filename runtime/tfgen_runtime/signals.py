"""Stop signals: SIGTERM (preemption) or SIGINT (Ctrl-C) saves a checkpoint and exits."""

import signal
import sys

import tensorflow as tf

SIGNALS = (signal.SIGTERM, signal.SIGINT)  # a preemption notice first


class StopSignals:
    """SIGTERM or SIGINT: noted, so that the loop saves and exits between steps.

    Used as `with StopSignals(strategy) as stop:` around the epochs; the previous
    handlers are put back on leaving.
    """

    def __init__(self, strategy):
        self.strategy = strategy
        self.received = []
        self.previous = {}

    def __enter__(self):
        for number in SIGNALS:
            self.previous[number] = signal.signal(number, self.note)
        return self

    def note(self, number, frame):
        self.received.append(number)

    def __exit__(self, *exc):
        for number, handler in self.previous.items():
            signal.signal(number, handler)

    def save_and_exit_if_asked(self, checkpoint, epoch, step, steps_per_epoch):
        """After a signal to any worker: all save `checkpoint` at `step` of `epoch` and
        exit with 128 + the signal's number (saving is collective)."""
        number = self.agreed()
        if not number:
            return
        saved = checkpoint.save_in_epoch(step)
        name = signal.Signals(number).name
        where = f"epoch {epoch}, step {step}/{steps_per_epoch}"
        again = "run the same command again to resume."
        print(f"Stopped by {name} at {where}: saved {saved}; {again}")
        sys.exit(128 + number)

    def agreed(self):
        """The signal noted here or (multi-worker: one all-reduce) by any worker; 0: none."""
        noted = [float(number in self.received) for number in SIGNALS]
        if isinstance(self.strategy, tf.distribute.MultiWorkerMirroredStrategy):
            noted = self.noted_anywhere(noted)
        for number, count in zip(SIGNALS, noted):
            if count:
                return number
        return 0

    def noted_anywhere(self, noted):
        """Each signal's count over the workers (every worker must call this)."""
        flags = self.strategy.experimental_distribute_values_from_function(
            lambda _: tf.constant(noted)
        )
        return self.strategy.reduce("SUM", flags, axis=None).numpy()
