"""Frames and PNG files of a film through the frame cache: read where a checked
copy is stored, else drawn (here or by workers) and stored.

Each function takes the film's frames in the cache (``FrameCache.film_of``:
the caller keys them on the film's identity) or None, which draws everything
and touches no cache (``--no-cache``).
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from ..files import write_bytes_atomic
from .cache import FrameCache
from .cached_film import FilmFrames, pixel_check

if TYPE_CHECKING:  # imported where frames are touched: `render --help` needs neither
    import numpy as np


def _done(stored: FilmFrames) -> None:
    """After a run: ``checks`` written (or refreshed), the cache pruned if it grew."""
    stored.save()
    if stored.cache.written and isinstance(stored.cache, FrameCache):
        stored.cache.prune()


def cached_frame(film, index: int, stored: FilmFrames) -> np.ndarray:
    """One frame: from the cache when a checked entry exists, else rendered and stored."""
    frame = stored.frame(index)
    if frame is None:
        frame = film.raster(film.document(index)).copy()
        stored.put(index, frame)
        _done(stored)
    return frame


def cached_frames(film, indices: Iterable[int] | None = None, jobs: int = 1,
                  stored: FilmFrames | None = None) -> Iterator[tuple[int, np.ndarray]]:
    """``film_frames`` through the cache: (index, RGBA) in the given order.

    Frames with an entry are read (and checked); the rest are rendered, here or
    over ``jobs`` worker processes, and stored. An entry that fails a check is
    rendered again in this process. With ``stored=None`` this is ``film_frames``.
    """
    from .parallel import film_frames

    order = film.indices(indices)
    if stored is None:
        yield from film_frames(film, order, jobs=jobs)
        return
    present = [stored.has(i) for i in order]
    missing = [i for i, p in zip(order, present) if not p]
    rendered = film_frames(film, missing, jobs=jobs) if missing else iter(())
    try:
        for i, p in zip(order, present):
            frame = stored.frame(i) if p else None
            if frame is None and p:  # vanished or damaged since it was listed
                frame = film.raster(film.document(i)).copy()
                stored.put(i, frame)
            elif frame is None:
                j, frame = next(rendered)
                assert j == i, (j, i)
                stored.put(i, frame)
            yield i, frame
    finally:
        close = getattr(rendered, "close", None)
        if close is not None:
            close()
        _done(stored)


def cached_png(film, index: int, stored: FilmFrames) -> bytes:
    """One frame's PNG: the cache's bytes when a checked entry exists, else drawn,
    encoded and stored."""
    png = stored.png(index)
    if png is None:
        from .png import encode_png

        frame = film.raster(film.document(index))
        png = encode_png(frame)
        stored.put_png(index, png, pixel_check(frame))
        _done(stored)
    return png


def cached_pngs(film, files: Sequence[tuple[int, Path]], jobs: int = 1,
                stored: FilmFrames | None = None) -> Iterator[int]:
    """Write each ``(index, file)``'s PNG; yields how many frames each step wrote.

    Frames with a checked entry are copied from the cache here (their PNG bytes,
    nothing is encoded); the rest are drawn, encoded and written by
    ``frames.output.write_pngs`` (over ``jobs`` workers), and the cache keeps a
    link to each file written.
    """
    from .output import write_pngs

    if stored is None:
        yield from write_pngs(film, [(i, str(f)) for i, f in files], jobs)
        return
    # Neither the key nor the copies load ThorVG, so the workers (forked from this
    # process where frames/workers.py allows) start only if a frame is missing.
    try:
        missing = []
        for i, file in files:
            png = stored.png(i)
            if png is None:
                missing.append((i, str(file)))
                continue
            write_bytes_atomic(file, png, code="output-failed", durable=False)
            yield 1
        if missing:
            yield from write_pngs(film, missing, jobs, stored)
    finally:
        _done(stored)
