"""The size an image file declares in its header, read in the graph before the image is
decoded: a small file may declare a huge image (a 388 KB PNG of 20000 x 20000 pixels
decodes to 1.2 GB), and an image over `PIXEL_CAP` pixels is refused naming the file."""

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


def declared_size(data):
    """`[height, width]` (int64) that the image file `data` (its bytes) declares: PNG, GIF and
    BMP from their first bytes, JPEG from its frame header; `[0, 0]` for anything else (it
    fails to decode, and is named then)."""
    head = tf.strings.substr(data, 0, HEAD)
    head = tf.strings.substr(tf.strings.join([head, b"\0" * HEAD]), 0, HEAD)
    bytes_ = tf.cast(tf.io.decode_raw(head, tf.uint8), tf.int64)

    def number(start, length, big_endian=False):
        order = range(length) if big_endian else reversed(range(length))
        value = tf.constant(0, tf.int64)
        for index in order:
            value = value * 256 + bytes_[start + index]
        return value

    png = tf.stack([number(20, 4, True), number(16, 4, True)])
    gif = tf.stack([number(8, 2), number(6, 2)])
    bmp = tf.stack([signed(number(22, 4)), signed(number(18, 4))])
    os2_bmp = tf.stack([number(20, 2), number(18, 2)])  # a 12-byte (OS/2) header
    bmp = tf.where(tf.equal(number(14, 4), 12), os2_bmp, bmp)
    bmp_header = tf.reduce_any(tf.equal(number(14, 4), BMP_HEADERS))
    is_bmp = tf.equal(tf.strings.substr(data, 0, 2), b"BM") & bmp_header
    is_gif = tf.reduce_any(tf.equal(tf.strings.substr(data, 0, 6), GIFS))
    is_png = tf.equal(tf.strings.substr(data, 0, 16), PNG)
    size = tf.zeros(2, tf.int64)
    size = tf.where(is_bmp, bmp, size)
    size = tf.where(is_gif, gif, size)
    size = tf.where(is_png, png, size)
    is_jpeg = tf.equal(tf.strings.substr(data, 0, 3), JPEG)
    return tf.cond(is_jpeg, lambda: jpeg_size(data), lambda: size)


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
