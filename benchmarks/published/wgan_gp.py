"""keras.io's "WGAN-GP overriding `Model.train_step`" (A_K_Nain), restated on the 8x8 digits.

Source: https://github.com/keras-team/keras-io/blob/master/examples/generative/wgan_gp.py
(read at commit 81aa0edb72a1735c5c577f123bb3a4a475a181c9). This file restates that program's
computation in its own code (the published text is not copied here); every figure is the
published one. What differs from the original, and only this:
- data: `published_data.signed_digits(EXAMPLES)`, the first 1,536 of the 8x8 digits (8x8x1 in
  [-1, 1]: three whole batches of 512, as tfgen's steps take whole batches; of all 1,797 the
  published `fit` would add a fourth batch of 261 each epoch) instead of Fashion-MNIST (28x28x1
  in [-1, 1]); so the generator starts from a 1x1x256 map (published: 4x4x256) that its three
  upsampling blocks double to 8x8 (published: to 32x32, then cropped by 2 to 28x28: no crop here);
  the discriminator's input is (8, 8, 1) (its zero padding by 2, blocks and sizes are the published);
- `main(seed, epochs)` sets Keras's seed and the epochs (published: unseeded, 20); no image callback;
  `main(..., start)` starts both networks from given weights (benchmarks/parity.py passes the
  weights tfgen's script starts from, as its other comparisons do);
- the random draws are two methods, `latent` and `alpha` (published: `tf.random.normal` inline;
  these call the same), and `compiled_wgan` takes the class, so that benchmarks/parity.py can give
  this step and tfgen's the same numbers.
Unchanged: the layers, dropout and batch normalization, noise 128, batch 512 (`fit` on the arrays,
shuffled), 3 discriminator updates per generator update, gradient penalty
weight 10 at `real + alpha * (fake - real)` with alpha drawn from a *normal* distribution (the paper
draws it uniformly in [0, 1]), Adam(2e-4, beta_1=0.5, beta_2=0.9) for each network, the losses
mean(fake) - mean(real) and -mean(fake), `d_loss` (the last discriminator update's, penalty
included) and `g_loss` returned per batch.

    python benchmarks/published/wgan_gp.py --seed 1 --epochs 3
"""

from __future__ import annotations

import argparse
import json

import keras
import tensorflow as tf
from keras import layers
from published_data import EpochMeans, signed_digits

NOISE_DIM = 128
BATCH_SIZE = 512
START = 1  # the generator's first map, 1x1 (published: 4, for 28x28 images)
EXAMPLES = 3 * BATCH_SIZE  # whole batches: tfgen's steps take no partial one


def conv_block(x, filters, dropout=None):
    x = layers.Conv2D(filters, (5, 5), strides=(2, 2), padding="same")(x)
    x = layers.LeakyReLU(0.2)(x)
    return layers.Dropout(dropout)(x) if dropout else x


def build_discriminator():
    images = layers.Input(shape=(8, 8, 1))
    x = layers.ZeroPadding2D((2, 2))(images)
    x = conv_block(x, 64)
    x = conv_block(x, 128, dropout=0.3)
    x = conv_block(x, 256, dropout=0.3)
    x = conv_block(x, 512)
    x = layers.Dropout(0.2)(layers.Flatten()(x))
    return keras.Model(images, layers.Dense(1)(x), name="discriminator")


def upsample_block(x, filters, activation):
    x = layers.UpSampling2D((2, 2))(x)
    x = layers.Conv2D(filters, (3, 3), padding="same", use_bias=False)(x)
    return activation(layers.BatchNormalization()(x))


def build_generator():
    noise = layers.Input(shape=(NOISE_DIM,))
    x = layers.Dense(START * START * 256, use_bias=False)(noise)
    x = layers.LeakyReLU(0.2)(layers.BatchNormalization()(x))
    x = layers.Reshape((START, START, 256))(x)
    x = upsample_block(x, 128, layers.LeakyReLU(0.2))
    x = upsample_block(x, 64, layers.LeakyReLU(0.2))
    x = upsample_block(x, 1, layers.Activation("tanh"))
    return keras.Model(noise, x, name="generator")


class WGAN(keras.Model):
    """The published `train_step` override: `d_steps` critic updates with the gradient penalty,
    then one generator update."""

    def __init__(self, discriminator, generator, latent_dim, discriminator_extra_steps=3, gp_weight=10.0):
        super().__init__()
        self.discriminator = discriminator
        self.generator = generator
        self.latent_dim = latent_dim
        self.d_steps = discriminator_extra_steps
        self.gp_weight = gp_weight

    def compile(self, d_optimizer, g_optimizer, d_loss_fn, g_loss_fn):
        super().compile()
        self.d_optimizer = d_optimizer
        self.g_optimizer = g_optimizer
        self.d_loss_fn = d_loss_fn
        self.g_loss_fn = g_loss_fn

    def latent(self, batch_size):
        return tf.random.normal(shape=(batch_size, self.latent_dim))

    def alpha(self, batch_size):
        return tf.random.normal([batch_size, 1, 1, 1], 0.0, 1.0)

    def gradient_penalty(self, batch_size, real_images, fake_images):
        alpha = self.alpha(batch_size)
        interpolated = real_images + alpha * (fake_images - real_images)
        with tf.GradientTape() as tape:
            tape.watch(interpolated)
            pred = self.discriminator(interpolated, training=True)
        grads = tape.gradient(pred, [interpolated])[0]
        norm = tf.sqrt(tf.reduce_sum(tf.square(grads), axis=[1, 2, 3]))
        return tf.reduce_mean((norm - 1.0) ** 2)

    def train_step(self, real_images):
        if isinstance(real_images, tuple):
            real_images = real_images[0]
        batch_size = tf.shape(real_images)[0]
        for _ in range(self.d_steps):
            latents = self.latent(batch_size)
            with tf.GradientTape() as tape:
                fake_images = self.generator(latents, training=True)
                fake_logits = self.discriminator(fake_images, training=True)
                real_logits = self.discriminator(real_images, training=True)
                d_cost = self.d_loss_fn(real_img=real_logits, fake_img=fake_logits)
                gp = self.gradient_penalty(batch_size, real_images, fake_images)
                d_loss = d_cost + gp * self.gp_weight
            variables = self.discriminator.trainable_variables
            self.d_optimizer.apply_gradients(zip(tape.gradient(d_loss, variables), variables, strict=True))
        latents = self.latent(batch_size)
        with tf.GradientTape() as tape:
            g_loss = self.g_loss_fn(self.discriminator(self.generator(latents, training=True), training=True))
        variables = self.generator.trainable_variables
        self.g_optimizer.apply_gradients(zip(tape.gradient(g_loss, variables), variables, strict=True))
        return {"d_loss": d_loss, "g_loss": g_loss}


def discriminator_loss(real_img, fake_img):
    return tf.reduce_mean(fake_img) - tf.reduce_mean(real_img)


def generator_loss(fake_img):
    return -tf.reduce_mean(fake_img)


def compiled_wgan(wgan_class=WGAN):
    wgan = wgan_class(build_discriminator(), build_generator(), latent_dim=NOISE_DIM, discriminator_extra_steps=3)
    wgan.compile(
        d_optimizer=keras.optimizers.Adam(learning_rate=0.0002, beta_1=0.5, beta_2=0.9),
        g_optimizer=keras.optimizers.Adam(learning_rate=0.0002, beta_1=0.5, beta_2=0.9),
        g_loss_fn=generator_loss,
        d_loss_fn=discriminator_loss,
    )
    return wgan


def main(seed: int, epochs: int, steps: int | None = None, start: dict | None = None) -> list[dict]:
    """The published program on the digits; each epoch's mean losses over its batches (`steps`
    of them when given: benchmarks/parity.py's short runs). `start`: the networks' initial
    weights by name (benchmarks/parity.py gives both programs tfgen's), else the seed's."""
    keras.utils.set_random_seed(seed)
    images, _ = signed_digits(EXAMPLES)
    means = EpochMeans(["d_loss", "g_loss"])
    wgan = compiled_wgan()
    for name, weights in (start or {}).items():
        getattr(wgan, name).set_weights(weights)
    wgan.fit(images, batch_size=BATCH_SIZE, epochs=epochs, steps_per_epoch=steps, verbose=0, callbacks=[means])
    return means.epochs


if __name__ == "__main__":
    parser = argparse.ArgumentParser()
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--epochs", type=int, default=20)
    options = parser.parse_args()
    print(json.dumps(main(options.seed, options.epochs)))
