"""Train a generated script on N logical CPUs with collective all-reduces, and count the
collective ops in the compiled call that runs its training steps.

    python tests/e2e/collectives_runner.py SCRIPT --cpus 2 --counts OUT.json -- ARGS...

MirroredStrategy on CPUs sums across replicas by copying to one device (no op to count):
here its all-reduces are TensorFlow's collective ones (CollectiveReduceV2, one op per
replica and all-reduce), as across GPUs or workers. OUT.json: op type -> count, over the
call's graph and every function it holds (the step loop's body, conds).
"""

from __future__ import annotations

import json
from collections import Counter

from harness import load_script, parse, parser, split_cpu

COLLECTIVES = ("CollectiveReduce", "CollectiveReduceV2", "CollectiveReduceV3", "NcclAllReduce", "CollectiveGather")


def collective_mirrored(tf):
    """MirroredStrategy, with collective all-reduces across its devices."""
    from tensorflow.python.distribute import cross_device_ops

    mirrored = tf.distribute.MirroredStrategy

    def strategy(devices=None, **_):
        devices = devices or [d.name for d in tf.config.list_logical_devices("CPU")]
        options = tf.distribute.experimental.CommunicationOptions()
        reduce = cross_device_ops.CollectiveAllReduce(devices=devices, group_size=len(devices), options=options)
        return mirrored(devices, cross_device_ops=reduce)

    return strategy


def collective_counts(concrete) -> dict:
    """Collective op types -> count in a concrete function's graph and its library's functions."""
    graph = concrete.graph.as_graph_def()
    nodes = list(graph.node) + [node for function in graph.library.function for node in function.node_def]
    counts = Counter(node.op for node in nodes if node.op in COLLECTIVES)
    return dict(counts)


def main() -> None:
    arguments = parser()
    arguments.add_argument("--counts")
    options, argv = parse(arguments)
    split_cpu(options.cpus)
    import tensorflow as tf

    tf.distribute.MirroredStrategy = collective_mirrored(tf)
    module = load_script(options.script)
    trainers = []
    built = module.Trainer

    class Recording(built):
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            trainers.append(self)

    module.Trainer = Recording
    module.main(argv)
    call = trainers[-1].train_from_memory.get_concrete_function(tf.constant(1), tf.constant(0), tf.constant(2))
    with open(options.counts, "w") as handle:
        json.dump(collective_counts(call), handle)


if __name__ == "__main__":
    main()
