"""Writers: PNG files and H.264 MP4 through PyAV (no system ffmpeg needed).

PNGs carry the exact straight RGBA of the frame (``png.py``), so SHA-256 of a
PNG's decoded RGBA equals the frame digest. A directory of PNGs is written by
whoever drew the frames: with ``-j N`` this process and N - 1 worker processes
each encode and write their own files, and only counts come back. A held frame (the same rendered
document as a frame just written) is not drawn or encoded again: its PNG bytes
are written again. MP4 encoding is pinned (one thread, ``cpu-independent``,
bitexact flags) so the same frames give the same file on one machine; MP4
bytes are still never the unit of a digest.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Future
from fractions import Fraction
from pathlib import Path
from queue import SimpleQueue
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from ..errors import NanoframesError
from ..files import atomic_target, write_bytes_atomic
from .png import decode_png, encode_png
from .workers import shut_down

if TYPE_CHECKING:  # imported where frames are drawn: a warm render copies PNGs
    import numpy as np

_RECENT = 8  # encoded frames kept for held frames, per process


class PngStore(Protocol):
    """Where a film's encoded frames are also kept (the frame cache's
    ``FilmFrames``, in ``determinism.cache``). A worker process gets a copy;
    what it stored (``taken``) comes back to the original (``add``)."""

    def pixel_check(self, frame: np.ndarray) -> int: ...

    def put_png(self, index: int, png: bytes, pixels: int, *, written: str | None = None,
                same_as: int | None = None) -> None: ...

    def taken(self) -> Any: ...

    def add(self, taken: Any) -> None: ...


class Encoded(NamedTuple):
    """A frame's PNG kept for the held frames after it."""

    png: bytes
    pixels: int | None  # the store's check of its pixels (None: written without a store)
    stored: int | None  # the frame index the store keeps it under (None: not stored)


# One frame to write: its index and the file.
Target = tuple[int, str]


def write_png(frame: np.ndarray, path: Path) -> None:
    write_bytes_atomic(path, encode_png(frame), code="output-failed", durable=False)


def read_png_rgba(path: Path) -> np.ndarray:
    return decode_png(Path(path).read_bytes())


def write_run(film: Any, targets: Iterable[Target], store: PngStore | None = None
              ) -> Iterator[int]:
    """Draw, encode and write each target's frame here; yields each index once written.

    Frames whose rendered document was just drawn (in this run or an earlier
    run of the same film) reuse its PNG bytes: a held frame costs one file
    write. With a ``store``, each PNG is also kept there (from the file just
    written), with the store's check of the frame's pixels; a held frame only
    names the frame it repeats.
    """
    # kept on the film: a worker's next run of the same film starts with it
    recent: OrderedDict[bytes, Encoded] = film.recent_pngs
    for index, target in targets:
        doc = film.document(index)
        seen = hashlib.sha256(doc).digest()
        held = recent.get(seen) if film.dedup else None
        if held is not None and store is not None and held.pixels is None:
            held = None  # encoded without a store: its pixels were not checked
        if held is None:
            frame = film.raster(doc)
            png = encode_png(frame)
            pixels = store.pixel_check(frame) if store else None
            write_bytes_atomic(target, png, code="output-failed", durable=False)
            if store is not None:
                store.put_png(index, png, pixels, written=target)
            recent[seen] = Encoded(png, pixels, index if store is not None else None)
            if len(recent) > _RECENT:
                recent.popitem(last=False)
        else:
            recent.move_to_end(seen)
            write_bytes_atomic(target, held.png, code="output-failed", durable=False)
            if store is not None:
                store.put_png(index, held.png, held.pixels, same_as=held.stored)
        yield index


def _png_task(path: str, root: str | None, dedup: bool, scale: float, targets: list[Target],
              store: PngStore | None) -> tuple[int, Any]:
    """(in a worker) Write a run of frames; (how many, what the store was given)."""
    from .film import _worker_film

    film = _worker_film(path, root, dedup, scale)
    written = sum(1 for _ in write_run(film, targets, store))
    return written, store.taken() if store is not None else None


def write_pngs(film: Any, targets: Sequence[Target], jobs: int = 1,
               store: PngStore | None = None, booting: Future | None = None
               ) -> Iterator[int]:
    """Write every target's PNG; yields how many frames were written at each step,
    for a progress bar.

    With ``jobs`` > 1 this process is one of the ``jobs`` drawing processes: it
    draws from the front of the film at once, while ``jobs - 1`` workers boot and
    then take runs from the back (``runs.py``). Whoever draws a frame encodes and
    writes it; only counts come back. ``booting``: the caller's pool of
    ``jobs - 1`` workers for this film (``film.pool_for``), shut down here.
    """
    if jobs <= 1 or len(targets) < 2:
        if booting is not None:
            shut_down(booting)
        for _ in write_run(film, targets, store):
            yield 1
        return
    from .film import pool_for, task_args
    from .runs import TwoEnded

    shared: TwoEnded[Target] = TwoEnded(targets, jobs)
    booting = booting if booting is not None else pool_for(film, jobs - 1)
    args = task_args(film)
    reports: SimpleQueue = SimpleQueue()  # from the feeders: a count, an error, or None (done)

    def feed() -> None:
        """(one thread per worker) Hand the worker a run, wait for it, the next run."""
        try:
            pool = booting.result()
            while run := shared.take_back():
                written, taken = pool.submit(_png_task, *args, run, store).result()
                if store is not None:
                    store.add(taken)
                reports.put(written)
        except BaseException as exc:  # noqa: BLE001 - raised again by the drawing thread
            shared.close()
            reports.put(exc)
        reports.put(None)

    feeders = [threading.Thread(target=feed, name="nanoframes-feeder", daemon=True)
               for _ in range(jobs - 1)]
    for feeder in feeders:
        feeder.start()
    running = len(feeders)

    def counts(block: bool) -> Iterator[int]:
        nonlocal running
        while running and (block or not reports.empty()):
            report = reports.get()
            if report is None:
                running -= 1
            elif isinstance(report, BaseException):
                raise report
            else:
                yield report

    try:
        for _ in write_run(film, shared.front(), store):
            yield 1
            yield from counts(block=False)
        yield from counts(block=True)
    finally:
        shared.close()
        shut_down(booting)


def over_black(frame: np.ndarray) -> np.ndarray:
    """Straight RGBA over an opaque black background → RGB (integer arithmetic)."""
    import numpy as np

    rgb = frame[..., :3].astype(np.uint16)
    a = frame[..., 3:4].astype(np.uint16)
    return ((rgb * a + 127) // 255).astype(np.uint8)


def even_size(width: int, height: int) -> tuple[int, int]:
    """yuv420p needs even sides: odd sizes are padded by one black row/column."""
    return width + (width & 1), height + (height & 1)


def write_video(frames: Iterable[np.ndarray], path: Path, width: int, height: int,
                fps: Fraction, crf: int = 18) -> None:
    import av
    import numpy as np

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
