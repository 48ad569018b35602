import tensorflow as tf
import keras

strategy = tf.distribute.MirroredStrategy()
model = keras.Sequential([keras.layers.Dense(1)])  # expect: TFG007
with strategy.scope():
    optimizer = keras.optimizers.Adam()
    optimizer.build(model.trainable_variables)

# Created outside the scope, then created again inside it: the step uses the second one.
metric = keras.metrics.Mean()
with strategy.scope():
    metric = keras.metrics.Mean()

# Created outside the scope but only used eagerly, never in a distributed step: not reported.
probe = keras.Sequential([keras.layers.Dense(1)])


def step(x):
    metric.update_state(model(x))
    return model(x)


def run(x):
    print(probe(x))
    return strategy.run(step, args=(x,))


def build_model():
    return keras.Sequential([keras.layers.Dense(1)])


def bad_main(x):
    strategy = tf.distribute.MirroredStrategy()
    net = build_model()  # expect: TFG007
    with strategy.scope():
        metric = keras.metrics.Mean()

    def replica_step(inputs):
        metric.update_state(net(inputs))

    strategy.run(replica_step, args=(x,))


def fixed_main(x):
    strategy = tf.distribute.MirroredStrategy()
    with strategy.scope():
        net = build_model()
        metric = keras.metrics.Mean()

    def replica_step(inputs):
        metric.update_state(net(inputs))

    strategy.run(replica_step, args=(x,))
