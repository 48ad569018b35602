"""Fixed lines of script code the planner picks by a decision (an enum member, or a pair of
flags): tables, so that a template lays one field out instead of choosing among branches."""

from __future__ import annotations

from tfgen.generate.code import literal
from tfgen.generate.decisions import Jit
from tfgen.generate.views import Boundary, ClipKind, LossTotal, StrategyKind

# main's lines that make `strategy`, by its kind (given `spec.strategy`).
STRATEGY_LINES = {
    StrategyKind.DEFAULT: lambda _: [
        "# The default strategy: one device, through the same distributed code path as many.",
        "strategy = tf.distribute.get_strategy()",
    ],
    StrategyKind.ONE_DEVICE: lambda strategy: [
        f"strategy = tf.distribute.OneDeviceStrategy(rt.existing_device({literal(strategy.device)}))"
    ],
    StrategyKind.MIRRORED: lambda strategy: [
        "# Synchronous data parallelism over this machine's devices (checked to exist: a missing one",
        "# would hang), or over N logical CPU devices with --cpu-replicas N (to test the replicas).",
        f"devices = rt.mirrored_devices({literal(strategy.devices)}, args.cpu_replicas)",
        "strategy = tf.distribute.MirroredStrategy(devices)",
    ],
    StrategyKind.MULTI_WORKER: lambda strategy: [
        "# Synchronous data parallelism over the workers that TF_CONFIG names.",
        "implementation = tf.distribute.experimental.CommunicationImplementation." + strategy.communication.upper(),
        "options = tf.distribute.experimental.CommunicationOptions(implementation=implementation"
        + (", timeout_seconds=COLLECTIVE_TIMEOUT_SECONDS)" if strategy.timeout_seconds else ")"),
        "strategy = tf.distribute.MultiWorkerMirroredStrategy(communication_options=options)",
    ],
}


# The steps left to each step count a chunk of steps must stop at.
CHUNK_ENDS = {
    Boundary.CHECKPOINT: "CHECKPOINT_EVERY_STEPS - done % CHECKPOINT_EVERY_STEPS",
    Boundary.SUMMARIES: "LOG_EVERY_STEPS - done % LOG_EVERY_STEPS",
    Boundary.PROFILE: "trainer.profiler.steps_to_edge(done)",
}


# build_optimizer by what scales the rate (a plateau, a phase): its parameters, the Trainer's
# arguments, its docstring.
_SCALED = '"""The optimizer; its rate is scaled by'
BUILD_OPTIMIZER = {
    (True, True): (
        "plateau, phase_factor",
        "self.plateau, self.phase_plan.factor",
        [
            f"{_SCALED} `plateau.factor` (ReduceLROnPlateau's work),",
            'then by the phase\'s `learning_rate_factor`."""',
        ],
    ),
    (True, False): ("plateau", "self.plateau", [f'{_SCALED} `plateau.factor` (ReduceLROnPlateau\'s work)."""']),
    (False, True): ("phase_factor", "self.phase_plan.factor", [f'{_SCALED} the phase\'s `learning_rate_factor`."""']),
    (False, False): ("", "", []),
}


# The train step's XLA decorator, with why, by where it is compiled (Jit.OFF: none, see _compile_lines).
COMPILE_LINES = {
    Jit.GPU: [
        "# XLA-compile the step where a GPU is visible (on CPU, oneDNN's convolutions beat XLA's);",
        "# no AutoGraph: the step has no Python control flow over tensors for it to rewrite.",
        '@tf.function(jit_compile=bool(tf.config.list_physical_devices("GPU")), autograph=False)',
    ],
    Jit.LONG: ["# XLA-compiled in long runs only (rt.StandardTrainer.compile_step_if_long)."],
    Jit.ON: [
        "# XLA-compile the per-replica step (not the loop that pulls from the iterator); no",
        "# AutoGraph: the step has no Python control flow over tensors for it to rewrite.",
        "@tf.function(jit_compile=True, autograph=False)",
    ],
}


# How clip_across_replicas clips the summed gradients, by the `train.gradient_clipping` field set.
CLIP_LINES = {
    ClipKind.GLOBAL_NORM: "gradients, _ = tf.clip_by_global_norm(gradients, CLIP_LIMIT)",
    ClipKind.NORM: "gradients = [tf.clip_by_norm(g, CLIP_LIMIT) for g in gradients]",
    ClipKind.VALUE: "gradients = [tf.clip_by_value(g, -CLIP_LIMIT, CLIP_LIMIT) for g in gradients]",
}
# The per-example loss the step optimises, from the outputs' `task_losses`.
LOSS_TOTAL_CODE = {
    LossTotal.SUM: "tf.add_n(list(task_losses.values()))",
    LossTotal.WEIGHTED: "total_loss(task_losses)",
    LossTotal.LEARNED: "self.weighting.total(task_losses)",
}
