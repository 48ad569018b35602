"""What a run reads and writes is a regular file (issue 35, the attacker's findings): class folders
are listed without following folder links, each file once and in one class; a FIFO, a device or a
dangling link is one line naming it; an image over the pixel cap is refused before it is decoded;
run files are never written through a planted link. Real files, FIFOs (os.mkfifo) and links, in
this process (the support package of generated/); a read that could block runs in a thread that a
writer frees after a timeout, so that a regression fails instead of hanging."""

from __future__ import annotations

import concurrent.futures
import os
import zlib

import numpy as np
import pytest
from conftest import Lazy, lazy_import, load_runtime
from folder_data import SHAPES, write_images, write_reviews

tf = lazy_import("tensorflow")
rt = Lazy(load_runtime)


def images(directory, classes=3):
    inputs = {"image": rt.Field((8, 8, 3), "float32")}
    targets = {"shape": rt.Field((), "int32", classes=classes)}
    return rt.image_folder(str(directory), inputs, targets, image_size=(8, 8))


def texts(directory):
    inputs = {"text": rt.Field((), "string")}
    targets = {"label": rt.Field((), "int32", classes=2)}
    return rt.text_folder(str(directory), inputs, targets)


def within(seconds, call, fifo):
    """`call()`, or a failure when it has not returned within `seconds`: it blocked on `fifo`
    (opened for writing then, so that the blocked reader sees its end and the thread ends)."""
    pool = concurrent.futures.ThreadPoolExecutor(1)
    future = pool.submit(call)
    try:
        return future.result(timeout=seconds)
    except concurrent.futures.TimeoutError:
        os.close(os.open(fifo, os.O_WRONLY | os.O_NONBLOCK))
        pytest.fail(f"blocked on the FIFO {fifo} for {seconds} s")
    finally:
        pool.shutdown(wait=False)


@pytest.mark.parametrize("kind", ["image", "text"])
def test_a_symlink_loop_in_a_class_folder_lists_each_file_once_in_its_own_class(tmp_path, kind, capsys):
    root = tmp_path / "data"
    if kind == "image":
        write_images(root, per_class=4, size=(2, 2))
        first, listed = "circle", lambda: images(root)
    else:
        write_reviews(root, per_class=4)
        first, listed = "negative", lambda: texts(root)
    (root / first / "loop").symlink_to("..")  # every class's files again, under the first class
    examples = listed()
    assert len(examples) == (12 if kind == "image" else 8)
    assert np.bincount(examples.labels).tolist() == ([4, 4, 4] if kind == "image" else [4, 4])
    assert not [path for path in examples.paths if "/loop/" in path.removeprefix(str(root))]
    assert f"warning: {root / first / 'loop'}: a link to a folder inside a class folder is not followed" in (
        capsys.readouterr().err
    )
    _, held = rt.split_files(examples, 0.25, 5, stratify=True)
    kept = set(examples.paths) - set(held.paths)
    assert not kept & set(held.paths) and len(kept) + len(held) == len(examples)


def test_a_file_reached_from_two_class_folders_is_one_line_naming_it(tmp_path):
    root = tmp_path / "shapes"
    write_images(root, per_class=2, size=(2, 2))
    (root / "square" / "circle-too.png").symlink_to(root / "circle" / "001.png")
    with pytest.raises(rt.UserError, match=r"square/circle-too.png: the same file as one in .*/circle; a file"):
        images(root)
    (root / "square" / "circle-too.png").unlink()
    os.link(root / "circle" / "001.png", root / "stripes" / "hard.png")  # a hard link: one file too
    with pytest.raises(rt.UserError, match=r"stripes/hard.png: the same file as one in .*/circle"):
        images(root)


def test_a_link_to_a_regular_file_is_read_and_two_paths_to_one_file_are_listed_once(tmp_path):
    root = tmp_path / "shapes"
    written = write_images(root, per_class=2, size=(2, 2))
    outside = tmp_path / "elsewhere.png"
    outside.write_bytes(written[0].read_bytes())
    (root / "circle" / "linked.png").symlink_to(outside)
    (root / "circle" / "linked-again.png").symlink_to(outside)
    (root / "square" / "zz-same.png").symlink_to(root / "square" / "001.png")
    examples = images(root)
    names = [path.removeprefix(f"{root}/") for path in examples.paths]
    assert names == [
        "circle/000.jpg",
        "circle/001.png",
        "circle/linked-again.png",
        "square/000.jpg",
        "square/001.png",
        "stripes/000.jpg",
        "stripes/001.png",
    ]
    assert len(list(examples.dataset())) == 7


@pytest.mark.parametrize("entry", ["fifo-image", "fifo-text", "dev-zero", "dangling-link"])
def test_a_fifo_a_device_or_a_dangling_link_in_a_class_folder_is_one_line_naming_it(tmp_path, entry):
    root = tmp_path / "data"
    if entry == "fifo-text":
        write_reviews(root, per_class=2)
        bad, listed = root / "positive" / "zz.txt", lambda: texts(root)
    else:
        write_images(root, per_class=2, size=(2, 2))
        bad, listed = root / "square" / "zz.png", lambda: images(root)
    if entry.startswith("fifo"):
        os.mkfifo(bad)
        why = r"a FIFO \(named pipe\), not a regular file"
    elif entry == "dev-zero":
        bad.symlink_to("/dev/zero")
        why = "a character device, not a regular file"
    else:
        bad.symlink_to(tmp_path / "gone.png")
        why = r"cannot be read \(No such file or directory\): a dangling link\?"
    with pytest.raises(rt.UserError, match=f"^{bad}: {why}"):
        within(20, listed, bad)


def png_bytes(width, height):
    """A valid grayscale PNG of `width` x `height` black pixels (compressed row by row)."""

    def chunk(kind, data):
        body = kind + data
        return len(data).to_bytes(4, "big") + body + zlib.crc32(body).to_bytes(4, "big")

    header = width.to_bytes(4, "big") + height.to_bytes(4, "big") + bytes([8, 0, 0, 0, 0])
    packer = zlib.compressobj(9)
    row = bytes(width + 1)  # filter byte 0, then the pixels
    rows = b"".join(packer.compress(row) for _ in range(height)) + packer.flush()
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", header) + chunk(b"IDAT", rows) + chunk(b"IEND", b"")


def test_an_image_declaring_more_than_64_megapixels_is_one_line_naming_it_before_it_is_decoded(tmp_path):
    root = tmp_path / "shapes"
    write_images(root, per_class=2, size=(2, 2))
    big = root / "square" / "zz-big.png"
    big.write_bytes(png_bytes(8200, 8200))  # 67.2 megapixels in 65 KB
    assert big.stat().st_size < 100_000
    with pytest.raises(tf.errors.InvalidArgumentError) as raised:
        list(images(root).dataset())
    assert rt.cli.is_users(raised.value)
    assert rt.cli.first_line(raised.value) == (
        f"{big}: cannot be read as an image: it declares 8200x8200 pixels, over the cap of 67,108,864 (8192x8192)"
    )
    at_cap = rt.image_headers.is_oversized
    assert not at_cap(tf.constant([8192, 8192], tf.int64)) and at_cap(tf.constant([8192, 8193], tf.int64))


def test_the_declared_size_is_read_from_png_jpeg_gif_and_bmp_headers_a_batch_of_files_at_once(tmp_path):
    from PIL import Image

    headers = rt.image_headers
    pixels = np.random.default_rng(0).integers(0, 255, size=(7, 13, 3)).astype("uint8")
    encoded = {
        "png": tf.io.encode_png(pixels).numpy(),
        "jpeg": tf.io.encode_jpeg(pixels).numpy(),
    }
    for kind in ("gif", "bmp"):
        path = tmp_path / f"image.{kind}"
        Image.fromarray(pixels).save(path)
        encoded[kind] = path.read_bytes()
    for kind, data in encoded.items():
        declared = headers.declared_size(tf.constant(data)).numpy().tolist()
        decoded = tf.io.decode_image(data, expand_animations=False).shape[:2]
        assert declared == [7, 13] == list(decoded), kind
    for garbage in (b"not an image", b"\x89PNG\r\n\x1a\n but no image after the signature", b"GIF8 or BM"):
        assert headers.declared_size(tf.constant(garbage)).numpy().tolist() == [0, 0], garbage

    # A batch of files at once (as an epoch's files stream): each file's size, as one by one
    # (a JPEG's frame header is read one file at a time: [0, 0] in the batch).
    files = [encoded["png"], encoded["gif"], encoded["bmp"], png_bytes(8200, 3), b"GIF8 or BM", encoded["jpeg"]]
    batch = headers.declared_sizes(tf.constant(files)).numpy().tolist()
    assert batch == [[7, 13], [7, 13], [7, 13], [3, 8200], [0, 0], [0, 0]]


def test_a_fifo_tfrecord_file_is_one_line_naming_it(tmp_path):
    fifo = tmp_path / "data.tfrecord"
    os.mkfifo(fifo)
    with pytest.raises(rt.UserError, match=f"^{fifo}: a FIFO \\(named pipe\\), not a regular file"):
        within(20, lambda: rt.checked_tfrecords([str(fifo)], "", lambda records: records), fifo)


@pytest.mark.parametrize("name", ["history.jsonl", "run.json", "checkpoints/checkpoint"])
def test_a_fifo_run_file_is_one_line_naming_it(tmp_path, name):
    out = tmp_path / "run"
    (out / "checkpoints").mkdir(parents=True)
    fifo = out / name
    os.mkfifo(fifo)
    read = {
        "history.jsonl": lambda: rt.run_dir.history_lines(fifo),
        "run.json": lambda: rt.folders.is_tfgen_run(fifo),
        "checkpoints/checkpoint": lambda: rt.checkpoint_paths(out / "checkpoints"),
    }[name]
    with pytest.raises(rt.UserError, match=f"^{fifo}: a FIFO \\(named pipe\\), not a regular file"):
        within(20, read, fifo)


@pytest.mark.parametrize("kind", ["fifo", "link"])
def test_a_lock_file_that_is_a_fifo_or_a_link_is_one_line_naming_it(tmp_path, kind):
    out = tmp_path / "run"
    out.mkdir()
    lock = out / ".tfgen.lock"
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    if kind == "fifo":
        os.mkfifo(lock)
        why = "a FIFO \\(named pipe\\), not a regular file"
    else:
        lock.symlink_to(victim)
        why = f"a symbolic link \\(to {victim}\\); a run never writes through links"
    with pytest.raises(rt.UserError, match=f"^{lock}: {why}"):
        within(20, lambda: rt.folders.hold(out), lock)
    assert victim.read_text() == "precious\n"


@pytest.mark.parametrize("name", ["history.jsonl", "run.json"])
def test_a_partial_file_linked_outside_the_run_is_refused_and_the_file_it_leads_to_is_untouched(tmp_path, name):
    out = tmp_path / "run"
    out.mkdir()
    victim = tmp_path / "victim.txt"
    victim.write_text("precious\n")
    (out / f"{name}.partial").symlink_to(victim)
    with pytest.raises(rt.UserError, match=f"^{out / name}.partial: a symbolic link \\(to {victim}\\)"):
        rt.run_dir.write_whole(out / name, "{}\n")
    assert victim.read_text() == "precious\n"
    assert not (out / name).exists()


def test_a_partial_file_a_kill_left_is_replaced_and_a_linked_target_is_replaced_not_written_through(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "run.json.partial").write_text("half a file")
    victim = tmp_path / "victim.json"
    victim.write_text("precious\n")
    (out / "run.json").symlink_to(victim)
    rt.run_dir.write_whole(out / "run.json", "{}\n")
    assert (out / "run.json").read_text() == "{}\n" and not (out / "run.json").is_symlink()
    assert not (out / "run.json.partial").exists()
    assert victim.read_text() == "precious\n"


def test_classes_listed_through_a_linked_class_folder_are_read(tmp_path):
    """A class folder may itself be a link to a folder elsewhere (a common layout)."""
    write_images(tmp_path / "store", per_class=2, size=(2, 2))
    root = tmp_path / "shapes"
    root.mkdir()
    for name in SHAPES:
        (root / name).symlink_to(tmp_path / "store" / name)
    assert np.bincount(images(root).labels).tolist() == [2, 2, 2]
