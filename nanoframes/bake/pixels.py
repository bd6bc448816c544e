"""A decoded video frame → straight RGBA bytes, by exact integer arithmetic.

FFmpeg's scaler picks a code path by CPU (SIMD), so its RGB can differ by a
unit between machines; this module never calls it. Every supported pixel
format is converted here in NumPy integer arithmetic, so a clip frame's pixels
are a function of the decoder's output alone (docs/compositions.md, "Video
clips"):

- **Packed RGB** (``rgb24``, ``bgr24``, ``rgba``, ``bgra``, ``argb``, ``abgr``
  and the padded ``rgb0`` family): the bytes reordered; alpha kept, 255 where
  the format has none.
- **Planar YUV**, 8, 10 and 12 bits, 4:2:0, 4:2:2 and 4:4:4, with or without an
  alpha plane: limited-range BT.601 (BT.709 from 720 rows up, or where the
  stream says so), full range for ``yuvj`` formats or a stream flagged full
  range; chroma repeated (nearest). The matrix is the 8-bit path's 8.8 fixed
  point coefficients; an n-bit sample is read at its own precision: offsets
  scale by 2^(n−8) and the result shifts right by 8 + (n − 8), rounding half
  up, so 8-bit frames give exactly the bytes they always gave.
- **Alpha** of n bits becomes 8 bits as ``(a × 255 + (2^n − 1) // 2) //
  (2^n − 1)`` (rounded; 0 and full stay 0 and 255). Alpha is straight, as
  FFmpeg's formats and PNG both define it: colour is never divided or
  multiplied by it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported where a clip is decoded: most films have none
    import numpy as np

# YUV -> RGB in 8.8 fixed point: (Y gain, V->R, U->G, V->G, U->B) and the Y offset.
MATRICES = {
    ("bt601", False): (298, 409, 100, 208, 516, 16),
    ("bt709", False): (298, 459, 55, 136, 541, 16),
    ("bt601", True): (256, 359, 88, 183, 454, 0),
    ("bt709", True): (256, 403, 48, 120, 475, 0),
}


def _planar_formats() -> dict[str, tuple[int, int, bool, int, bool]]:
    """name -> (chroma step x, chroma step y, full range, bits, alpha plane)."""
    out = {}
    for sub, (sx, sy) in (("420", (2, 2)), ("422", (2, 1)), ("444", (1, 1))):
        out[f"yuv{sub}p"] = (sx, sy, False, 8, False)
        out[f"yuvj{sub}p"] = (sx, sy, True, 8, False)
        out[f"yuva{sub}p"] = (sx, sy, False, 8, True)
        for bits in (10, 12):
            out[f"yuv{sub}p{bits}le"] = (sx, sy, False, bits, False)
            out[f"yuva{sub}p{bits}le"] = (sx, sy, False, bits, True)
    return out


PLANAR = _planar_formats()
# Packed 8-bit RGB: name -> (bytes per pixel, index of R, G, B, index of A or None).
PACKED = {
    "rgb24": (3, 0, 1, 2, None), "bgr24": (3, 2, 1, 0, None),
    "rgba": (4, 0, 1, 2, 3), "bgra": (4, 2, 1, 0, 3),
    "argb": (4, 1, 2, 3, 0), "abgr": (4, 3, 2, 1, 0),
    "rgb0": (4, 0, 1, 2, None), "bgr0": (4, 2, 1, 0, None),
    "0rgb": (4, 1, 2, 3, None), "0bgr": (4, 3, 2, 1, None),
}
SUPPORTED = tuple(sorted(PACKED)) + tuple(sorted(PLANAR))
# How the refusal of an unsupported format lists the supported ones.
SUPPORTED_TEXT = ("rgb24, rgba, bgra, argb (and their byte orders), 8-, 10- and 12-bit "
                  "yuv420p/yuv422p/yuv444p, with or without alpha (yuva...)")


def rgba_from_yuv(y: np.ndarray, u: np.ndarray, v: np.ndarray, sub: tuple[int, int],
                  full: bool, matrix: str, bits: int = 8,
                  alpha: np.ndarray | None = None) -> np.ndarray:
    """Integer YUV (``bits`` per sample) → straight RGBA (uint8), chroma repeated
    to full size; alpha from ``alpha`` (same bits) or 255."""
    import numpy as np

    gain, vr, ug, vg, ub, off = MATRICES[(matrix, full)]
    extra = bits - 8
    mid = 128 << extra
    h, w = y.shape
    sx, sy = sub
    u = np.repeat(np.repeat(u, sy, axis=0), sx, axis=1)[:h, :w].astype(np.int32) - mid
    v = np.repeat(np.repeat(v, sy, axis=0), sx, axis=1)[:h, :w].astype(np.int32) - mid
    c = (y.astype(np.int32) - (off << extra)) * gain + (1 << (7 + extra))
    shift = 8 + extra
    out = np.empty((h, w, 4), dtype=np.uint8)
    out[..., 0] = np.clip((c + vr * v) >> shift, 0, 255)
    out[..., 1] = np.clip((c - ug * u - vg * v) >> shift, 0, 255)
    out[..., 2] = np.clip((c + ub * u) >> shift, 0, 255)
    out[..., 3] = 255 if alpha is None else alpha_to_8bit(alpha, bits)
    return out


def alpha_to_8bit(alpha: np.ndarray, bits: int) -> np.ndarray:
    """An n-bit alpha plane as 8-bit, rounded (exact for n = 8)."""
    import numpy as np

    if bits == 8:
        return alpha
    top = (1 << bits) - 1
    a = np.minimum(alpha.astype(np.int32), top)  # stray bits above n never overflow
    return ((a * 255 + top // 2) // top).astype(np.uint8)


def _plane(frame, k: int, width: int, height: int, wide: bool) -> np.ndarray:
    """Plane ``k`` as a (height, width) array of its samples (padding cut off)."""
    import numpy as np

    plane = frame.planes[k]
    dtype = np.dtype("<u2" if wide else "u1")
    rows = np.frombuffer(plane, dtype=dtype).reshape(-1, plane.line_size // dtype.itemsize)
    return rows[:height, :width]


def frame_rgba(frame) -> np.ndarray:
    """The straight RGBA of one decoded PyAV frame; ValueError for a format this
    module does not convert."""
    import numpy as np

    fmt = frame.format.name
    w, h = frame.width, frame.height
    if fmt in PACKED:
        size, r, g, b, a = PACKED[fmt]
        pixels = _plane(frame, 0, w * size, h, False).reshape(h, w, size)
        out = np.empty((h, w, 4), dtype=np.uint8)
        for dst, src in enumerate((r, g, b)):
            out[..., dst] = pixels[..., src]
        out[..., 3] = 255 if a is None else pixels[..., a]
        return out
    if fmt not in PLANAR:
        raise ValueError(f"pixel format {fmt} is not supported (supported: {SUPPORTED_TEXT})")
    sx, sy, full, bits, has_alpha = PLANAR[fmt]
    full = full or getattr(frame, "color_range", 0) == 2
    cw, ch = -(-w // sx), -(-h // sy)
    wide = bits > 8
    planes = [_plane(frame, 0, w, h, wide), _plane(frame, 1, cw, ch, wide),
              _plane(frame, 2, cw, ch, wide)]
    alpha = _plane(frame, 3, w, h, wide) if has_alpha else None
    space = str(getattr(frame, "colorspace", "") or "").lower()
    matrix = "bt709" if ("709" in space or (h >= 720 and "601" not in space
                                              and "470" not in space)) else "bt601"
    return rgba_from_yuv(*planes, (sx, sy), full, matrix, bits, alpha)
