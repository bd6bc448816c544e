"""Video clips as media: ``<image href="clip.mp4">`` (also ``.webm``, ``.mov``,
``.mkv``).

A clip is decoded once per process per file version through PyAV (one decoder
thread), every frame kept as a PNG ``data:`` URI. The conversion to straight
RGBA is done in integer numpy arithmetic (:mod:`.pixels`: packed RGB, 8- to
12-bit planar YUV, alpha kept), not by FFmpeg's scaler, so a frame's pixels do
not depend on the CPU's SIMD path. VP8/VP9 with an alpha channel (WebM's
``alpha_mode``) is decoded through libvpx, the one FFmpeg decoder that reads
the alpha layer (the built-in one drops it). The frame shown at film time ``t`` is
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
from .pixels import frame_rgba as _frame_rgba  # noqa: F401  (tests import it here)
from .pixels import rgba_from_yuv  # noqa: F401  (re-exported)
from .timing import Timing, read_timing

if TYPE_CHECKING:  # imported where a clip is decoded: most films have none
    import numpy as np

CLIP_SUFFIXES = (".mp4", ".webm", ".mov", ".mkv")
# Decoders that keep a WebM alpha layer (FFmpeg's own VP8/VP9 decoders drop it).
_ALPHA_DECODERS = {"vp8": "libvpx", "vp9": "libvpx-vp9"}
MAX_CLIP_BYTES = 64 * 1024 * 1024
MAX_CLIP_SIDE = 4096
MAX_CLIP_FRAMES = 3600
MAX_CLIP_PIXELS = 256 * 1024 * 1024  # all decoded frames together


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


def _png_uri(rgba: np.ndarray) -> str:
    from PIL import Image as PILImage

    buf = io.BytesIO()
    PILImage.fromarray(rgba, "RGBA").save(buf, format="PNG", compress_level=1)
    return "data:image/png;base64," + base64.b64encode(buf.getvalue()).decode("ascii")


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
            for frame in _frames(av, container, stream):
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


def _frames(av, container, stream):
    """The stream's decoded frames; a VP8/VP9 stream with alpha through libvpx."""
    name = _ALPHA_DECODERS.get(stream.codec_context.name)
    if name is None or str(stream.metadata.get("alpha_mode", "")).strip() != "1":
        yield from container.decode(stream)
        return
    try:
        ctx = av.CodecContext.create(name, "r")
    except (av.error.FFmpegError, ValueError):  # a build without libvpx: no alpha
        yield from container.decode(stream)
        return
    ctx.thread_count = 1
    for packet in container.demux(stream):  # the last, empty packet flushes
        yield from ctx.decode(packet)


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
