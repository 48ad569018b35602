import tensorflow as tf

x = tf.zeros([64, 3])
bad = tf.data.Dataset.from_tensor_slices(x).batch(32)
bad = bad.shuffle(1000)  # expect: TFG005

fixed = tf.data.Dataset.from_tensor_slices(x).shuffle(1000)
fixed = fixed.batch(32)
per_example = tf.data.Dataset.from_tensor_slices(x).shuffle(100).batch(32).map(lambda b: b / 255.0)
