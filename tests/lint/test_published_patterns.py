"""The patterns of published training code (keras.io, tensorflow-docs) that lint once judged wrongly.

Each snippet is written by us after the published file named in its test; the files themselves, their
judged findings and the precision table are in `tests/lint/corpus/published/` (`test_published.py`)."""

from __future__ import annotations

import textwrap

from tfgen.lint import lint_source

HEAD = "import tensorflow as tf\nimport tensorflow_datasets as tfds\nfrom tensorflow import keras\n"


def _codes(source: str) -> list[tuple[int, str]]:
    text = HEAD + textwrap.dedent(source).lstrip("\n")
    return [(f.line - 3, f.code) for f in lint_source(text, "snippet.py")]


GAN_STEP = """
class GAN(keras.Model):
    def train_step(self, batch):
        with tf.GradientTape(persistent=True) as tape:
            fake = self.generator(batch, training=True)
            g_loss = self.g_loss(self.discriminator(fake))
            d_loss = self.d_loss(self.discriminator(batch), self.discriminator(fake))
        self.g_optimizer.apply_gradients(zip(tape.gradient(g_loss, self.generator.trainable_weights),
                                             self.generator.trainable_weights))
        self.d_optimizer.apply_gradients(zip(tape.gradient(d_loss, self.discriminator.trainable_weights),
                                             self.discriminator.trainable_weights))
        return {"g_loss": g_loss}


gan = GAN()
gan.fit(images)
"""


def test_a_persistent_tape_in_a_keras_train_step_is_not_reported():
    # keras.io CycleGAN and GAN-ADA: fit traces train_step, and the tape dies with the trace.
    assert _codes(GAN_STEP) == []


def test_a_persistent_tape_in_a_tf_function_is_not_reported():
    # tensorflow-docs CycleGAN: `del tape` in a tf.function leaves the graph identical.
    step = GAN_STEP.replace("class GAN(keras.Model):\n    def train_step", "class GAN:\n    @tf.function\n    def step")
    assert _codes(step) == []


def test_a_persistent_tape_in_eager_code_is_still_reported():
    assert _codes("""
    for x in batches:
        with tf.GradientTape(persistent=True) as tape:
            loss = model(x)
        optimizer.apply_gradients(zip(tape.gradient(loss, model.trainable_variables), model.trainable_variables))
    """) == [(2, "TFG017")]


SCALED_STEP = """
keras.mixed_precision.set_global_policy("mixed_float16")


class Trainer(keras.Model):
    def train_step(self, inputs):
        with tf.GradientTape() as tape:
            loss = self.compiled_loss(inputs, self.network(inputs))
            loss = self.optimizer.get_scaled_loss(loss)
        gradients = self.optimizer.get_unscaled_gradients(tape.gradient(loss, self.trainable_variables))
        self.optimizer.apply_gradients(zip(gradients, self.trainable_variables))
        return {"loss": loss}


trainer = Trainer()
trainer.compile(optimizer=keras.optimizers.AdamW(), loss="mse")
trainer.fit(images, epochs=1)
"""


def test_a_train_step_scaling_its_loss_with_the_compiled_optimizer_has_loss_scaling():
    # keras.io stable-diffusion fine-tuning: compile() wraps the optimizer in a LossScaleOptimizer.
    assert _codes(SCALED_STEP) == []


def test_a_custom_step_under_mixed_float16_with_its_own_unscaled_optimizer_is_still_reported():
    own = SCALED_STEP.replace("self.optimizer.get_scaled_loss(loss)", "loss").replace("self.optimizer.", "self.g_opt.")
    assert _codes(own) == [(1, "TFG011")]


PROBE = """
class SelfSupervised(keras.Model):
    def train_step(self, batch):
        with tf.GradientTape() as tape:
            loss = self.loss(self.encoder(batch))
        gradients = tape.gradient(loss, self.encoder.trainable_variables)
        self.optimizer.apply_gradients(zip(gradients, self.encoder.trainable_variables))
        return {"loss": loss}


probe = keras.Sequential([encoder, keras.layers.Dense(10, kernel_regularizer=keras.regularizers.l2(0.02))])
probe.compile(optimizer="adam", loss="sparse_categorical_crossentropy")
probe.fit(labelled, epochs=3)
"""


def test_a_regularizer_of_another_model_trained_by_fit_is_not_the_custom_steps():
    # keras.io Barlow Twins: the regularizer is the linear probe's, and stock fit adds it.
    assert _codes(PROBE) == []


def test_a_regularizer_of_the_model_the_custom_step_trains_is_still_reported():
    # keras.io SimSiam: the encoder's weight decay never reaches its custom train_step.
    encoder = PROBE.replace("probe.fit(labelled, epochs=3)", "")
    assert _codes(encoder) == [(5, "TFG014")]


def test_cache_after_a_random_map_is_found_on_a_tfds_pipeline():
    # keras.io CycleGAN: the augmentation of the first epoch is cached and replayed.
    assert _codes("""
    def augment(image, label):
        return tf.image.random_flip_left_right(image)


    dataset, _ = tfds.load("cycle_gan/horse2zebra", with_info=True, as_supervised=True)
    train_horses, train_zebras = dataset["trainA"], dataset["trainB"]
    train_horses = train_horses.map(augment).cache().shuffle(256).batch(1)
    """) == [(7, "TFG006")]


def test_pipelines_from_dataset_from_directory_and_local_functions_are_followed():
    # image_dataset_from_directory batches (32) unless given batch_size=None: a shuffle after it reorders batches.
    assert _codes("""
    def augment(image):
        return tf.image.random_crop(image, (64, 64, 3))


    def images():
        return keras.utils.image_dataset_from_directory("photos", batch_size=None)


    def training_pipeline():
        return images().map(augment).cache().batch(32)


    for batch in training_pipeline():
        pass
    ds = keras.preprocessing.image_dataset_from_directory("photos").shuffle(8)
    """) == [(10, "TFG006"), (15, "TFG005")]


def test_a_function_returning_different_pipelines_is_not_followed():
    assert (
        _codes("""
    def augment(image):
        return tf.image.random_crop(image, (64, 64, 3))


    def pipeline(training):
        if training:
            return tfds.load("mnist", split="train")
        return tf.data.Dataset.range(3).map(augment)


    ds = pipeline(True).map(augment).cache()
    """)
        == []
    )


def test_a_function_that_returns_its_own_call_is_not_followed():
    assert (
        _codes("""
    def forever():
        return forever().cache()


    ds = forever().map(lambda x: tf.random.uniform(())).cache()
    """)
        == []
    )


PRINTING_STEP = """
class Debugged(keras.Model):
    def train_step(self, data):
        print("step", self.step)
        return super().train_step(data)


model = Debugged()
model.compile(optimizer="sgd", loss="mse")
model.fit(x, y)
"""


def test_print_in_a_keras_train_step_is_reported_since_fit_traces_it():
    assert _codes(PRINTING_STEP) == [(3, "TFG002")]


def test_print_in_a_train_step_of_a_model_compiled_to_run_eagerly_is_not_reported():
    # keras.io "Keras debugging tips": run_eagerly=True runs train_step, and its prints, every step.
    assert _codes(PRINTING_STEP.replace('loss="mse")', 'loss="mse", run_eagerly=True)')) == []
    assert _codes(PRINTING_STEP + "model.run_eagerly = True\n") == []


ZIPPED = """
@tf.function
def train_step(x, y):
    optimizer.apply_gradients(zip(tape.gradient(loss, weights), weights))


horses = tf.data.Dataset.range(8).batch(2)
zebras = tf.data.Dataset.range(8).batch(2)
for x, y in tf.data.Dataset.zip((horses, zebras)):
    train_step(x, y)
"""


def test_a_training_loop_over_a_zip_of_unprefetched_pipelines_is_reported():
    # tensorflow-docs CycleGAN: `for x, y in tf.data.Dataset.zip((train_horses, train_zebras))`.
    assert _codes(ZIPPED) == [(8, "TFG004")]


def test_a_zip_of_prefetched_pipelines_or_of_unknown_ones_is_not_reported():
    assert _codes(ZIPPED.replace(".batch(2)", ".batch(2).prefetch(2)")) == []
    assert _codes(ZIPPED.replace("zebras = tf.data.Dataset.range(8).batch(2)", "zebras = make_zebras()")) == []


PASSED = """
@tf.function
def train_step(images):
    optimizer.apply_gradients(zip(tape.gradient(loss, weights), weights))


def train(dataset, epochs):
    for epoch in range(epochs):
        for image_batch in dataset:
            train_step(image_batch)


train_dataset = tf.data.Dataset.from_tensor_slices(images).shuffle(60000).batch(256)
train(train_dataset, 50)
"""


def test_a_pipeline_passed_to_a_function_called_once_is_followed_into_its_training_loop():
    # tensorflow-docs DCGAN and pix2pix: the loop iterates the function's parameter.
    assert _codes(PASSED) == [(8, "TFG004")]


def test_a_function_called_with_two_pipelines_is_not_followed():
    assert _codes(PASSED + "train(train_dataset.prefetch(1), 50)\n") == []


def test_a_train_step_called_directly_and_never_by_fit_is_eager_code():
    # tensorflow-docs "Debug a TF2 migrated training pipeline": model.train_step(batch) in a Python loop.
    direct = PRINTING_STEP.replace("model.fit(x, y)", "for batch in batches:\n    model.train_step(batch)")
    assert _codes(direct) == []


def test_a_print_announcing_tracing_is_not_reported():
    # tensorflow-docs guides: `print("Tracing with", x)` shows when a tf.function is traced, on purpose.
    assert _codes("""
    @tf.function
    def double(a):
        print("Tracing with", a)
        print("value", a)
        return a + a
    """) == [(4, "TFG002")]


def test_a_print_in_a_py_function_called_from_a_tf_function_is_not_reported():
    # tensorflow-docs "Better performance with tf.function": tf.py_function runs its body eagerly.
    assert (
        _codes("""
    @tf.py_function(Tout=tf.float32)
    def py_plus(x, y):
        print("Executing eagerly.")
        return x + y


    @tf.function
    def wrapper(x, y):
        return py_plus(x, y)
    """)
        == []
    )


def test_numpy_in_a_tape_only_to_log_the_value_is_not_reported():
    # TF Hub generative-image tutorial: `losses.append(loss.numpy())` inside the tape, off the loss's path.
    assert (
        _codes("""
    for step in range(100):
        with tf.GradientTape() as tape:
            image = generator(vector)
            images.append(image.numpy())
            loss = loss_fn(image, target)
            losses.append(loss.numpy())
            print(loss.numpy())
        optimizer.apply_gradients(zip(tape.gradient(loss, [vector]), [vector]))
    """)
        == []
    )


def test_numpy_in_a_tape_appended_to_a_list_the_tape_reads_is_still_reported():
    assert _codes("""
    with tf.GradientTape() as tape:
        loss = loss_fn(y, model(x))
        history.append(loss.numpy())
        loss = loss / np.mean(history)
    """) == [(3, "TFG003")]


STEP_HISTORY = """
@tf.function
def train_step(x):
    optimizer.apply_gradients(zip(tape.gradient(loss, weights), weights))
    return loss


losses = []
for epoch in range(3):
    for x in batches:
        losses.append(train_step(x))
"""


def test_a_training_step_result_kept_across_epochs_is_reported():
    assert _codes(STEP_HISTORY) == [(10, "TFG001")]


def test_a_list_made_afresh_every_epoch_is_not_reported():
    # tensorflow-docs core-API guides: `batch_losses = []` at each epoch, averaged at its end.
    assert _codes(STEP_HISTORY.replace("    for x in batches:", "    losses = []\n    for x in batches:")) == []


def test_a_value_appended_once_an_epoch_is_not_reported():
    epochs = STEP_HISTORY.replace(
        "        losses.append(train_step(x))", "        train_step(x)\n    losses.append(train_step(x))"
    )
    assert _codes(epochs) == []


def test_tensors_a_non_training_step_collects_are_not_reported():
    # tensorflow-docs integrated gradients' shape: gradient batches collected, then concatenated.
    collected = STEP_HISTORY.replace("optimizer.apply_gradients(zip(tape.gradient(loss, weights), weights))", "pass")
    assert _codes(collected.replace("train_step", "one_batch")) == []


LOOP = """
@tf.function
def train_step(x):
    optimizer.apply_gradients(zip(tape.gradient(loss, weights), weights))


for x in {pipeline}:
    train_step(x)
"""


def _loop_over(pipeline: str) -> list[tuple[int, str]]:
    return _codes(LOOP.format(pipeline=pipeline))


def test_a_prefetch_before_the_last_map_or_batch_does_not_count():
    assert _loop_over("tf.data.Dataset.range(8).prefetch(2).map(tf.square).batch(2)") == [(6, "TFG004")]
    assert _loop_over("tf.data.Dataset.range(8).map(tf.square).batch(2).prefetch(2).repeat(2)") == []


def test_tfds_and_dataset_from_directory_prefetch_what_they_load():
    # TFDS ends its pipeline with a prefetch (ReadConfig.skip_prefetch=False), Keras's loaders too.
    assert _loop_over('tfds.load("mnist", split="train", batch_size=32)') == []
    assert _loop_over('keras.utils.image_dataset_from_directory("photos")') == []
    assert _loop_over('tfds.load("mnist", split="train").batch(32)') == [(6, "TFG004")]


def test_a_loop_that_records_a_tape_and_updates_variables_itself_is_a_training_loop():
    # tensorflow-docs Core API guides: the step is written inline, with `v.assign_sub(rate * g)`.
    assert _codes("""
    dataset = tf.data.Dataset.from_tensor_slices((x, y)).shuffle(100).batch(32)
    for x_batch, y_batch in dataset:
        with tf.GradientTape() as tape:
            loss = loss_fn(model(x_batch), y_batch)
        for g, v in zip(tape.gradient(loss, model.variables), model.variables):
            v.assign_sub(0.01 * g)
    """) == [(2, "TFG004")]


def test_tfds_splits_unpacked_beside_the_info_are_followed():
    # tensorflow-docs migration guide: `(ds_train, ds_test), ds_info = tfds.load(..., with_info=True)`.
    assert _codes("""
    def augment(image, label):
        return tf.image.random_flip_left_right(image), label


    (ds_train, ds_test), ds_info = tfds.load("mnist", split=["train", "test"], with_info=True)
    ds_train = ds_train.map(augment).cache()
    ds_info = ds_info.map(augment).cache()
    """) == [(6, "TFG006")]


def test_a_pipeline_made_in_a_function_followed_from_its_parameter_is_followed_into_the_next_call():
    # `run` (called once with a pipeline) builds another and hands it to `train`, defined after it.
    run_first = "def run(source):\n    train(tf.data.Dataset.range(4).batch(2), 5)\n    return source\n\n\n"
    assert _codes(run_first + PASSED.replace("train(train_dataset, 50)", "run(train_dataset)")) == [(14, "TFG004")]
