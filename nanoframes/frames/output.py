"""Writers: PNG files and H.264 MP4 through PyAV (no system ffmpeg needed).

PNGs carry the exact straight RGBA of the frame (``png.py``), so SHA-256 of a
PNG's decoded RGBA equals the frame digest. A directory of PNGs is written by
whoever drew the frames: with ``-j N`` each worker process encodes and writes
its own files, and only a count comes back. A held frame (the same rendered
document as a frame just written) is not drawn or encoded again: its PNG bytes
are written again. MP4 encoding is pinned (one thread, ``cpu-independent``,
bitexact flags) so the same frames give the same file on one machine; MP4
bytes are still never the unit of a digest.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import FIRST_COMPLETED, wait
from fractions import Fraction
from pathlib import Path
from typing import Any, Protocol

import numpy as np

from ..errors import NanoframesError
from ..files import atomic_target, write_bytes_atomic
from .png import decode_png, encode_png

_RECENT = 8  # encoded frames kept for held frames, per process
# Runs of frames per worker. Eight (a shorter tail when one worker finishes first)
# measured about 0.1 s slower than four in paired renders at 960x540 and 1080p:
# each boundary between runs costs a held frame drawn again and a task.
_RUNS_PER_WORKER = 4


class PngStore(Protocol):
    """Where encoded frames are also kept (the frame cache): ``determinism.cache``."""

    def pixel_check(self, frame: np.ndarray) -> int: ...

    def put_png(self, key: str, png: bytes, pixels: int, width: int, height: int) -> None: ...


# One frame to write: its index, the file, and its key in the store (or None).
Target = tuple[int, str, "str | None"]


def write_png(frame: np.ndarray, path: Path) -> None:
    write_bytes_atomic(path, encode_png(frame), code="output-failed", durable=False)


def read_png_rgba(path: Path) -> np.ndarray:
    return decode_png(Path(path).read_bytes())


def write_run(film: Any, targets: Iterable[Target], store: PngStore | None = None
              ) -> Iterator[int]:
    """Draw, encode and write each target's frame here; yields each index once written.

    Frames whose rendered document was just drawn (in this run or an earlier
    run of the same film) reuse its PNG bytes: a held frame costs one file
    write. With a ``store``, each PNG is also kept there under its key, with the
    store's check of the frame's pixels.
    """
    # kept on the film: a worker's next run of the same film starts with it
    recent: OrderedDict[bytes, tuple[bytes, int | None]] = film.recent_pngs
    for index, target, key in targets:
        doc = film.document(index)
        seen = hashlib.sha256(doc).digest()
        encoded = recent.get(seen) if film.dedup else None
        if encoded is not None and store is not None and encoded[1] is None:
            encoded = None  # encoded without a store: its pixels were not checked
        if encoded is None:
            frame = film.raster(doc)
            encoded = (encode_png(frame), store.pixel_check(frame) if store else None)
            recent[seen] = encoded
            if len(recent) > _RECENT:
                recent.popitem(last=False)
        else:
            recent.move_to_end(seen)
        write_bytes_atomic(target, encoded[0], code="output-failed", durable=False)
        if store is not None and key is not None:
            store.put_png(key, encoded[0], encoded[1], film.width, film.height)
        yield index


def _png_task(path: str, root: str | None, dedup: bool, scale: float, targets: list[Target],
              store: PngStore | None) -> int:
    from .film import _worker_film

    film = _worker_film(path, root, dedup, scale)
    return sum(1 for _ in write_run(film, targets, store))


def write_pngs(film: Any, targets: Sequence[Target], jobs: int = 1,
               store: PngStore | None = None) -> Iterator[int]:
    """Write every target's PNG, here or on ``jobs`` worker processes (each draws,
    encodes and writes a contiguous run of frames itself); yields how many
    frames were written at each step, for a progress bar."""
    if jobs <= 1 or len(targets) < 2:
        for _ in write_run(film, targets, store):
            yield 1
        return
    from .film import chunks
    from .workers import worker_pool

    pool = worker_pool(jobs)
    try:
        args = (str(film.comp.path), str(film.comp.project_root), film.dedup, film.scale)
        pending = {pool.submit(_png_task, *args, run, store)
                   for run in chunks(list(targets), _RUNS_PER_WORKER * jobs)}
        while pending:
            done, pending = wait(pending, return_when=FIRST_COMPLETED)
            for future in done:
                yield future.result()
    finally:
        pool.shutdown(wait=True, cancel_futures=True)


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
