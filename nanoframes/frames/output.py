"""Writers: PNG files and H.264 MP4 through PyAV (no system ffmpeg needed).

PNGs carry the exact straight RGBA of the frame, so SHA-256 of a PNG's decoded
RGBA equals the frame digest. MP4 encoding is pinned (one thread,
``cpu-independent``, bitexact flags) so the same frames give the same file on
one machine; MP4 bytes are still never the unit of a digest.
"""

from __future__ import annotations

from collections.abc import Iterable
from fractions import Fraction
from pathlib import Path

import numpy as np
from PIL import Image

from ..errors import NanoframesError
from ..files import atomic_target


def write_png(frame: np.ndarray, path: Path) -> None:
    with atomic_target(path, code="output-failed", durable=False) as tmp:
        Image.fromarray(np.ascontiguousarray(frame), "RGBA").save(tmp, format="PNG",
                                                                   compress_level=6)


def read_png_rgba(path: Path) -> np.ndarray:
    with Image.open(path) as im:
        return np.asarray(im.convert("RGBA"))


def over_black(frame: np.ndarray) -> np.ndarray:
    """Straight RGBA over an opaque black background → RGB (integer arithmetic)."""
    rgb = frame[..., :3].astype(np.uint16)
    a = frame[..., 3:4].astype(np.uint16)
    return ((rgb * a + 127) // 255).astype(np.uint8)


def even_size(width: int, height: int) -> tuple[int, int]:
    """yuv420p needs even sides: odd sizes are padded by one black row/column."""
    return width + (width & 1), height + (height & 1)


def write_video(frames: Iterable[np.ndarray], path: Path, width: int, height: int,
                fps: Fraction, crf: int = 18) -> None:
    import av

    path = Path(path)
    ew, eh = even_size(width, height)
    try:
        with atomic_target(path, ".tmp.mp4", code="output-failed", durable=False) as tmp, \
                av.open(str(tmp), mode="w", format="mp4",
                     options={"fflags": "+bitexact", "movflags": "+faststart"}) as container:
            stream = container.add_stream("libx264", rate=fps)
            stream.width, stream.height, stream.pix_fmt = ew, eh, "yuv420p"
            stream.codec_context.time_base = Fraction(1) / fps
            stream.codec_context.thread_count = 1
            stream.codec_context.flags |= av.codec.context.Flags.bitexact
            stream.options = {
                "crf": str(crf), "preset": "medium",
                "x264-params": "threads=1:lookahead-threads=1:cpu-independent=1",
            }
            canvas = np.zeros((eh, ew, 3), dtype=np.uint8)
            for n, frame in enumerate(frames):
                canvas[:height, :width] = over_black(frame)
                vf = av.VideoFrame.from_ndarray(canvas, format="rgb24").reformat(
                    format="yuv420p")
                vf.pts = n
                for packet in stream.encode(vf):
                    container.mux(packet)
            for packet in stream.encode():
                container.mux(packet)
    except av.error.FFmpegError as exc:
        raise NanoframesError("video-failed", str(exc), path) from None
