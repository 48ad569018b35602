"""keras.io's "Knowledge Distillation" (Kenneth Borup), restated on the 8x8 digits.

Source: https://github.com/keras-team/keras-io/blob/master/examples/vision/knowledge_distillation.py
(read at commit 501fb4cbe62e5b5c434393f512a452ef833640a1). This file restates that program's
computation in its own code (the published text is not copied here); every figure is the
published one. What differs from the original, and only this:
- data: `published_data.digits()` (8x8x1 digits in [0, 1]) instead of MNIST (28x28x1 in [0, 1]);
  the networks' input shape is (8, 8, 1) accordingly (their layers and sizes are the published ones);
  no test split (the digits have none), so no `evaluate`;
- `main(seed, epochs)` sets Keras's seed and the distillation epochs (published: unseeded, 3);
  the comparison with a student trained from scratch is left out.
Unchanged: the teacher (Conv 256 / Conv 512) trained 5 epochs with Adam() on the data, the student
(Conv 16 / Conv 32), Adam() (learning rate 0.001), batch 32 (`fit`'s default), shuffled,
alpha 0.1, temperature 10, SparseCategoricalCrossentropy(from_logits=True) and KLDivergence()
of the tempered softmaxes times T^2, logged `student_loss` and `distillation_loss` per batch.

    python benchmarks/published/knowledge_distillation.py --seed 1 --epochs 3
"""

from __future__ import annotations

import argparse
import json

import keras
import tensorflow as tf
from keras import layers
from published_data import EpochMeans, digits

SHAPE = (8, 8, 1)  # published: (28, 28, 1)


class Distiller(keras.Model):
    """The published `train_step` override: the frozen teacher's tempered softmax against the
    student's, weighted against the student's loss on the labels."""

    def __init__(self, student, teacher):
        super().__init__()
        self.teacher = teacher
        self.student = student

    def compile(self, optimizer, metrics, student_loss_fn, distillation_loss_fn, alpha=0.1, temperature=3):
        super().compile(optimizer=optimizer, metrics=metrics)
        self.student_loss_fn = student_loss_fn
        self.distillation_loss_fn = distillation_loss_fn
        self.alpha = alpha
        self.temperature = temperature

    def train_step(self, data):
        x, y = data
        teacher_predictions = self.teacher(x, training=False)
        with tf.GradientTape() as tape:
            student_predictions = self.student(x, training=True)
            student_loss = self.student_loss_fn(y, student_predictions)
            soft_teacher = tf.nn.softmax(teacher_predictions / self.temperature, axis=1)
            soft_student = tf.nn.softmax(student_predictions / self.temperature, axis=1)
            distillation_loss = self.distillation_loss_fn(soft_teacher, soft_student) * self.temperature**2
            loss = self.alpha * student_loss + (1 - self.alpha) * distillation_loss
        variables = self.student.trainable_variables
        self.optimizer.apply_gradients(zip(tape.gradient(loss, variables), variables, strict=False))
        self.compiled_metrics.update_state(y, student_predictions)
        results = {m.name: m.result() for m in self.metrics}
        results.update({"student_loss": student_loss, "distillation_loss": distillation_loss})
        return results


def build_teacher():
    return keras.Sequential(
        [
            keras.Input(shape=SHAPE),
            layers.Conv2D(256, (3, 3), strides=(2, 2), padding="same"),
            layers.LeakyReLU(negative_slope=0.2),
            layers.MaxPooling2D(pool_size=(2, 2), strides=(1, 1), padding="same"),
            layers.Conv2D(512, (3, 3), strides=(2, 2), padding="same"),
            layers.Flatten(),
            layers.Dense(10),
        ],
        name="teacher",
    )


def build_student():
    return keras.Sequential(
        [
            keras.Input(shape=SHAPE),
            layers.Conv2D(16, (3, 3), strides=(2, 2), padding="same"),
            layers.LeakyReLU(negative_slope=0.2),
            layers.MaxPooling2D(pool_size=(2, 2), strides=(1, 1), padding="same"),
            layers.Conv2D(32, (3, 3), strides=(2, 2), padding="same"),
            layers.Flatten(),
            layers.Dense(10),
        ],
        name="student",
    )


def train_teacher(teacher, x, y, epochs=5):
    """The teacher trained as published: Adam(), cross-entropy on logits, `epochs` epochs."""
    teacher.compile(
        optimizer=keras.optimizers.Adam(),
        loss=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        metrics=[keras.metrics.SparseCategoricalAccuracy()],
    )
    teacher.fit(x, y, epochs=epochs, verbose=0)
    return teacher


def compiled_distiller(student, teacher):
    """The published Distiller, compiled with the published settings."""
    distiller = Distiller(student=student, teacher=teacher)
    distiller.compile(
        optimizer=keras.optimizers.Adam(),
        metrics=[keras.metrics.SparseCategoricalAccuracy()],
        student_loss_fn=keras.losses.SparseCategoricalCrossentropy(from_logits=True),
        distillation_loss_fn=keras.losses.KLDivergence(),
        alpha=0.1,
        temperature=10,
    )
    return distiller


def main(seed: int, epochs: int, teacher_path: str | None = None) -> list[dict]:
    """The published program on the digits: train the teacher, distil; each epoch's mean losses."""
    keras.utils.set_random_seed(seed)
    x, y = digits()
    teacher = train_teacher(build_teacher(), x, y)
    if teacher_path:
        teacher.save(teacher_path)
    means = EpochMeans(["student_loss", "distillation_loss"])
    compiled_distiller(build_student(), teacher).fit(x, y, epochs=epochs, verbose=0, callbacks=[means])
    return means.epochs


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=3)
    parser.add_argument("--teacher", help="also save the trained teacher here")
    options = parser.parse_args()
    print(json.dumps(main(options.seed, options.epochs, options.teacher)))
