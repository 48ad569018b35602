"""keras.io's "GAN overriding `Model.train_step`" (fchollet), restated on the 8x8 digits.

Source: https://github.com/keras-team/keras-io/blob/master/examples/generative/dcgan_overriding_train_step.py
as published at commit 0d5f327814b51b9f3efe59bc6845756f630eb9b6 (the MNIST version, also the GAN
of keras.io's "Customizing what happens in fit()"; the file later moved to CelebA faces at 64x64).
This file restates that program's computation in its own code (the published text is not copied
here); every figure is the published one. What differs from the original, and only this:
- data: `published_data.digits()` (8x8x1 in [0, 1]) instead of MNIST's train and test digits
  (28x28x1 in [0, 1]); so the generator starts from a 2x2x128 map (published: 7x7x128) that its
  two stride-2 transposed convolutions double twice, to 8x8 (published: to 28x28);
- `main(seed, epochs)` sets Keras's seed and the epochs (published: unseeded, 30); no image callback;
- the random draws are two methods, `latent` and `label_noise` (published: `tf.random.normal` and
  `tf.random.uniform` inline; these call the same), so that benchmarks/parity.py can give this
  step and tfgen's the same numbers;
- the labels are of Keras's floatx (published: float32, the default floatx; the same here unless
  benchmarks/parity.py's `--float64` sets it).
Unchanged: the networks' layers and sizes, latent 128, batch 64, shuffle buffer 1024, Adam(3e-4)
for each network, BinaryCrossentropy(from_logits=True) over the fakes (label 1) and the real
examples (label 0) concatenated, label noise 0.05 * U[0, 1), the generator's fakes labelled 0,
`d_loss` and `g_loss` returned per batch.

    python benchmarks/published/dcgan_overriding_train_step.py --seed 1 --epochs 3
"""

from __future__ import annotations

import argparse
import json

import keras
import tensorflow as tf
from keras import layers
from published_data import EpochMeans, digits

LATENT_DIM = 128
START = 2  # the generator's first map, 2x2 (published: 7, for 28x28 images)


def build_discriminator():
    return keras.Sequential(
        [
            keras.Input(shape=(8, 8, 1)),
            layers.Conv2D(64, (3, 3), strides=(2, 2), padding="same"),
            layers.LeakyReLU(negative_slope=0.2),
            layers.Conv2D(128, (3, 3), strides=(2, 2), padding="same"),
            layers.LeakyReLU(negative_slope=0.2),
            layers.GlobalMaxPooling2D(),
            layers.Dense(1),
        ],
        name="discriminator",
    )


def build_generator():
    return keras.Sequential(
        [
            keras.Input(shape=(LATENT_DIM,)),
            layers.Dense(START * START * 128),
            layers.LeakyReLU(negative_slope=0.2),
            layers.Reshape((START, START, 128)),
            layers.Conv2DTranspose(128, (4, 4), strides=(2, 2), padding="same"),
            layers.LeakyReLU(negative_slope=0.2),
            layers.Conv2DTranspose(128, (4, 4), strides=(2, 2), padding="same"),
            layers.LeakyReLU(negative_slope=0.2),
            layers.Conv2D(1, (7, 7), padding="same", activation="sigmoid"),
        ],
        name="generator",
    )


class GAN(keras.Model):
    """The published `train_step` override: one discriminator update on fakes and real examples
    together, then one generator update."""

    def __init__(self, discriminator, generator, latent_dim):
        super().__init__()
        self.discriminator = discriminator
        self.generator = generator
        self.latent_dim = latent_dim

    def compile(self, d_optimizer, g_optimizer, loss_fn):
        super().compile()
        self.d_optimizer = d_optimizer
        self.g_optimizer = g_optimizer
        self.loss_fn = loss_fn

    def latent(self, batch_size):
        return tf.random.normal(shape=(batch_size, self.latent_dim))

    def label_noise(self, shape):
        return tf.random.uniform(shape)

    def train_step(self, real_images):
        batch_size = tf.shape(real_images)[0]
        fakes = self.generator(self.latent(batch_size))
        combined = tf.concat([fakes, real_images], axis=0)
        floatx = keras.config.floatx()  # published: float32 (the default floatx)
        ones, zeros = tf.ones((batch_size, 1), floatx), tf.zeros((batch_size, 1), floatx)
        labels = tf.concat([ones, zeros], axis=0)
        labels += 0.05 * self.label_noise(tf.shape(labels))
        with tf.GradientTape() as tape:
            d_loss = self.loss_fn(labels, self.discriminator(combined))
        variables = self.discriminator.trainable_weights
        self.d_optimizer.apply_gradients(zip(tape.gradient(d_loss, variables), variables, strict=True))

        latents = self.latent(batch_size)
        misleading = tf.zeros((batch_size, 1), floatx)  # "real"
        with tf.GradientTape() as tape:
            g_loss = self.loss_fn(misleading, self.discriminator(self.generator(latents)))
        variables = self.generator.trainable_weights
        self.g_optimizer.apply_gradients(zip(tape.gradient(g_loss, variables), variables, strict=True))
        return {"d_loss": d_loss, "g_loss": g_loss}


def compiled_gan(discriminator, generator, gan_class=GAN):
    gan = gan_class(discriminator=discriminator, generator=generator, latent_dim=LATENT_DIM)
    gan.compile(
        d_optimizer=keras.optimizers.Adam(learning_rate=0.0003),
        g_optimizer=keras.optimizers.Adam(learning_rate=0.0003),
        loss_fn=keras.losses.BinaryCrossentropy(from_logits=True),
    )
    return gan


def dataset(images, batch_size=64):
    """The published pipeline over the digits."""
    return tf.data.Dataset.from_tensor_slices(images).shuffle(buffer_size=1024).batch(batch_size).prefetch(32)


def main(seed: int, epochs: int) -> list[dict]:
    """The published program on the digits; each epoch's mean losses."""
    keras.utils.set_random_seed(seed)
    images, _ = digits()
    means = EpochMeans(["d_loss", "g_loss"])
    gan = compiled_gan(build_discriminator(), build_generator())
    gan.fit(dataset(images), epochs=epochs, verbose=0, callbacks=[means])
    return means.epochs


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=30)
    options = parser.parse_args()
    print(json.dumps(main(options.seed, options.epochs)))
