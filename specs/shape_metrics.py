"""A metric of this project's own, for specs/finetune.yaml (found next to the spec)."""

import keras
from keras import ops


class MeanRecall(keras.metrics.Metric):
    """Each class's recall, averaged over the classes seen (balanced accuracy), of logits or
    probabilities against integer labels."""

    def __init__(self, classes, name="mean_recall", **kwargs):
        super().__init__(name=name, **kwargs)
        self.classes = classes
        self.hits = self.add_variable(shape=(classes,), initializer="zeros", name="hits")
        self.counts = self.add_variable(shape=(classes,), initializer="zeros", name="counts")

    def update_state(self, y_true, y_pred, sample_weight=None):
        labels = ops.reshape(ops.cast(y_true, "int32"), (-1,))
        truth = ops.one_hot(labels, self.classes)
        predicted = ops.cast(ops.argmax(y_pred, axis=-1), "int32")
        right = ops.cast(ops.equal(labels, predicted), "float32")
        self.hits.assign_add(ops.sum(truth * ops.expand_dims(right, -1), axis=0))
        self.counts.assign_add(ops.sum(truth, axis=0))

    def result(self):
        seen = ops.cast(self.counts > 0, "float32")
        recall = self.hits / ops.maximum(self.counts, 1.0)
        return ops.sum(recall * seen) / ops.maximum(ops.sum(seen), 1.0)

    def reset_state(self):
        for variable in self.variables:
            variable.assign(ops.zeros(variable.shape))

    def get_config(self):
        return {**super().get_config(), "classes": self.classes}
