"""A film's frames over worker processes: the tasks a worker runs, the worker's
own copy of the film, and the callers that split a film into contiguous runs
and join what comes back, in index order.

A worker task returns what it made and its film's ``inputs``: the caller checks
them against its own (``checked``), so a file edited while a film is drawn is
an error, never a film drawn partly from each version. Never ``fork`` after
ThorVG is loaded (workers.py).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Iterable, Iterator, Sequence
from concurrent.futures import Executor, Future
from pathlib import Path
from typing import TYPE_CHECKING

from . import workers
from .film import Film
from .source import FilmSource, file_of, from_bytes, input_changed
from .store import Store
from .workers import worker_pool

if TYPE_CHECKING:
    import numpy as np


def chunks(indices: Sequence[int], parts: int) -> list[list[int]]:
    """At most ``parts`` contiguous runs (so held frames stay together)."""
    if not indices:
        return []
    n = max(1, min(len(indices), parts))
    size = -(-len(indices) // n)
    return [list(indices[k:k + size]) for k in range(0, len(indices), size)]


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
    if text is not None:  # a film built from text (a test's nf.check): its bytes
        return path, root, dedup, scale, hashlib.sha256(text).hexdigest()
    st = os.stat(file_of(path))
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
            else Film(from_bytes(text, Path(path), Path(root) if root else None), dedup=dedup))
    # pipeline only where this worker has a second CPU to itself; otherwise
    # the pool alone keeps every CPU busy (the bytes are the same either way)
    film.draw_thread = workers.threads_to_spare
    return film


def task_args(film: Film) -> tuple[str, str | None, bool, float]:
    """What a worker task is given to open ``film`` itself (``_worker_film``)."""
    root = film.source.project_root
    return str(film.source.path), str(root) if root else None, film.dedup, film.scale


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
        return workers.booting_pool(jobs, film.source.project_root)
    global _inherited
    _inherited = film  # what each fork finds open
    try:
        pool = workers.forked_pool(jobs, film.source.project_root)
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


def submit_digests(comp: FilmSource, indices: Sequence[int], pool: Executor, parts: int,
                   dedup: bool = True, store: Path | None = None, scenes: bool = False
                   ) -> list[Future]:
    """Queue a film's frames (``comp``: what was parsed) on worker processes in
    ``parts`` contiguous runs;
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


def submit_film(film: Film, indices: Sequence[int], pool: Executor, parts: int) -> list[Future]:
    """``submit_digests`` for an open film, with its store and scenes; its inputs are
    taken first (what ``checked`` holds each run's result to)."""
    film.inputs()
    return submit_digests(film.source, indices, pool, parts, film.dedup,
                          film.store.root if film.store is not None else None,
                          film.keep_scenes)


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
        futures = submit_film(film, indices, pool, 2 * max(jobs, 1))
        return joined(checked(film.inputs(), result_of(f), film.source.path) for f in futures)
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
        args = (str(film.source.path), str(film.source.project_root), film.dedup)
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
            for i, data in zip(c, checked(film.inputs(), result_of(fut), film.source.path)):
                yield i, np.frombuffer(data, dtype=np.uint8).reshape(shape)
