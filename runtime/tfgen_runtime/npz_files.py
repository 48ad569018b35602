"""An .npz file opened for its arrays (`open_npz`) once it is checked: a regular file (a
FIFO would block the run, a device fill its memory), a zip archive, and no array declaring
more bytes than the archive holds (a forged header would make NumPy allocate terabytes).
"""

import os
import zipfile

import numpy as np

from .errors import UserError
from .regular_files import open_regular

# Deflate expands data at most 1032-fold: an entry that says it unpacks to more is forged.
DEFLATE_MOST = 1032
DAMAGED = "a damaged or forged .npz: write it again"


def open_npz(path):
    """The arrays of the .npz file `path` (an open `NpzFile`, to close); UserError naming
    the file when it is not a regular file, not a zip archive, or an array's header
    declares more than the file holds. FileNotFoundError when it is missing."""
    file = open_regular(path)
    try:
        if file.read(4) != b"PK\x03\x04":  # an .npz is a zip archive of .npy files
            raise UserError(
                f"{path}: not an .npz file (an .npz is a zip of .npy arrays)"
            )
        file.seek(0)
        check_declared_sizes(path, file)
        file.seek(0)
        return np.lib.npyio.NpzFile(file, own_fid=True, allow_pickle=False)
    except (OSError, ValueError, zipfile.BadZipFile) as error:
        file.close()
        raise UserError(f"{path}: {error}") from None
    except BaseException:
        file.close()
        raise


def check_declared_sizes(path, file):
    """UserError naming the first array whose header declares more bytes than its entry in
    the archive holds (or an entry that says it holds more than the archive can)."""
    size = os.fstat(file.fileno()).st_size
    with zipfile.ZipFile(file) as archive:
        for entry in archive.infolist():
            if not entry.filename.endswith(".npy"):
                continue
            name = entry.filename.removesuffix(".npy")
            if entry.file_size > most_held(entry, size):
                held = f"says it unpacks to {entry.file_size:,} bytes"
                raise UserError(f"{path}: array {name} {held}; {DAMAGED}")
            with archive.open(entry) as member:
                shape, dtype, declared = declared_bytes(member)
                holds = entry.file_size - member.tell()
            if declared > holds:
                array = f"array {name} declares shape {shape} of {dtype} ({declared:,} bytes)"
                raise UserError(f"{path}: {array}, the file holds {holds:,}; {DAMAGED}")


def most_held(entry, archive_size):
    """The most bytes a zip `entry` can unpack to, within an archive of `archive_size`."""
    packed = min(entry.compress_size, archive_size)
    if entry.compress_type == zipfile.ZIP_STORED:
        return packed
    return packed * DEFLATE_MOST


def declared_bytes(member):
    """`(shape, dtype, bytes)` that the header of the .npy `member` declares."""
    version = np.lib.format.read_magic(member)
    if version == (1, 0):
        shape, _, dtype = np.lib.format.read_array_header_1_0(member)
    else:
        shape, _, dtype = np.lib.format.read_array_header_2_0(member)
    count = 1
    for length in shape:
        count *= length
    return shape, dtype, count * dtype.itemsize
