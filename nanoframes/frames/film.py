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
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Executor, Future, ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

from ..bake.baker import Baker
from ..engine import site
from ..engine.raster import get_rasterizer
from ..errors import NanoframesError
from ..model.composition import Composition, from_text, parse
from . import workers
from .digest import frame_digest
from .scale import scaled_size
from .scenes import keep as keep_scene
from .store import Store
from .workers import worker_pool

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
            return self._prepare().render(doc, self.width, self.height)

    def _raster_frame(self, doc: bytes, index: int) -> np.ndarray:
        with site.working_on(self.comp.path, index):
            return self.raster(doc)

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


# --- across processes ------------------------------------------------------------

def chunks(indices: Sequence[int], parts: int) -> list[list[int]]:
    """At most ``parts`` contiguous runs (so held frames stay together)."""
    if not indices:
        return []
    n = max(1, min(len(indices), parts))
    size = -(-len(indices) // n)
    return [list(indices[k:k + size]) for k in range(0, len(indices), size)]


# A worker task returns what it made and its film's ``inputs``: the caller checks
# them against its own (``checked``), so a file edited while a film is drawn is
# an error, never a film drawn partly from each version.

def _digest_task(path: str, root: str | None, indices: list[int], dedup: bool,
                 store: str | None = None, text: bytes | None = None, scenes: bool = False
                 ) -> tuple[tuple[list[str], list[str]], tuple]:
    film = _worker_film(path, root, dedup, text=text)
    # the worker keeps its own frames: the store is a directory and writes are atomic
    if store is None:
        film.store = None
    elif film.store is None or str(film.store.root) != store:
        film.store, film._stored, film._scenes_kept = Store(store, warn=None), set(), set()
    film.keep_scenes = scenes
    return (film.digests(indices), film.scenes), film.inputs()


def _frames_task(path: str, root: str | None, indices: list[int], dedup: bool,
                 scale: float = 1.0) -> tuple[list[bytes], tuple]:
    film = _worker_film(path, root, dedup, scale)
    return [frame.tobytes() for _, frame in film.frames(indices)], film.inputs()


_worker_films: dict[tuple, Film] = {}
# In a worker forked for one film (``pool_for``): that film, as the command read
# it. Every task of the film draws it, even if its files change meanwhile.
_inherited: Film | None = None


def _film_key(path: str, root: str | None, dedup: bool, scale: float,
              text: bytes | None = None) -> tuple:
    if text is not None:  # a composition built from text (a test's nf.check): its bytes
        return path, root, dedup, scale, hashlib.sha256(text).hexdigest()
    st = os.stat(path)
    return path, root, dedup, scale, st.st_mtime_ns, st.st_size  # never a stale film


def _worker_film(path: str, root: str | None, dedup: bool, scale: float = 1.0,
                 text: bytes | None = None) -> Film:
    if (text is None and _inherited is not None
            and task_args(_inherited) == (path, root, dedup, scale)):
        return _inherited
    key = _film_key(path, root, dedup, scale, text)
    film = _worker_films.get(key)
    if film is None:
        _worker_films.clear()  # one composition at a time per worker: bounded memory
        film = _worker_films[key] = (
            Film.open(path, Path(root) if root else None, dedup, scale) if text is None
            else Film(from_text(text, Path(path), Path(root) if root else None), dedup=dedup))
    # pipeline only where this worker has a second CPU to itself; otherwise
    # the pool alone keeps every CPU busy (the bytes are the same either way)
    film.draw_thread = workers.threads_to_spare
    return film


def task_args(film: Film) -> tuple[str, str | None, bool, float]:
    """What a worker task is given to open ``film`` itself (``_worker_film``)."""
    root = film.comp.project_root
    return str(film.comp.path), str(root) if root else None, film.dedup, film.scale


def pool_for(film: Film, jobs: int) -> Future:
    """``jobs`` workers for ``film``'s frames, as a future of the pool.

    Forked from this process now where ``workers.can_fork`` allows: they start
    at once, with the film already parsed (their copy of it). Elsewhere, or once
    ThorVG is loaded here, the forkserver starts them (``workers.booting_pool``).
    """
    # every process draws with NumPy: imported once, here, and forked; before the
    # check, since NumPy's BLAS may start threads as it loads (cli/__init__.py)
    import numpy  # noqa: F401

    film.inputs()  # what every worker must draw from: taken before any starts
    if not workers.can_fork():
        return workers.booting_pool(jobs, film.comp.project_root)
    global _inherited
    _inherited = film  # what each fork finds open
    try:
        pool = workers.forked_pool(jobs, film.comp.project_root)
    finally:
        _inherited = None
    ready: Future = Future()
    ready.set_result(pool)
    return ready


def result_of(future: Future):
    """A worker task's result; a pool broken by a crash in ThorVG is the error
    ``render-crashed`` naming the composition and frame (``workers.died``)."""
    from concurrent.futures import BrokenExecutor

    try:
        return future.result()
    except BrokenExecutor as exc:
        raise workers.died(exc) from None


def checked(inputs: tuple, result: tuple, path: Path):
    """What a worker task made, from its result (what it made, its film's inputs),
    once those inputs are ``inputs`` (the caller's, for composition ``path``);
    raises ``input-changed`` otherwise."""
    made, theirs = result
    moved = sorted(set(inputs) ^ {tuple(item) for item in theirs})
    if moved:
        raise input_changed(path, moved[0][1])
    return made


def submit_digests(comp: Composition, indices: Sequence[int], pool: Executor, parts: int,
                   dedup: bool = True, store: Path | None = None, scenes: bool = False
                   ) -> list[Future]:
    """Queue a composition's frames on worker processes in ``parts`` contiguous runs;
    the futures' results, concatenated, are the digests in index order. Each
    worker parses the file itself (a composition built from text: its bytes), so
    nothing big crosses a process boundary. Each result is (frame digests, scene
    digests) of its run (``joined`` concatenates them); with ``scenes`` the workers keep
    the scenes in ``store`` too (a recording's)."""
    path, root = str(comp.path), str(comp.project_root)
    kept = str(store) if store is not None else None
    # a composition built from text has no file to parse: its bytes travel instead
    return [pool.submit(_digest_task, path, root, c, dedup, kept, comp.text, scenes)
            for c in chunks(indices, parts)]


def joined(runs: Iterable[tuple[list[str], list[str]]]) -> tuple[list[str], list[str]]:
    """The (frame digests, scene digests) of consecutive runs, as one film's."""
    frames: list[str] = []
    scenes: list[str] = []
    for run_frames, run_scenes in runs:
        frames += run_frames
        scenes += run_scenes
    return frames, scenes


def film_digests(film: Film, indices: Sequence[int] | None = None, jobs: int = 1,
                 pool: Executor | None = None) -> list[str]:
    """Frame digests in index order, rendered here (jobs=1) or over worker processes."""
    return film_readings(film, indices, jobs, pool)[0]


def film_readings(film: Film, indices: Sequence[int] | None = None, jobs: int = 1,
                  pool: Executor | None = None) -> tuple[list[str], list[str]]:
    """Frame digests and scene digests in index order, rendered here (jobs=1) or over
    worker processes."""
    indices = film.indices(indices)
    if jobs <= 1 and pool is None:
        return film.digests(indices), list(film.scenes)
    own = pool is None
    film.inputs()  # before any worker reads the files
    pool = pool or worker_pool(jobs)
    try:
        futures = submit_digests(film.comp, indices, pool, 2 * max(jobs, 1), film.dedup,
                                 film.store.root if film.store is not None else None,
                                 film.keep_scenes)
        return joined(checked(film.inputs(), result_of(f), film.comp.path) for f in futures)
    finally:
        if own:
            pool.shutdown()


def film_frames(film: Film, indices: Sequence[int] | None = None, jobs: int = 1
                ) -> Iterator[tuple[int, np.ndarray]]:
    """(index, RGBA) in index order; with jobs > 1 frames come from workers, a few
    chunks ahead, so a whole film is never held in memory."""
    indices = film.indices(indices)
    if jobs <= 1:
        yield from film.frames(indices)
        return
    import numpy as np

    shape = (film.height, film.width, 4)
    film.inputs()  # before any worker reads the files
    with worker_pool(jobs) as pool:
        args = (str(film.comp.path), str(film.comp.project_root), film.dedup)
        pending = []
        todo = iter(chunks(indices, 4 * jobs))
        for c in todo:
            pending.append((c, pool.submit(_frames_task, *args[:2], c, args[2], film.scale)))
            if len(pending) >= jobs * 2:
                break
        while pending:
            c, fut = pending.pop(0)
            nxt = next(todo, None)
            if nxt is not None:
                pending.append((nxt, pool.submit(_frames_task, *args[:2], nxt, args[2],
                                                 film.scale)))
            for i, data in zip(c, checked(film.inputs(), result_of(fut), film.comp.path)):
                yield i, np.frombuffer(data, dtype=np.uint8).reshape(shape)
