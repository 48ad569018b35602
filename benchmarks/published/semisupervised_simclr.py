"""keras.io's "Semi-supervised image classification using contrastive pretraining with SimCLR"
(András Béres), its contrastive pretraining restated on the 8x8 digits.

Source: https://github.com/keras-team/keras-io/blob/master/examples/vision/semisupervised_simclr.py
(read at commit 01aae9bc9bddada854008af9b54e4cc859328074). This file restates that program's
computation in its own code (the published text is not copied here); every figure is the
published one. What differs from the original, and only this:
- data: `published_data.digits()` (1,797 8x8x1 images in [0, 1]) instead of STL-10 (100,000
  unlabeled and 5,000 labeled 96x96x3 images in 0-255): the last 85 digits (STL-10's labeled
  share, 5/105) are the labeled split, the other 1,712 the unlabeled one; no test split, so no
  validation data. Batch 128 (published: 525, "200 steps per epoch" of STL-10; 525 would be 3
  steps of the digits), split as published into 122 unlabeled + 6 labeled examples per step;
- the images are in [0, 1] already, so the augmenters have no `Rescaling(1 / 255)`; one channel,
  so the color affine's matrices are 1x1 (published: 3x3 for RGB);
- the encoder's four stride-2 3x3 convolutions pad `same` (published: `valid`, which cannot go
  below 8x8 four times); their widths, activations and the dense layer are the published ones;
- the contrastive augmentation is one method, `contrastive_views(images)` (published: the two
  augmenter calls inline; it makes the same), so that benchmarks/parity.py can give this step
  tfgen's views; the models' summaries, the supervised baseline and the fine-tuning are left out;
- `main(seed, epochs)` sets Keras's seed and the epochs (published: unseeded, 20).
Unchanged: width 128, temperature 0.1, the augmentations' strengths (contrastive: min area 0.25,
brightness 0.6, jitter 0.2; classification: 0.75, 0.3, 0.1), the projection head (Dense 128 relu,
Dense 128), the linear probe (Dense 10) trained each step on the labeled examples through the
frozen encoder, Adam() for each, the loss: cross-entropy of `p1 @ p2.T / temperature` (each view's
candidates the OTHER view's projections) in both directions, averaged per example, its gradient
taken of the per-example vector (so of the batch's sum); `c_loss`, `c_acc`, `p_loss`, `p_acc`
logged as running means over the epoch.

    python benchmarks/published/semisupervised_simclr.py --seed 1 --epochs 3
"""

from __future__ import annotations

import argparse
import json
import math

import keras
import tensorflow as tf
from keras import layers
from published_data import digits

BATCH_SIZE = 128  # published: 525
LABELED = 85  # published: STL-10's 5,000 of 105,000 images; here the same share of 1,797
WIDTH = 128
TEMPERATURE = 0.1
CONTRASTIVE_AUGMENTATION = {"min_area": 0.25, "brightness": 0.6, "jitter": 0.2}
CLASSIFICATION_AUGMENTATION = {"min_area": 0.75, "brightness": 0.3, "jitter": 0.1}


def batch_sizes(unlabeled: int, labeled: int) -> tuple[int, int]:
    """The published split of a step's batch: `(unlabeled, labeled)` examples per step."""
    steps_per_epoch = (unlabeled + labeled) // BATCH_SIZE
    return unlabeled // steps_per_epoch, labeled // steps_per_epoch


def prepare_dataset(images, labels):
    """The published training data: unlabeled and labeled batches, each shuffled, zipped."""
    unlabeled, labeled = len(images) - LABELED, LABELED
    unlabeled_batch, labeled_batch = batch_sizes(unlabeled, labeled)
    unlabeled_ds = (
        tf.data.Dataset.from_tensor_slices((images[:unlabeled], labels[:unlabeled]))
        .shuffle(buffer_size=10 * unlabeled_batch)
        .batch(unlabeled_batch)
    )
    labeled_ds = (
        tf.data.Dataset.from_tensor_slices((images[unlabeled:], labels[unlabeled:]))
        .shuffle(buffer_size=10 * labeled_batch)
        .batch(labeled_batch)
    )
    return tf.data.Dataset.zip((unlabeled_ds, labeled_ds)).prefetch(buffer_size=tf.data.AUTOTUNE)


class RandomColorAffine(layers.Layer):
    """The published color distortion: per image, a brightness scale times the identity plus a
    jitter matrix, applied to each pixel's channels, clipped to [0, 1]."""

    def __init__(self, brightness=0, jitter=0, **kwargs):
        super().__init__(**kwargs)
        self.brightness = brightness
        self.jitter = jitter

    def call(self, images, training=True):
        if training:
            batch_size = tf.shape(images)[0]
            channels = images.shape[-1]  # published: 3
            brightness_scales = 1 + tf.random.uniform(
                (batch_size, 1, 1, 1), minval=-self.brightness, maxval=self.brightness
            )
            jitter_matrices = tf.random.uniform(
                (batch_size, 1, channels, channels), minval=-self.jitter, maxval=self.jitter
            )
            transforms = tf.eye(channels, batch_shape=[batch_size, 1]) * brightness_scales + jitter_matrices
            images = tf.clip_by_value(tf.matmul(images, transforms), 0, 1)
        return images


def get_augmenter(min_area, brightness, jitter):
    zoom_factor = 1.0 - math.sqrt(min_area)
    return keras.Sequential(
        [
            layers.RandomFlip("horizontal"),
            layers.RandomTranslation(zoom_factor / 2, zoom_factor / 2),
            layers.RandomZoom((-zoom_factor, 0.0), (-zoom_factor, 0.0)),
            RandomColorAffine(brightness, jitter),
        ]
    )


def get_encoder():
    return keras.Sequential(
        [
            layers.Conv2D(WIDTH, kernel_size=3, strides=2, padding="same", activation="relu"),
            layers.Conv2D(WIDTH, kernel_size=3, strides=2, padding="same", activation="relu"),
            layers.Conv2D(WIDTH, kernel_size=3, strides=2, padding="same", activation="relu"),
            layers.Conv2D(WIDTH, kernel_size=3, strides=2, padding="same", activation="relu"),
            layers.Flatten(),
            layers.Dense(WIDTH, activation="relu"),
        ],
        name="encoder",
    )


class ContrastiveModel(keras.Model):
    """The published model: encoder, projection head and linear probe; one contrastive update
    and one probe update per step."""

    def __init__(self):
        super().__init__()
        self.temperature = TEMPERATURE
        self.contrastive_augmenter = get_augmenter(**CONTRASTIVE_AUGMENTATION)
        self.classification_augmenter = get_augmenter(**CLASSIFICATION_AUGMENTATION)
        self.encoder = get_encoder()
        self.projection_head = keras.Sequential(
            [keras.Input(shape=(WIDTH,)), layers.Dense(WIDTH, activation="relu"), layers.Dense(WIDTH)],
            name="projection_head",
        )
        self.linear_probe = keras.Sequential([layers.Input(shape=(WIDTH,)), layers.Dense(10)], name="linear_probe")

    def compile(self, contrastive_optimizer, probe_optimizer, **kwargs):
        super().compile(**kwargs)
        self.contrastive_optimizer = contrastive_optimizer
        self.probe_optimizer = probe_optimizer
        self.probe_loss = keras.losses.SparseCategoricalCrossentropy(from_logits=True)
        self.contrastive_loss_tracker = keras.metrics.Mean(name="c_loss")
        self.contrastive_accuracy = keras.metrics.SparseCategoricalAccuracy(name="c_acc")
        self.probe_loss_tracker = keras.metrics.Mean(name="p_loss")
        self.probe_accuracy = keras.metrics.SparseCategoricalAccuracy(name="p_acc")

    @property
    def metrics(self):
        return [self.contrastive_loss_tracker, self.contrastive_accuracy, self.probe_loss_tracker, self.probe_accuracy]

    def contrastive_loss(self, projections_1, projections_2):
        """Per example: the cross-entropy of its similarities to the other view's projections,
        both directions, averaged."""
        projections_1 = tf.math.l2_normalize(projections_1, axis=1)
        projections_2 = tf.math.l2_normalize(projections_2, axis=1)
        similarities = tf.matmul(projections_1, projections_2, transpose_b=True) / self.temperature
        batch_size = tf.shape(projections_1)[0]
        contrastive_labels = tf.range(batch_size)
        self.contrastive_accuracy.update_state(contrastive_labels, similarities)
        self.contrastive_accuracy.update_state(contrastive_labels, tf.transpose(similarities))
        loss_1_2 = keras.losses.sparse_categorical_crossentropy(contrastive_labels, similarities, from_logits=True)
        loss_2_1 = keras.losses.sparse_categorical_crossentropy(
            contrastive_labels, tf.transpose(similarities), from_logits=True
        )
        return (loss_1_2 + loss_2_1) / 2

    def contrastive_views(self, images):
        """Each image augmented twice, differently (published: inline in `train_step`)."""
        return self.contrastive_augmenter(images, training=True), self.contrastive_augmenter(images, training=True)

    def train_step(self, data):
        (unlabeled_images, _), (labeled_images, labels) = data
        images = tf.concat((unlabeled_images, labeled_images), axis=0)
        augmented_images_1, augmented_images_2 = self.contrastive_views(images)
        with tf.GradientTape() as tape:
            features_1 = self.encoder(augmented_images_1, training=True)
            features_2 = self.encoder(augmented_images_2, training=True)
            projections_1 = self.projection_head(features_1, training=True)
            projections_2 = self.projection_head(features_2, training=True)
            contrastive_loss = self.contrastive_loss(projections_1, projections_2)
        variables = self.encoder.trainable_weights + self.projection_head.trainable_weights
        gradients = tape.gradient(contrastive_loss, variables)  # of the vector: of its sum
        self.contrastive_optimizer.apply_gradients(zip(gradients, variables, strict=True))
        self.contrastive_loss_tracker.update_state(contrastive_loss)

        preprocessed_images = self.classification_augmenter(labeled_images, training=True)
        with tf.GradientTape() as tape:
            features = self.encoder(preprocessed_images, training=False)
            class_logits = self.linear_probe(features, training=True)
            probe_loss = self.probe_loss(labels, class_logits)
        variables = self.linear_probe.trainable_weights
        self.probe_optimizer.apply_gradients(zip(tape.gradient(probe_loss, variables), variables, strict=True))
        self.probe_loss_tracker.update_state(probe_loss)
        self.probe_accuracy.update_state(labels, class_logits)
        return {m.name: m.result() for m in self.metrics}


def compiled_model(model_class=ContrastiveModel):
    """The published model, compiled with the published optimizers, its networks built."""
    model = model_class()
    model.compile(contrastive_optimizer=keras.optimizers.Adam(), probe_optimizer=keras.optimizers.Adam())
    model.encoder.build((None, 8, 8, 1))
    return model


def main(seed: int, epochs: int) -> list[dict]:
    """The published pretraining on the digits; each epoch's logged means."""
    keras.utils.set_random_seed(seed)
    images, labels = digits()
    history = compiled_model().fit(prepare_dataset(images, labels), epochs=epochs, verbose=0)
    return [{key: float(values[epoch]) for key, values in history.history.items()} for epoch in range(epochs)]


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=20)
    options = parser.parse_args()
    print(json.dumps(main(options.seed, options.epochs)))
