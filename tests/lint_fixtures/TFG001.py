import tensorflow as tf


@tf.function
def train_step(x):
    return x * 2.0


def bad(batches):
    losses = []
    for x in batches:
        losses.append(train_step(x * 1.0))  # expect: TFG001
    history = []
    for batch in batches:
        loss = train_step(batch)
        history.append(loss)  # expect: TFG001
    return losses, history


def fixed(batches):
    losses = []
    for x in batches:
        losses.append(train_step(x * 1.0).numpy())
    history = []
    for batch in batches:
        loss = train_step(batch)
        history.append(float(loss))
    return losses, history
