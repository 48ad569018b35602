import tensorflow as tf
import keras

strategy = tf.distribute.MirroredStrategy()
with strategy.scope():
    clipped = keras.optimizers.SGD(0.1, clipvalue=1.0)  # expect: TFG010
    fixed = keras.optimizers.SGD(0.1)


def clip(all_reduced_gradients):
    gradients, _ = tf.clip_by_global_norm(all_reduced_gradients, 1.0)
    return gradients


# %% separate file
import tensorflow as tf
import keras

strategy = tf.distribute.OneDeviceStrategy("/cpu:0")  # one replica: the optimizer clips the whole gradient
with strategy.scope():
    clipped = keras.optimizers.SGD(0.1, clipvalue=1.0)
