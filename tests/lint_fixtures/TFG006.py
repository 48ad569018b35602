import tensorflow as tf

x = tf.zeros([64, 8, 8, 3])
bad = tf.data.Dataset.from_tensor_slices(x)
bad = bad.map(lambda im: tf.image.random_flip_left_right(im)).cache()  # expect: TFG006

fixed = tf.data.Dataset.from_tensor_slices(x).cache()
fixed = fixed.map(lambda im: tf.image.random_flip_left_right(im))
deterministic = tf.data.Dataset.from_tensor_slices(x).map(lambda im: im / 255.0).cache()
