"""The devices a strategy runs on: checked to exist, or split from the CPU for testing;
what float16 costs where there is no GPU; and how a run computes the same bits every time.
"""

import sys

import tensorflow as tf

from .errors import UserError


def make_deterministic():
    """Bit-identical reruns and resumes on CPU (`deterministic: true`).

    Every op picks a deterministic kernel, and grappler's arithmetic optimizer is off: it
    reorders float sums in some processes and not in others (measured: a resumed epoch's
    logged loss one ulp off the uninterrupted run's in 3 of 18 resumes; 0 of 10 without it).
    """
    tf.config.experimental.enable_op_determinism()
    tf.config.optimizer.set_experimental_options({"arithmetic_optimization": False})


def mirrored_devices(devices, cpu_replicas):
    """What a MirroredStrategy mirrors over.

    N logical CPU devices with `cpu_replicas` (a testing aid, not a speed-up), else
    `devices` once each is found, else None (every GPU, else the CPU).
    """
    if cpu_replicas is None:
        if devices is None:
            return None
        return [existing_device(name) for name in devices]
    cpu = tf.config.list_physical_devices("CPU")[0]
    split = [tf.config.LogicalDeviceConfiguration()] * cpu_replicas
    if tf.config.get_logical_device_configuration(cpu) != split:
        try:
            tf.config.set_logical_device_configuration(cpu, split)
        except RuntimeError:  # TensorFlow's devices are set up once per process
            message = "--cpu-replicas: this process already set up its CPU devices"
            raise UserError(message) from None
    return [f"/cpu:{index}" for index in range(cpu_replicas)]


def existing_device(name):
    """`name` when this machine has that device (a missing one would hang a strategy)."""
    wanted = tf.DeviceSpec.from_string(name)
    wanted_type = (wanted.device_type or "").upper()
    wanted_index = wanted.device_index or 0
    found = [device.name for device in tf.config.list_logical_devices()]
    for other in map(tf.DeviceSpec.from_string, found):
        if other.device_type == wanted_type and other.device_index == wanted_index:
            return name
    raise UserError(f"no device {name} here; the devices are {', '.join(found)}")


def warn_if_float16_on_cpu():
    """One line when float16 computes on a CPU (no GPU visible): slower there."""
    if tf.config.list_logical_devices("GPU"):
        return
    slower = (
        "on a CPU float16 is slower than float32 (`precision: float32` there); with "
        "AVX-512 FP16, oneDNN's float16 kernels ran a CNN ~10x slower "
        "(TF_ENABLE_ONEDNN_OPTS=0 turns them off)"
    )
    print(f"warning: mixed_float16 with no GPU visible: {slower}", file=sys.stderr)
