"""PNG encoding of a frame: lossless, straight RGBA, fast, the same bytes in every process.

The encoder was chosen by measurement (``benchmarks/render_speed.py`` prints
the table): each row gets PNG filter 1 ("Sub", the byte four places to the
left subtracted, vectorised with NumPy) and the rows are deflated at level 0
by ISA-L (the ``isal`` package), falling back to the standard library's zlib
at level 1 where ``isal`` is not installed. At 1920x1080 that is about 4 ms a
frame against 23 ms for zlib at level 1 and 43 ms for Pillow at its level 1.

Why ISA-L's level 0 and not its level 1 (as fast, files about a fifth
smaller): level 1's output is not a function of its input alone. In about one
process in a hundred it deflates some frames differently from every other
process (a valid stream, the same pixels, a different match), and does so every
time in that process; level 0 did not in 1,100 processes, one of them such a
process (docs/decisions/0008-png-encoder-isal-level-0.md). A render's PNG files should
repeat byte for byte. (Another machine may take another of ISA-L's code paths:
across machines, the pixels are what is compared.)

What every check reads is the pixels: the decoded RGBA of every PNG is exactly
the frame's (SHA-256 of it is the frame digest).
"""

from __future__ import annotations

import struct
import zlib
from pathlib import Path
from typing import TYPE_CHECKING

from ..checksum import crc32

if TYPE_CHECKING:  # imported where a frame is encoded: a warm render copies PNGs
    import numpy as np

try:  # ISA-L's deflate: several times faster than zlib
    from isal import isal_zlib as _deflate_lib

    ENCODER = "isal"
except ImportError:  # pragma: no cover - isal is a dependency; zlib keeps it working
    _deflate_lib = zlib
    ENCODER = "zlib"

# ISA-L's level 0 is a compressor (its own fastest); zlib's level 0 would store
LEVEL = 0 if ENCODER == "isal" else 1
SIGNATURE = b"\x89PNG\r\n\x1a\n"


def _chunk(kind: bytes, data: bytes) -> bytes:
    return (struct.pack(">I", len(data)) + kind + data
            + struct.pack(">I", crc32(data, crc32(kind)) & 0xFFFFFFFF))


def sub_filtered(frame: np.ndarray) -> np.ndarray:
    """The rows of a PNG's image data: filter byte 1 ("Sub"), then each byte minus
    the byte of the pixel to its left (modulo 256)."""
    import numpy as np

    height, width = frame.shape[:2]
    flat = np.ascontiguousarray(frame).reshape(height, width * 4)
    rows = np.empty((height, 1 + width * 4), dtype=np.uint8)
    rows[:, 0] = 1
    rows[:, 1:5] = flat[:, :4]
    np.subtract(flat[:, 4:], flat[:, :-4], out=rows[:, 5:])
    return rows


def encode_png(frame: np.ndarray) -> bytes:
    """The PNG file of a straight RGBA frame (uint8, height x width x 4)."""
    if frame.dtype != "uint8" or frame.ndim != 3 or frame.shape[2] != 4:
        raise TypeError(f"a frame is uint8 RGBA (h, w, 4), got {frame.dtype} {frame.shape}")
    height, width = frame.shape[:2]
    header = struct.pack(">IIBBBBB", width, height, 8, 6, 0, 0, 0)  # 8-bit RGBA
    # deflate reads the filtered rows in place: a copy to bytes first (8 MB at
    # 1080p) measured 6 ms a frame, and slowed the next frame's drawing as well
    data = _deflate_lib.compress(sub_filtered(frame), LEVEL)
    return SIGNATURE + _chunk(b"IHDR", header) + _chunk(b"IDAT", data) + _chunk(b"IEND", b"")


def decode_png(data: bytes | Path) -> np.ndarray:
    """The straight RGBA of a PNG (bytes or a path; Pillow decodes it: any PNG, not
    only ours). Raises on anything unreadable."""
    import io

    import numpy as np
    from PIL import Image

    from ..model.limits import MAX_PIXELS  # a canvas's, and a scaled render's, largest

    source = io.BytesIO(data) if isinstance(data, bytes) else data
    with Image.open(source) as im:
        # the header's size, before anything is decoded: no frame is larger than a
        # canvas may be, and a few bytes must not declare gigabytes (accept --from)
        if im.width * im.height > MAX_PIXELS:
            raise ValueError(f"declares {im.width}x{im.height} pixels, over the "
                             f"{MAX_PIXELS} a frame may have")
        im.load()
        return np.ascontiguousarray(np.asarray(im.convert("RGBA")))
