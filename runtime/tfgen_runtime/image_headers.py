"""The size an image file declares in its header, read in the graph before the image is
decoded: a small file may declare a huge image (a 388 KB PNG of 20000 x 20000 pixels
decodes to 1.2 GB), and an image over `PIXEL_CAP` pixels is refused naming the file."""

import numpy as np
import tensorflow as tf

# The most pixels an image may declare: 64 megapixels (8192 x 8192; 48 and 50 megapixel
# photos fit), at most 256 MiB decoded as uint8 RGBA. `image_size` is at most 8192 a side.
PIXEL_CAP = 8192 * 8192
# What each header starts with (anything else declares no size: it fails to decode).
PNG = b"\x89PNG\r\n\x1a\n\x00\x00\x00\x0dIHDR"  # the signature, then the IHDR chunk
GIFS = [b"GIF87a", b"GIF89a"]
BMP_HEADERS = [12, 40, 52, 56, 64, 108, 124]  # the sizes of a BMP's info header
JPEG = b"\xff\xd8\xff"
HEAD = 32  # bytes: every header field read below is in them


# Each header field read: (first byte, bytes, big-endian?), in the order `declared_size` reads
# them; their values are one product of the header's bytes by `field_weights()`.
FIELDS = [
    (20, 4, True),  # PNG height
    (16, 4, True),  # PNG width
    (8, 2, False),  # GIF height
    (6, 2, False),  # GIF width
    (22, 4, False),  # BMP height
    (18, 4, False),  # BMP width
    (20, 2, False),  # OS/2 BMP height
    (18, 2, False),  # OS/2 BMP width
    (14, 4, False),  # BMP info header size
]


def field_weights():
    """`[HEAD, len(FIELDS)]` float64: each byte's place value in each field (exact: < 2**53)."""
    weights = np.zeros((HEAD, len(FIELDS)))
    for column, (start, length, big_endian) in enumerate(FIELDS):
        for index in range(length):
            place = length - 1 - index if big_endian else index
            weights[start + index, column] = 256.0**place
    return weights


WEIGHTS = field_weights()


def declared_size(data):
    """`[height, width]` (int64) that the image file `data` (its bytes) declares: PNG, GIF and
    BMP from their first bytes, JPEG from its frame header; `[0, 0]` for anything else (it
    fails to decode, and is named then)."""
    return tf.cond(is_jpeg(data), lambda: jpeg_size(data), lambda: declared_sizes(data))


def declared_sizes(data):
    """`[..., 2]`: the `[height, width]` that each file of `data` (bytes, any shape: a batch
    of files) declares in its first bytes: PNG, GIF and BMP; `[0, 0]` for anything else
    (a JPEG too: its frame header is further in, see `declared_size`).

    Every field of every file is read at once (one product of the headers' bytes): a few
    ops per batch of files, not one per byte of each, as an epoch's files stream."""
    head = tf.strings.substr(tf.strings.join([data, b"\0" * HEAD]), 0, HEAD)
    bytes_ = tf.cast(tf.io.decode_raw(head, tf.uint8), tf.float64)
    fields = tf.cast(tf.tensordot(bytes_, WEIGHTS, axes=1), tf.int64)
    png = fields[..., 0:2]
    gif = fields[..., 2:4]
    info = fields[..., 8:9]  # a BMP's info header size: 12 for an OS/2 one
    bmp = tf.where(tf.equal(info, 12), fields[..., 6:8], signed(fields[..., 4:6]))
    bmp_header = tf.reduce_any(tf.equal(info, BMP_HEADERS), axis=-1)
    is_bmp = tf.equal(tf.strings.substr(data, 0, 2), b"BM") & bmp_header
    gif_head = tf.strings.substr(data, 0, 6)[..., tf.newaxis]
    is_gif = tf.reduce_any(tf.equal(gif_head, GIFS), axis=-1)
    is_png = tf.equal(tf.strings.substr(data, 0, 16), PNG)
    size = tf.zeros_like(png)
    size = tf.where(is_bmp[..., tf.newaxis], bmp, size)
    size = tf.where(is_gif[..., tf.newaxis], gif, size)
    return tf.where(is_png[..., tf.newaxis], png, size)


def is_jpeg(data):
    """Whether each file of `data` starts as a JPEG does."""
    return tf.equal(tf.strings.substr(data, 0, 3), JPEG)


def signed(value):
    """The 32-bit unsigned `value` read as signed, made positive (a BMP's height may be
    negative: rows top to bottom)."""
    return tf.abs(tf.where(value >= 2**31, value - 2**32, value))


def jpeg_size(data):
    """`[height, width]` of a JPEG file, from its frame header (nothing is decoded)."""
    return tf.cast(tf.image.extract_jpeg_shape(data)[:2], tf.int64)


def is_oversized(size):
    """Whether an image of `size` (`[height, width]`) has more pixels than `PIXEL_CAP`."""
    return size[0] * size[1] > PIXEL_CAP


def oversized(size):
    """What an image of `size` over the cap says (after `<path>: cannot be read as`)."""
    declared = tf.strings.reduce_join(tf.strings.as_string(size[::-1]), separator="x")
    over = f"pixels, over the cap of {PIXEL_CAP:,} (8192x8192)"
    return tf.strings.join(["an image: it declares ", declared, " ", over])
