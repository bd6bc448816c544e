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
from queue import Empty, SimpleQueue
from typing import TYPE_CHECKING, Any, NamedTuple, Protocol

from ..errors import NanoframesError
from ..files import atomic_target, write_bytes_atomic
from .png import decode_png, encode_png
from .workers import shut_down

if TYPE_CHECKING:  # imported where frames are drawn: a warm render copies PNGs
    import numpy as np

    from .shared_ends import SharedEnds

_RECENT = 8  # encoded frames kept for held frames, per process


class PngStore(Protocol):
    """Where a film's encoded frames are also kept (the frame cache's
    ``FilmFrames``, in ``frames.cached_film``). A worker process gets a copy;
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


# A worker's task ends after about this long (or when no frame is left), so what
# it stored in the frame cache comes back to the command while it runs: an
# interrupted render keeps it. Handing a worker its next task costs about 0.5 ms.
_TASK_S = 1.0


def _png_task(path: str, root: str | None, dedup: bool, scale: float, targets: list[Target],
              store: PngStore | None, seconds: float) -> tuple[tuple[bool, Any], tuple]:
    """(in a worker) Write frames taken from the back of ``targets`` for about
    ``seconds`` (at least one, if one is left); ((whether any may be left, what
    the store was given), the film's inputs: ``film.checked``)."""
    import time

    from . import workers
    from .parallel import _worker_film

    ends = workers.shared_ends
    assert ends is not None, "a worker of a WorkerPool"
    film = _worker_film(path, root, dedup, scale)
    until = time.monotonic() + seconds
    left = True

    def taken() -> Iterator[Target]:
        nonlocal left
        while (i := ends.take_back()) is not None:
            yield targets[i]
            if time.monotonic() >= until:
                return
        left = False

    for _ in write_run(film, taken(), store):
        ends.wrote()
    return (left, store.taken() if store is not None else None), film.inputs()


def write_pngs(film: Any, targets: Sequence[Target], jobs: int = 1,
               store: PngStore | None = None, booting: Future | None = None
               ) -> Iterator[int]:
    """Write every target's PNG; yields how many frames were written at each step,
    for a progress bar.

    With ``jobs`` > 1 this process is one of the ``jobs`` drawing processes: it
    draws from the front of the film at once, while ``jobs - 1`` workers boot and
    then take frames from the back (``shared_ends.py``). Whoever draws a frame encodes
    and writes it; only counts come back. ``booting``: the caller's pool of
    ``jobs - 1`` workers for this film (``film.pool_for``), shut down here.
    """
    if jobs <= 1 or len(targets) < 2:
        if booting is not None:
            shut_down(booting)
        for _ in write_run(film, targets, store):
            yield 1
        return
    from .parallel import pool_for

    booting = booting if booting is not None else pool_for(film, jobs - 1)
    shared = _Shared(film, targets, jobs - 1, store, booting)
    try:
        for _ in write_run(film, (targets[i] for i in iter(shared.take_front, None)), store):
            yield 1
            if workers_wrote := shared.workers_wrote(wait=False):
                yield workers_wrote
        while shared.feeding:  # nothing left at the front: the workers' last frames
            if workers_wrote := shared.workers_wrote(wait=True):
                yield workers_wrote
    finally:
        shared.close()
        shut_down(booting)


class _Shared:
    """(write_pngs) A film's frames shared with a pool of workers that may still be
    booting: until it is up, this process counts the frames it takes itself. Once
    it is up, one thread per worker hands it tasks until no frame is left."""

    def __init__(self, film: Any, targets: Sequence[Target], workers: int,
                 store: PngStore | None, booting: Future) -> None:
        self.film, self.targets, self.workers, self.store = film, targets, workers, store
        self.ends: SharedEnds | None = None  # once the pool is up
        self.front = 0  # until then: the next frame this process takes
        self.feeding = 0  # threads handing workers tasks
        self._reports: SimpleQueue = SimpleQueue()  # from them: an error, or None (done)
        self._counted = 0  # frames written by workers, yielded
        self._closed = False
        self._lock = threading.Lock()  # the switch from counting here to ``ends``
        # in the thread that starts the pool, or here and now if it is up (forked)
        booting.add_done_callback(self._start_workers)

    def take_front(self) -> int | None:
        with self._lock:
            if self.ends is not None:
                return self.ends.take_front()
            if self.front >= len(self.targets):
                return None
            self.front += 1
            return self.front - 1

    def _start_workers(self, booting: Future) -> None:
        with self._lock:
            if self._closed or self.front >= len(self.targets):
                return  # nothing left for them
            try:
                pool = booting.result()  # a pool that failed to start raises here
                pool.ends.start(self.front, len(self.targets))
            except BaseException as exc:  # noqa: BLE001 - raised by the drawing thread
                self.feeding = 1  # (a callback's own error would only be logged)
                self._reports.put(exc)
                return
            self.ends, self.feeding = pool.ends, self.workers
        for _ in range(self.workers):
            threading.Thread(target=self._feed, args=(pool,), name="nanoframes-feeder",
                             daemon=True).start()

    def _feed(self, pool: Any) -> None:
        """(a thread per worker) A task, what it stored, the next task."""
        from .parallel import checked, task_args

        args = (*task_args(self.film), list(self.targets), self.store, _TASK_S)
        inputs, path = self.film.inputs(), self.film.source.path
        try:
            more = True
            while more:
                more, taken = checked(inputs, pool.submit(_png_task, *args).result(), path)
                if self.store is not None:
                    self.store.add(taken)
        except BaseException as exc:  # noqa: BLE001 - raised again by the drawing thread
            self.close()
            self._reports.put(exc)
        self._reports.put(None)

    def workers_wrote(self, wait: bool) -> int:
        """Frames the workers wrote since the last call; ``wait``: until a feeding
        thread ends, or a tenth of a second. Raises a worker's error."""
        while self.feeding and (wait or not self._reports.empty()):
            try:
                report = self._reports.get(timeout=0.1)
            except Empty:
                break
            if report is None:
                self.feeding -= 1
            else:
                raise report
            wait = False
        if self.ends is None:
            return 0
        now = self.ends.written()
        new, self._counted = now - self._counted, now
        return new

    def close(self) -> None:
        with self._lock:
            self._closed = True
            if self.ends is not None:
                self.ends.close()


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
