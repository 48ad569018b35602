"""Run a generated gan script, SIGKILLed at a known checkpoint or to its end, and keep the weights
of both exported networks.

    python tests/e2e/gan_runner.py SCRIPT --weights OUT.npz [--cpus N] [--kill-in-epoch E]
        [--networks A,B] -- ARGS...

`--kill-in-epoch E`: SIGKILL right after the first checkpoint saved inside epoch E (see
resume_runner.py). A run that ends writes generator.keras's then discriminator.keras's weights (or
those of each of --networks: a custom step's), in order, to OUT.npz.
"""

from __future__ import annotations

from harness import load_script, parse, parser, split_cpu
from resume_runner import kill_in_epoch


def main() -> None:
    arguments = parser()
    arguments.add_argument("--weights", required=True)
    arguments.add_argument("--kill-in-epoch", type=int)
    arguments.add_argument("--networks", default="generator,discriminator")
    options, argv = parse(arguments)

    import numpy as np

    split_cpu(options.cpus)
    module = load_script(options.script)
    if options.kill_in_epoch:
        kill_in_epoch(module.rt, options.kill_in_epoch)
    module.main(argv)
    output = argv[argv.index("--output-dir") + 1]
    weights = []
    for name in options.networks.split(","):
        weights += module.keras.models.load_model(f"{output}/{name}.keras").get_weights()
    np.savez(options.weights, *weights)


if __name__ == "__main__":
    main()
