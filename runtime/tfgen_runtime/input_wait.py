"""How long a streamed run's training steps wait for their input, measured once.

The first epoch a process trains whole from tf.data (with an XLA-compiled step, the
first after the one that compiled it) is timed call by call. Its last steps then run one
call each, in pairs: a pause long enough for the pipeline to have batches ready, one
step (it runs just after a sleep: the scheduler favours it), and one more step that
waits for nothing. What the epoch's calls took beyond that many such steps is the time
they waited for input (a shuffle buffer filling at the epoch's start included). The
steps and their order are the same as without the measurement; only the calls are cut
differently.
"""

import statistics
import time

WARN_FROM = 0.2  # of the epoch's training time
LEAST_WAIT = 0.25  # seconds: a shorter wait is not worth a line (nor above the noise)
PAIRS = 3  # the epoch's last 2 x PAIRS steps: a pause, a step, the step timed
PAUSE_STEPS = 3  # the pause: the time of this many steps as the epoch ran
LONGEST_PAUSE = 0.5  # seconds


class InputWait:
    """Measures one epoch's wait for input; the fraction and a line about it after."""

    def __init__(self, run_steps, steps_per_epoch, compiled):
        """Args:
        run_steps: the trainer's `run_steps(epoch, step, steps)`, one compiled call.
        steps_per_epoch: an epoch's steps.
        compiled: whether the step is a tf.function (XLA compiles it on its first run).
        """
        self.run_steps = run_steps
        self.steps_per_epoch = steps_per_epoch
        self.tail = steps_per_epoch - 2 * PAIRS  # the first step run one call each
        self.compiled = compiled
        self.epoch = None  # the epoch measured
        self.warmed = False  # a call has run steps (traced, compiled) in this process
        self.fraction = None  # of the measured epoch's timed calls, once measured
        self.wait = 0.0  # seconds
        self.seconds = 0.0  # the timed calls before the tail: their time and steps
        self.steps = 0
        self.ready = []  # seconds of the tail's steps that found their batch ready
        self.shown = False

    def run(self, epoch, step, steps):
        """Run `steps` steps of `epoch` from `step`, timed when the epoch is measured."""
        self.choose(epoch, step)
        if epoch != self.epoch or self.fraction is not None:
            self.run_steps(epoch, step, steps)
            self.warmed = self.warmed or steps > 0
            return
        if not self.warmed:  # a call of no step traces the loop: not timed
            self.run_steps(epoch, step, 0)
            self.warmed = True
        before_tail = max(0, min(steps, self.tail - step))
        if before_tail:
            self.seconds += self.timed(epoch, step, before_tail)
            self.steps += before_tail
        for tail_step in range(step + before_tail, step + steps):
            self.run_tail_step(epoch, tail_step)
        if step + steps == self.steps_per_epoch:
            busy = self.steps * statistics.median(self.ready)
            self.wait = max(0.0, self.seconds - busy)
            self.fraction = self.wait / self.seconds

    def choose(self, epoch, step):
        """Measure `epoch` if it starts here, is long enough, and compiles nothing."""
        long_enough = self.tail >= 4 * PAIRS
        compiles = self.compiled and not self.warmed
        if self.epoch is None and step == 0 and long_enough and not compiles:
            self.epoch = epoch

    def run_tail_step(self, epoch, step):
        """One of the tail's steps: after a pause, or timed (its batch ready)."""
        if (step - self.tail) % 2 == 0:
            time.sleep(min(PAUSE_STEPS * self.seconds / self.steps, LONGEST_PAUSE))
            self.run_steps(epoch, step, 1)
        else:
            self.ready.append(self.timed(epoch, step, 1))

    def timed(self, epoch, step, steps):
        """Seconds of one call of `steps` steps."""
        started = time.perf_counter()
        self.run_steps(epoch, step, steps)
        return time.perf_counter() - started

    def values(self):
        """Once, after the epoch measured: its history value and the warning, when it
        waited more than WARN_FROM of its time (else nothing)."""
        if self.fraction is None or self.shown:
            return {}
        self.shown = True
        if self.fraction <= WARN_FROM or self.wait < LEAST_WAIT:
            return {}
        print(message(self.fraction, self.epoch), flush=True)
        return {"input_wait": round(self.fraction, 3)}


def message(fraction, epoch):
    """The one line about an input-bound epoch: how much it waited, and what to try."""
    waited = f"the steps waited for input {fraction:.0%} of epoch {epoch}'s time"
    tries = (
        "`cache: true` on data.train, num_parallel_calls=tf.data.AUTOTUNE in the source's"
        " map calls, `in_memory: true` for arrays, fewer Python-side map functions"
        " (tf.py_function); a larger shuffle buffer does not help"
    )
    return f"input-bound: {waited}: try {tries}"
