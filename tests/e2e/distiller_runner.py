"""Train a generated distillation script, then keras.distillation.Distiller under `fit` on the
same initial weights, teacher and batches; write both runs' per-epoch losses as JSON.

    python tests/e2e/distiller_runner.py SCRIPT --out OUT.json -- ARGS...

The script's spec must not shuffle (its in-memory batches are then the arrays' rows in order,
as `fit` reads them unshuffled) and must train for whole batches (drop_remainder).
"""

from __future__ import annotations

import json

from harness import load_script, parse, parser, record_models


def distiller_losses(module, initial, epochs: int) -> dict[str, list[float]]:
    """`fit`'s per-epoch losses of a Distiller made of the script's own parts."""
    import keras
    import tensorflow as tf
    from keras.distillation import Distiller, LogitsDistillation

    (features, targets), _ = module.load_data()
    student = module.build_model()
    student.set_weights(initial)
    teacher = keras.saving.load_model(module.TEACHER, compile=False)
    distiller = Distiller(
        teacher=teacher,
        student=student,
        # A KLDivergence instance, keyed as the outputs are (a single loss does not pair with keyed
        # outputs). Keras 3.15's default, the string "kl_divergence", becomes the function
        # keras.losses.kl_divergence, which LogitsDistillation's `isinstance(loss_fn, KLDivergence)`
        # misses: it then takes the KL of the raw tempered logits clipped to [1e-7, 1], without the
        # softmax or T^2 its docstring promises (negative losses; docs/algorithms.md).
        distillation_losses=LogitsDistillation(
            temperature=module.TEMPERATURE, loss={name: keras.losses.KLDivergence() for name in module.LOSSES}
        ),
        student_loss_weight=module.STUDENT_LOSS_WEIGHT,
    )
    losses = {name: keras.losses.SparseCategoricalCrossentropy(from_logits=True) for name in module.LOSSES}
    distiller.compile(optimizer=module.build_optimizer(), loss=losses, jit_compile=False)
    # Keras 3.15: compile keeps the losses in a TrackedDict, which tree.map_structure refuses to
    # pair with a plain dict of targets ("Custom node type mismatch"); a plain dict, untracked.
    object.__setattr__(distiller, "_student_loss", dict(losses))
    batches = tf.data.Dataset.from_tensor_slices((features, targets)).batch(
        module.GLOBAL_BATCH_SIZE, drop_remainder=True
    )
    history = distiller.fit(batches, epochs=epochs, verbose=0, shuffle=False)
    return {key: [float(v) for v in values] for key, values in history.history.items()}


def main() -> None:
    arguments = parser()
    arguments.add_argument("--out", required=True)
    options, argv = parse(arguments)
    module = load_script(options.script)
    initial = []
    record_models(module, lambda model: initial.append(model.get_weights()))
    rows = module.main(argv)
    fit = distiller_losses(module, initial[0], len(rows))
    with open(options.out, "w") as handle:
        json.dump({"script": rows, "distiller": fit}, handle)


if __name__ == "__main__":
    main()
