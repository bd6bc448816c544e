"""Frames of a film: rendering, de-duplication, worker processes, writers.

A film is drawn from a film source (source.py): a composition or a Lottie
animation; this module sees only the source's scenes and its ``draw``.

One rasterizer per process. Parallelism is worker processes (``workers.py``:
never ``fork`` after ThorVG is loaded). Each worker parses the composition
itself and renders a contiguous run of frames; results come back in frame
order, so a film's bytes do not depend on the worker count, together with the
versions of the files the worker read (``Film.inputs``): a file edited while a
film is drawn is an ``input-changed`` error, not a film from two versions.

De-duplication: a held frame is free. The rendered document is hashed and a
document already rasterized in this film is not rasterized again. That hash is
also the frame's scene digest (scenes.py): ``Film.digests`` leaves them in
``Film.scenes``, and a recording keeps each distinct scene in the store.
"""

from __future__ import annotations

import hashlib
from collections import OrderedDict, deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..engine import site
from ..model.composition import Composition
from . import drill, workers
from .digest import frame_digest
from .scale import scaled_size
from .scenes import keep as keep_scene
from .source import FilmSource, as_source, input_changed, open_parsed
from .store import Store

if TYPE_CHECKING:  # imported where frames are drawn: a warm render copies PNGs
    import numpy as np

_HELD = 8  # frames kept for de-duplication when frames themselves are returned


@dataclass
class Film:
    """A film ready to render in this process. ``comp`` is what was parsed: a
    ``Composition`` or another film source (source.py); ``source`` is the film
    source either way, and what everything but composition-only code uses."""

    comp: Composition | FilmSource
    dedup: bool = True
    scale: float = 1.0  # --scale: drawn at this multiple of the authored size (scale.py)

    def __post_init__(self) -> None:
        self.source = as_source(self.comp)
        self.width, self.height = scaled_size(self.source.width, self.source.height,
                                              self.scale, self.source.path)
        self._index: int | None = None  # the frame whose scene was made last
        self._drawing: int | None = None  # the frame _raster_frame is drawing
        self.rasterized = 0  # documents actually rasterized (for benchmarks and tests)
        # rendered-document hash -> output.Encoded: the PNGs just written, which
        # held frames reuse (output.write_run)
        self.recent_pngs: OrderedDict = OrderedDict()
        # rendered-document hash -> frame digest, for the whole film: a held frame
        # (or a document that comes back later, as in a loop) is rasterized once
        self._seen: dict[bytes, str | Future] = {}
        # draw and hash on other threads where a second CPU is free (workers.py
        # decides: not in a pool's worker, nor in an xdist worker without two CPUs)
        self.draw_thread = workers.spare_threads(1)
        self._slot = 0  # which of this process's two canvases draws (see digests)
        self._slot_hashes: list[Future | None] = [None, None]
        self._hashing: ThreadPoolExecutor | None = None
        # recording: every distinct frame hashed is also kept in this store (store.py)
        self.store: Store | None = None
        self._stored: set[str] = set()
        self._scenes_kept: set[bytes] = set()
        # a recording keeps each distinct scene in ``store`` too (scenes.py); a check
        # does not: its only scene work is the hash the de-duplication takes anyway
        self.keep_scenes = False
        # the scene digests (full hex) of the frames the last ``digests`` call drew
        self.scenes: list[str] = []
        self._encoding: deque[Future] = deque()
        self._encoder: ThreadPoolExecutor | None = None
        self._drill: bool | None = None  # does a fire drill name this film (drill.py)

    @classmethod
    def open(cls, path: str | Path, project_root: Path | None = None, dedup: bool = True,
             scale: float = 1.0) -> Film:
        return cls(open_parsed(path, project_root), dedup=dedup, scale=scale)

    @property
    def baker(self):
        """The composition's ``Baker`` (a composition film only)."""
        return self.source.baker

    def inputs(self) -> tuple[tuple[str, str, str], ...]:
        """The source's inputs as this process first read them: taken once, before any
        frame is drawn, and what every process drawing this film must have read."""
        return self.source.inputs()

    def _prepare(self):
        """Ready to draw (a composition's faces registered): for benchmarks."""
        prepare = getattr(self.source, "prepare", None)
        return prepare(self._slot) if prepare is not None else None

    def document(self, index: int) -> bytes:
        """The scene of frame ``index``: the bytes ThorVG is handed for it."""
        self._index = index
        return self.source.document(index)

    def raster(self, doc: bytes) -> np.ndarray:
        """Pixels of a scene: a view, valid until the next raster call. The frame is
        the one ``_raster_frame`` is drawing, else the one whose scene was made last
        (a Lottie film's player is told the frame; a composition's scene is all there
        is). A crash in ThorVG names that frame, unless the caller named one
        (``site.working_on``, as the drawing thread of ``digests`` does)."""
        self.rasterized += 1
        index = self._drawing if self._drawing is not None else self._index
        with site.working_on(self.source.path, index):
            frame = self.source.draw(doc, index if index is not None else 0, self.width,
                                     self.height, self._slot)
        return self._drilled(frame, index)

    def _drilled(self, frame: np.ndarray, index: int | None) -> np.ndarray:
        """``frame``, nudged where a fire drill names this film (frames/drill.py)."""
        if self._drill is None:
            self._drill = drill.names(self.source.path)
        return drill.nudge(frame) if self._drill and index == drill.FRAME else frame

    def _raster_frame(self, doc: bytes, index: int) -> np.ndarray:
        # only ever on one thread at a time: the drawing thread, or this one
        self._drawing = index
        try:
            with site.working_on(self.source.path, index):
                return self.raster(doc)
        finally:
            self._drawing = None

    def frames(self, indices: Iterable[int] | None = None) -> Iterator[tuple[int, np.ndarray]]:
        """(index, RGBA) in the given order. Arrays are read-only and may be shared
        between held frames; copy one to keep it past the next iteration."""
        held: OrderedDict[bytes, np.ndarray] = OrderedDict()
        for i in self.indices(indices):
            doc = self.document(i)
            key = hashlib.sha256(doc).digest()
            if self.dedup and key in held:
                held.move_to_end(key)
                yield i, held[key]
                continue
            frame = self._raster_frame(doc, i)
            if self.dedup:
                frame = frame.copy()
                frame.flags.writeable = False
                held[key] = frame
                if len(held) > _HELD:
                    held.popitem(last=False)
            yield i, frame

    def digests(self, indices: Iterable[int] | None = None) -> list[str]:
        """Full frame digests, in the order of ``indices``.

        With ``draw_thread`` this is a three-stage pipeline: this thread bakes,
        a drawing thread rasterizes every frame in order (ThorVG releases the
        GIL), alternating between two canvases, and a hashing thread hashes each
        canvas in place (hashlib releases the GIL) while the next frame draws on
        the other. The pixels and digests are those of the serial path (the
        self-test compares the two).
        """
        out: list[str | Future] = []
        pending: deque[Future] = deque()
        # a source that cannot keep a frame per slot would be drawn serially
        pipelined = self.draw_thread and self.source.pipelined
        drawer = ThreadPoolExecutor(1) if pipelined else None
        hasher = ThreadPoolExecutor(1) if pipelined else None
        self._hashing = hasher
        self._encoder = ThreadPoolExecutor(1) if self.store is not None else None
        self.scenes = scenes = []
        try:
            for i in self.indices(indices):
                doc = self.document(i)
                key = hashlib.sha256(doc).digest()  # the scene digest; the de-duplication key
                scenes.append(key.hex())
                if self._encoder is not None and self.keep_scenes \
                        and key not in self._scenes_kept:
                    self._scenes_kept.add(key)  # kept off this thread, as frames are
                    if len(self._encoding) > 8:  # bound the documents waiting to be kept
                        self._encoding.popleft().result()
                    self._encoding.append(self._encoder.submit(keep_scene, self.store,
                                                               key.hex(), doc))
                digest = self._seen.get(key) if self.dedup else None
                if digest is None:
                    if drawer is None:
                        digest = self._hash(self._raster_frame(doc, i))
                    else:
                        digest = drawer.submit(self._draw_then_hash, doc, i)
                        pending.append(digest)
                        if len(pending) > 8:  # bound the documents waiting to be drawn
                            pending.popleft().result()
                    if self.dedup:
                        self._seen[key] = digest
                out.append(digest)
            done = [_settled(d) for d in out]
        finally:
            for pool in (drawer, hasher, self._encoder):
                if pool is not None:
                    pool.shutdown(wait=True)
            self._hashing, self._slot_hashes, self._encoder = None, [None, None], None
            self._encoding.clear()
        for key, value in self._seen.items():
            self._seen[key] = _settled(value)
        return done

    def _draw_then_hash(self, doc: bytes, index: int) -> Future:
        """(drawing thread) Draw on the next canvas once its last frame is hashed."""
        slot = self._slot ^ 1
        previous = self._slot_hashes[slot]
        if previous is not None:
            previous.result()  # that canvas still holds a frame being hashed
        self._slot = slot
        future = self._hashing.submit(self._hash, self._raster_frame(doc, index))
        self._slot_hashes[slot] = future
        return future

    def _hash(self, rgba: np.ndarray) -> str:
        """The frame digest; when recording, a frame new to the store is copied and
        handed to the encoding thread (PNG encoding releases the GIL), so it is
        encoded once, off the drawing and hashing path."""
        digest = frame_digest(rgba)
        if self._encoder is not None and digest not in self._stored:
            self._stored.add(digest)
            if not self.store.has(digest):
                if len(self._encoding) > 8:  # bound the frames waiting to be encoded
                    self._encoding.popleft().result()
                self._encoding.append(self._encoder.submit(self.store.put, rgba.copy(), digest))
        return digest

    def indices(self, indices: Iterable[int] | None) -> list[int]:
        if indices is None:
            return list(range(self.source.frame_count))
        return list(indices)


__all__ = ["Film", "input_changed"]


def _settled(value):
    """A digest, waiting for the futures of the pipeline in ``Film.digests``."""
    while isinstance(value, Future):
        value = value.result()
    return value
