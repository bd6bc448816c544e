"""Frame and film digests (docs/digest.md).

A frame's digest is SHA-256 over its raw straight-alpha RGBA bytes, row-major,
so a PNG written by nanoframes can be verified independently. A film's digest
is SHA-256 over its frame digests joined by newlines: order is identity.
"""

from __future__ import annotations

import hashlib
from collections.abc import Sequence
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # numpy is imported by whoever has a frame; this module needs none
    import numpy

# The ledger keeps this many hex characters of each frame digest: enough to
# name the frames that moved, small enough to keep diffs of the ledger readable.
SHORT = 16


def frame_digest(rgba: numpy.ndarray) -> str:
    """SHA-256 hex of a frame's straight RGBA bytes, hashed in place."""
    if rgba.dtype.name != "uint8":
        # Any other dtype would hash a different byte layout than the PNG holds.
        raise TypeError(f"a frame is uint8 RGBA, got {rgba.dtype}")
    if not rgba.flags.c_contiguous:
        # Only a strided view pays for a copy; the renderer's buffers never do.
        import numpy

        rgba = numpy.ascontiguousarray(rgba)
    # hashlib reads the array through the buffer protocol: no bytes copy.
    return hashlib.sha256(rgba).hexdigest()


def film_digest(frame_digests: Sequence[str]) -> str:
    """SHA-256 hex over the frame digests (hex) joined by newlines, in frame order."""
    return hashlib.sha256("\n".join(frame_digests).encode("ascii")).hexdigest()
