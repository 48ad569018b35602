"""How a run opens files: it reads only regular files (a link is followed to one; a FIFO,
a device, a socket or a folder is refused, as is a file over its size cap) and writes its
own files without following links (a planted link is refused, never written through).

A FIFO would block a read forever and `/dev/zero` would fill the memory: each is one line
naming the path instead. Reads open with O_NONBLOCK and check what they opened (fstat),
so a file swapped for a FIFO after a check still cannot block. Remote paths (`gs://...`)
hold no such files and are read as they are.
"""

import errno
import os
import stat

from .errors import UserError

MIB = 2**20
# What a run file may weigh: far above what a run writes (a history row per epoch).
RUN_FILE_CAP = 64 * MIB
KINDS = {
    stat.S_IFIFO: "a FIFO (named pipe)",
    stat.S_IFCHR: "a character device",
    stat.S_IFBLK: "a block device",
    stat.S_IFSOCK: "a socket",
    stat.S_IFDIR: "a folder",
    stat.S_IFLNK: "a symbolic link",
}
REGULAR_ONLY = "a run reads regular files only (a link must lead to one)"


def is_remote(path):
    """Whether `path` is a remote one (`gs://...`): no links, FIFOs or devices there."""
    return "://" in str(path)


def not_regular(path, mode):
    """The UserError for `path`, which is not a regular file (its `st_mode` is `mode`)."""
    kind = KINDS.get(stat.S_IFMT(mode), "not a regular file")
    return UserError(f"{path}: {kind}, not a regular file; {REGULAR_ONLY}")


def too_large(path, size, cap, what):
    """The UserError for `path`, of `size` bytes, over the `cap` of a `what`."""
    sizes = f"{size:,} bytes, over the {cap // MIB} MiB a {what} may hold"
    return UserError(f"{path}: {sizes}; is it the right file?")


def require_regular(path, cap=None, what="file"):
    """The `os.stat` of `path` (links followed); UserError unless it is a regular file of
    at most `cap` bytes (None: any). FileNotFoundError when it is missing."""
    status = os.stat(path)
    if not stat.S_ISREG(status.st_mode):
        raise not_regular(path, status.st_mode)
    if cap is not None and status.st_size > cap:
        raise too_large(path, status.st_size, cap, what)
    return status


def open_regular(path, cap=None, what="file"):
    """A binary file object of `path` for reading, checked to be a regular file of at most
    `cap` bytes once open (opening a FIFO without O_NONBLOCK would block)."""
    descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    try:
        status = os.fstat(descriptor)
        if not stat.S_ISREG(status.st_mode):
            raise not_regular(path, status.st_mode)
        if cap is not None and status.st_size > cap:
            raise too_large(path, status.st_size, cap, what)
        os.set_blocking(descriptor, True)
    except BaseException:
        os.close(descriptor)
        raise
    return os.fdopen(descriptor, "rb")


def read_regular(path, cap=RUN_FILE_CAP, what="run file"):
    """The bytes of the regular file `path` (see `open_regular`), at most `cap` of them."""
    with open_regular(path, cap, what) as file:
        data = file.read(cap + 1)
    if len(data) > cap:  # grown since it was checked
        raise too_large(path, len(data), cap, what)
    return data


def refuse_link(path):
    """UserError when `path` is a symbolic link (or anything but a regular file)."""
    try:
        status = os.lstat(path)
    except FileNotFoundError:
        return
    if stat.S_ISLNK(status.st_mode):
        target = os.readlink(path)
        never = "a run never writes through links: remove it"
        raise UserError(f"{path}: a symbolic link (to {target}); {never}")
    if not stat.S_ISREG(status.st_mode):
        raise not_regular(path, status.st_mode)


def create_new(path):
    """A new file at `path` opened for writing, never through a link (O_EXCL, O_NOFOLLOW):
    a regular file left there (by a kill) is replaced, a link is refused naming it."""
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        return os.open(path, flags, 0o644)
    except FileExistsError:
        refuse_link(path)
        os.unlink(path)
    return os.open(path, flags, 0o644)


def open_lock(path, flags):
    """A descriptor of the lock file `path` opened with `flags`, never through a link and
    without blocking on a FIFO; UserError unless it is a regular file."""
    try:
        descriptor = os.open(path, flags | os.O_NOFOLLOW | os.O_NONBLOCK, 0o644)
    except OSError as error:
        if error.errno == errno.ELOOP:
            refuse_link(path)
        raise
    status = os.fstat(descriptor)
    if not stat.S_ISREG(status.st_mode):
        os.close(descriptor)
        raise not_regular(path, status.st_mode)
    os.set_blocking(descriptor, True)
    return descriptor


def write_whole(path, text):
    """Write `text` to `path` through `<path>.partial`, renamed into place (a kill leaves the
    old file or the new one); an OSError names `path` (a full disk's write names no file).

    The partial file is created anew, never through a link (UserError naming one planted
    there); the rename replaces a link at `path` itself, never the file it leads to.
    """
    partial = path.with_name(f"{path.name}.partial")
    try:
        with open(create_new(partial), "w", encoding="utf-8") as file:
            file.write(text)
    except OSError as error:
        raise OSError(error.errno, error.strerror, str(path)) from None
    partial.replace(path)
