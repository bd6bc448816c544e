"""Video clips as media: ``<image href="clip.mp4">`` (also ``.webm``, ``.mov``).

A clip is decoded once per process per file version through PyAV (one decoder
thread), every frame kept as a PNG ``data:`` URI. The YUV → RGB conversion is
done here in integer numpy arithmetic, not by FFmpeg's scaler, so a frame's
pixels do not depend on the CPU's SIMD path: limited-range BT.601 (BT.709 from
720 rows up, or where the stream says so), full range for ``yuvj`` formats,
chroma repeated (nearest), alpha 255. The frame shown at film time ``t`` is
the last one whose presentation time is at most ``data-in + (t − data-start)
× data-speed`` (exact rationals): the first before the clip starts, the last
after it ends, or wrapped modulo the clip's length with ``data-loop``.

Decoded pixels are a function of the clip's bytes and of the decoder, so a
composition that draws video has the decoder in its toolchain identity
(:func:`decoder_parts`).
"""

from __future__ import annotations

import base64
import hashlib
import io
from bisect import bisect_right
from dataclasses import dataclass
from fractions import Fraction
from functools import cache, lru_cache
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import NanoframesError
from ..files import read_regular
from .media import resolve_reference
from .timing import Timing, read_timing

if TYPE_CHECKING:  # imported where a clip is decoded: most films have none
    import numpy as np

CLIP_SUFFIXES = (".mp4", ".webm", ".mov")
MAX_CLIP_BYTES = 64 * 1024 * 1024
MAX_CLIP_SIDE = 4096
MAX_CLIP_FRAMES = 3600
MAX_CLIP_PIXELS = 256 * 1024 * 1024  # all decoded frames together
# YUV -> RGB in 8.8 fixed point: (Y gain, V->R, U->G, V->G, U->B) and Y/UV offsets.
_MATRICES = {
    ("bt601", False): (298, 409, 100, 208, 516, 16),
    ("bt709", False): (298, 459, 55, 136, 541, 16),
    ("bt601", True): (256, 359, 88, 183, 454, 0),
    ("bt709", True): (256, 403, 48, 120, 475, 0),
}
_PLANAR = {"yuv420p": (2, 2, False), "yuvj420p": (2, 2, True), "yuv422p": (2, 1, False),
           "yuvj422p": (2, 1, True), "yuv444p": (1, 1, False), "yuvj444p": (1, 1, True)}


def is_clip_href(href: str | None) -> bool:
    return bool(href) and href.split("?", 1)[0].split("#", 1)[0].lower().endswith(CLIP_SUFFIXES)


@dataclass(frozen=True)
class Decoded:
    """One clip file version, decoded."""

    path: Path
    sha256: str
    width: int
    height: int
    times: tuple[Fraction, ...]  # presentation time of each frame, seconds, from 0
    length: Fraction  # the clip's duration: the last frame's end
    uris: tuple[str, ...]  # PNG data: URI of each frame


@dataclass(frozen=True)
class Clip:
    """A clip as one ``<image>`` places it in time."""

    href: str
    decoded: Decoded
    timing: Timing

    @property
    def path(self) -> Path:
        return self.decoded.path

    @property
    def sha256(self) -> str:
        return self.decoded.sha256

    @property
    def width(self) -> int:
        return self.decoded.width

    @property
    def height(self) -> int:
        return self.decoded.height

    def frame_at(self, t: float) -> int:
        """The index of the clip frame shown at film time ``t``."""
        d, at = self.decoded, self.timing
        st = Fraction(at.in_) + (Fraction(t) - Fraction(at.start)) * Fraction(at.speed)
        if at.loop and d.length > 0:
            st %= d.length
        return max(0, bisect_right(d.times, st) - 1)

    def uri_at(self, t: float) -> str:
        return self.decoded.uris[self.frame_at(t)]


def rgba_from_yuv(y: np.ndarray, u: np.ndarray, v: np.ndarray, sub: tuple[int, int],
                  full: bool, matrix: str) -> np.ndarray:
    """Integer YUV → straight RGBA (uint8), chroma repeated to full size."""
    import numpy as np

    gain, vr, ug, vg, ub, off = _MATRICES[(matrix, full)]
    h, w = y.shape
    sx, sy = sub
    u = np.repeat(np.repeat(u, sy, axis=0), sx, axis=1)[:h, :w].astype(np.int32) - 128
    v = np.repeat(np.repeat(v, sy, axis=0), sx, axis=1)[:h, :w].astype(np.int32) - 128
    c = (y.astype(np.int32) - off) * gain + 128
    out = np.empty((h, w, 4), dtype=np.uint8)
    out[..., 0] = np.clip((c + vr * v) >> 8, 0, 255)
    out[..., 1] = np.clip((c - ug * u - vg * v) >> 8, 0, 255)
    out[..., 2] = np.clip((c + ub * u) >> 8, 0, 255)
    out[..., 3] = 255
    return out


def _png_uri(rgba: np.ndarray) -> str:
    from PIL import Image as PILImage

    buf = io.BytesIO()
    PILImage.fromarray(rgba, "RGBA").save(buf, format="PNG", compress_level=1)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


def _frame_rgba(frame) -> np.ndarray:
    import numpy as np

    fmt = frame.format.name
    if fmt not in _PLANAR:
        raise ValueError(f"pixel format {fmt} is not supported (use yuv420p, yuv422p or "
                         "yuv444p)")
    sx, sy, full = _PLANAR[fmt]
    full = full or getattr(frame, "color_range", 0) == 2
    w, h = frame.width, frame.height
    planes = []
    for k, (pw, ph) in enumerate(((w, h), (-(-w // sx), -(-h // sy)), (-(-w // sx), -(-h // sy)))):
        plane = frame.planes[k]
        rows = np.frombuffer(plane, dtype=np.uint8).reshape(-1, plane.line_size)
        planes.append(rows[:ph, :pw])
    space = str(getattr(frame, "colorspace", "") or "").lower()
    matrix = "bt709" if ("709" in space or (h >= 720 and "601" not in space
                                              and "470" not in space)) else "bt601"
    return rgba_from_yuv(*planes, (sx, sy), full, matrix)


@lru_cache(maxsize=8)
def _decode(path: Path, mtime_ns: int, size: int) -> Decoded | tuple[str, str]:
    """Decode one file version (or say why not: (code, message with {href}))."""
    if size > MAX_CLIP_BYTES:
        return ("clip-too-large", f"{{href}} is {size} bytes; the limit is {MAX_CLIP_BYTES}")
    import av

    data = read_regular(path)
    sha = hashlib.sha256(data).hexdigest()
    times: list[Fraction] = []
    uris: list[str] = []
    try:
        with av.open(io.BytesIO(data), mode="r") as container:
            if not container.streams.video:
                return ("clip-invalid", "{href} has no video stream")
            stream = container.streams.video[0]
            w, h = stream.codec_context.width, stream.codec_context.height
            if not (0 < w <= MAX_CLIP_SIDE and 0 < h <= MAX_CLIP_SIDE):
                return ("clip-too-large", f"{{href}} is {w}x{h}; the limit is "
                        f"{MAX_CLIP_SIDE} a side")
            if stream.frames and stream.frames > MAX_CLIP_FRAMES:  # declared: refuse early
                return ("clip-too-large", f"{{href}} declares {stream.frames} frames; the "
                        f"limit is {MAX_CLIP_FRAMES}")
            stream.codec_context.thread_count = 1
            base = stream.time_base or Fraction(1, 90000)
            first = None
            for frame in container.decode(stream):
                if len(times) >= MAX_CLIP_FRAMES:
                    return ("clip-too-large", f"{{href}} has more than {MAX_CLIP_FRAMES} "
                            "frames")
                if (len(times) + 1) * frame.width * frame.height > MAX_CLIP_PIXELS:
                    return ("clip-too-large", f"{{href}} decodes to more than "
                            f"{MAX_CLIP_PIXELS:,} pixels in all")
                if (frame.width, frame.height) != (w, h):
                    return ("clip-invalid", "{href} changes size mid-stream")
                pts = frame.pts if frame.pts is not None else len(times)
                first = pts if first is None else first
                times.append(Fraction(pts - first) * base)
                uris.append(_png_uri(_frame_rgba(frame)))
            declared = stream.frames
    except (av.error.FFmpegError, OSError, EOFError) as exc:  # before ValueError: some
        reason = getattr(exc, "strerror", None) or type(exc).__name__  # are both
        return ("clip-invalid", f"{{href}} is not a readable video ({reason[:120]})")
    except ValueError as exc:  # our own: an unsupported pixel format
        return ("clip-invalid", f"{{href}}: {exc}")
    if not times:
        return ("clip-invalid", "{href} holds no decodable frame")
    if declared and len(times) < declared:
        return ("clip-invalid", f"{{href}} is truncated: {len(times)} of {declared} frames "
                "decode")
    if list(times) != sorted(times):
        order = sorted(range(len(times)), key=lambda k: times[k])
        times, uris = [times[k] for k in order], [uris[k] for k in order]
    step = times[-1] - times[-2] if len(times) > 1 else Fraction(1, 30)
    return Decoded(path, sha, w, h, tuple(times), times[-1] + step, tuple(uris))


def load_clip(el, href: str, comp_dir: Path, project_root: Path, file: Path) -> Clip:
    """Resolve (sandboxed like images), decode (once per file version) and read the
    time mapping of one clip ``<image>``."""
    line = el.sourceline
    path = resolve_reference(href, comp_dir, project_root, file, line)
    try:
        st = path.stat()
        found = _decode(path, st.st_mtime_ns, st.st_size)
    except OSError as exc:
        raise NanoframesError("clip-invalid", f"{href!r} cannot be read ({exc.strerror})",
                              file, line) from None
    if isinstance(found, tuple):
        raise NanoframesError(found[0], found[1].format(href=repr(href)), file, line)
    return Clip(href, found, read_timing(el, file))


def _loaded_library(stem: str) -> str | None:
    """The file of a shared library this process has mapped (Linux), else the one
    PyAV's wheel ships."""
    try:
        with open("/proc/self/maps", encoding="utf-8", errors="replace") as fh:
            for line in fh:
                path = line.rstrip("\n").split(" ")[-1]
                name = Path(path).name
                if name.startswith((f"{stem}-", f"{stem}.")):
                    return path
    except OSError:
        pass
    import av

    base = Path(av.__file__).resolve().parent
    for folder in (base.parent / "av.libs", base / ".dylibs"):
        found = sorted(folder.glob(f"{stem}*")) if folder.is_dir() else []
        if found:
            return str(found[0])
    return None


@cache
def decoder_parts() -> tuple[tuple[str, str], ...]:
    """The decoder's toolchain parts: PyAV's version, the bytes of libavcodec and
    libswscale it loads (``unknown`` where a library cannot be found)."""
    import av
    import av.codec  # noqa: F401  (maps libavcodec)
    import av.video.reformatter  # noqa: F401  (maps libswscale)

    out = [("pyav", av.__version__)]
    for stem in ("libavcodec", "libswscale"):
        found = _loaded_library(stem)
        if found is None:
            out.append((stem, "unknown"))
            continue
        h = hashlib.sha256()
        with open(found, "rb") as fh:
            for chunk in iter(lambda: fh.read(1 << 20), b""):
                h.update(chunk)
        out.append((stem, h.hexdigest()))
    return tuple(out)
