import tensorflow as tf


@tf.function
def train_step(x, step):
    return x


def loop(x):
    for i in range(100):
        train_step(x, i)  # expect: TFG016


def fixed_loop(x):
    for i in range(100):
        train_step(x, tf.constant(i))
