"""Frames of a composition: rendering, de-duplication, worker processes, writers.

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
import os
from collections import OrderedDict, deque
from collections.abc import Iterable, Iterator
from concurrent.futures import Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..bake.baker import Baker
from ..engine import site
from ..engine.raster import get_rasterizer
from ..errors import NanoframesError
from ..model.composition import Composition, parse
from . import drill, workers
from .digest import frame_digest
from .scale import scaled_size
from .scenes import keep as keep_scene
from .store import Store

if TYPE_CHECKING:  # imported where frames are drawn: a warm render copies PNGs
    import numpy as np

_HELD = 8  # frames kept for de-duplication when frames themselves are returned


@dataclass
class Film:
    """A composition ready to render in this process."""

    comp: Composition
    baker: Baker = field(init=False)
    dedup: bool = True
    scale: float = 1.0  # --scale: drawn at this multiple of the authored size (scale.py)

    def __post_init__(self) -> None:
        self.width, self.height = scaled_size(self.comp.width, self.comp.height, self.scale,
                                              self.comp.path)
        self.baker = Baker(self.comp)
        self._registered = False
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
        self._inputs: tuple[tuple[str, str, str], ...] | None = None
        self._drill: bool | None = None  # does a fire drill name this film (drill.py)
        self._drawing: int | None = None  # the index _raster_frame is drawing

    @classmethod
    def open(cls, path: str | Path, project_root: Path | None = None, dedup: bool = True,
             scale: float = 1.0) -> Film:
        return cls(parse(path, project_root), dedup=dedup, scale=scale)

    def inputs(self) -> tuple[tuple[str, str, str], ...]:
        """``Baker.inputs`` as this process first read them: taken once, before any
        frame is drawn, and what every process drawing this film must have read."""
        if self._inputs is None:
            self._inputs = self.baker.inputs()
        return self._inputs

    def _prepare(self):
        rast = get_rasterizer(self._slot)
        if not self._registered:
            from ..text.fonts import face_file

            fonts = {file: digest for kind, file, digest in self.inputs() if kind == "font"}
            for face in self.baker.faces():
                data, digest = face_file(face)  # the version on disk now: the one drawn
                if digest != fonts[str(face.path)]:
                    raise input_changed(self.comp.path, str(face.path))
                rast.register_font(face.name, data)
            self._registered = True
        return rast

    def document(self, index: int) -> bytes:
        return self.baker.document(index)

    def raster(self, doc: bytes) -> np.ndarray:
        """Pixels of a rendered document: a view, valid until the next raster call.
        A crash in ThorVG names the frame baked last, unless the caller named one
        (``site.working_on``, as the drawing thread of ``digests`` does)."""
        self.rasterized += 1
        with site.working_on(self.comp.path, self.baker.index):
            frame = self._prepare().render(doc, self.width, self.height)
        index = self._drawing if self._drawing is not None else self.baker.index
        return self._drilled(frame, index)

    def _drilled(self, frame: np.ndarray, index: int) -> np.ndarray:
        """``frame``, nudged where a fire drill names this film (frames/drill.py)."""
        if self._drill is None:
            self._drill = drill.names(self.comp.path)
        return drill.nudge(frame) if self._drill and index == drill.FRAME else frame

    def _raster_frame(self, doc: bytes, index: int) -> np.ndarray:
        with site.working_on(self.comp.path, index):
            self._drawing = index  # the frame raster draws (one drawing thread at a time)
            try:
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
        drawer = ThreadPoolExecutor(1) if self.draw_thread else None
        hasher = ThreadPoolExecutor(1) if self.draw_thread else None
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
            return list(range(self.comp.frame_count))
        return list(indices)


def input_changed(path: Path, file: str) -> NanoframesError:
    """A file of the film of composition ``path`` read as two versions while the film
    was drawn."""
    try:
        name = os.path.relpath(file, path.parent)
    except ValueError:  # another drive (Windows)
        name = file
    return NanoframesError("input-changed", f"{name} changed while the film was being "
                           "drawn, so its frames could mix two versions; run again", path)


def _settled(value):
    """A digest, waiting for the futures of the pipeline in ``Film.digests``."""
    while isinstance(value, Future):
        value = value.result()
    return value
