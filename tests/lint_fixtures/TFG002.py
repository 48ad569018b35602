import tensorflow as tf


@tf.function
def bad_step(x):
    print("x is", x)  # expect: TFG002
    return x


@tf.function
def fixed_step(x):
    tf.print("x is", x)
    return x


def eager_helper(x):
    print("eager code may print", x)
    return x
