"""Each `keras.applications` family's `preprocess_input`, as the stock Keras layer that computes
the same on images of 0-255 values (tests/spec/test_application_preprocessing.py compares them
with Keras's own function for every family)."""

from __future__ import annotations

from typing import Any

from tfgen.spec import catalog

# The scaling each family's `preprocess_input` applies (imagenet_utils's `mode`), by family module.
FAMILY_MODE = {
    "keras.applications.convnext": "none",  # the model rescales its input itself
    "keras.applications.densenet": "torch",
    "keras.applications.efficientnet": "none",
    "keras.applications.efficientnet_v2": "none",
    "keras.applications.inception_resnet_v2": "tf",
    "keras.applications.inception_v3": "tf",
    "keras.applications.mobilenet": "tf",
    "keras.applications.mobilenet_v2": "tf",
    "keras.applications.mobilenet_v3": "none",
    "keras.applications.nasnet": "tf",
    "keras.applications.resnet": "caffe",
    "keras.applications.resnet_v2": "tf",
    "keras.applications.vgg16": "caffe",
    "keras.applications.vgg19": "caffe",
    "keras.applications.xception": "tf",
}
TORCH_MEAN = (0.485, 0.456, 0.406)
TORCH_STD = (0.229, 0.224, 0.225)
CAFFE_MEAN_BGR = (103.939, 116.779, 123.68)
# RGB -> BGR as a matrix on the channel axis (exact: products by 0 and 1).
CHANNELS_REVERSED = [[0.0, 0.0, 1.0], [0.0, 1.0, 0.0], [1.0, 0.0, 0.0]]


def family(application: str) -> str:
    """The module of an application's family (`keras.applications.mobilenet_v2`)."""
    return catalog.applications()[application]["module"]


def preprocess_layer(application: str) -> dict[str, Any]:
    """`{type, args}` of the layer that computes `application`'s `preprocess_input`."""
    known = catalog.applications()
    if application not in known:
        raise ValueError(f"unknown Keras application `{application}`{catalog.did_you_mean(application, list(known))}")
    mode = FAMILY_MODE[family(application)]
    if mode == "tf":  # to [-1, 1]
        return {"type": "Rescaling", "args": {"scale": 1 / 127.5, "offset": -1.0}}
    if mode == "torch":  # to [0, 1], then ImageNet's mean and standard deviation per channel
        mean = [255 * m for m in TORCH_MEAN]
        variance = [(255 * s) ** 2 for s in TORCH_STD]
        return {"type": "Normalization", "args": {"mean": mean, "variance": variance}}
    if mode == "caffe":  # RGB -> BGR, less ImageNet's mean per channel
        kernel = {"type": "Constant", "value": CHANNELS_REVERSED}
        bias = {"type": "Constant", "value": [-m for m in CAFFE_MEAN_BGR]}
        return {
            "type": "Dense",
            "args": {"units": 3, "kernel_initializer": kernel, "bias_initializer": bias, "trainable": False},
        }
    return {"type": "Identity", "args": {}}
