"""The on-disk frame cache: the PNGs of films' frames, kept per film.

``nanoframes render`` and ``nanoframes video`` read frames from here and store
what they had to draw (``frames/through_cache.py``). Digests never do:
``Film.digests``, ``film_digests``, ``read_film`` and everything behind
``nanoframes digest --check`` and the pytest plugin draw fresh, and none of
them imports the cache. A cache can make a picture cheaper; it must never
make a verdict (docs/decisions/0010-the-frame-cache-never-makes-a-verdict.md).

Where: ``$NANOFRAMES_CACHE_DIR``, else the user cache directory
(``platformdirs.user_cache_dir("nanoframes")``), under ``films/``; one
directory per film (``frames/cached_film.py`` has what it holds).

A film's key: SHA-256 over canonical JSON of the composition's four identity
components (source, media, fonts, toolchain), given by the caller, and the
canvas size as drawn. The toolchain component covers nanoframes' own modules,
so any code change starts a fresh set of keys.

Size: capped at ``$NANOFRAMES_CACHE_MAX_MB`` (default 2048), counting linked
PNGs whole. A run that reads a film refreshes the mtime of its ``checks``;
after a run that stored frames the least recently used films are evicted whole
until the cache is under 90 % of the cap. Files of older formats (``frames/``)
count, and are evicted oldest first the same way.
"""

from __future__ import annotations

import hashlib
import json
import os
import shutil
import time
from collections.abc import Iterator, Mapping
from dataclasses import dataclass
from pathlib import Path
from typing import NamedTuple

from ..errors import NanoframesError
from .cached_film import (
    CHECKS,
    FILM_MAGIC,
    HEAD,
    Counts,
    FilmFrames,
    read_or_none,
    unlink_quietly,
)

FILMS = "films"
LEGACY = "frames"  # NFCACHE2/3 entries and raw .rgba files: counted, evicted, never read
DEFAULT_MAX_MB = 2048
_STALE_TMP_S = 3600  # a temp file this old belongs to a writer that died


def cache_dir() -> Path:
    """``$NANOFRAMES_CACHE_DIR`` or the user cache directory for nanoframes."""
    env = os.environ.get("NANOFRAMES_CACHE_DIR", "").strip()
    if env:
        return Path(env).expanduser().absolute()
    import platformdirs

    return Path(platformdirs.user_cache_dir("nanoframes", appauthor=False))


def max_bytes() -> int:
    raw = os.environ.get("NANOFRAMES_CACHE_MAX_MB", "").strip()
    if not raw:
        return DEFAULT_MAX_MB * 1024 * 1024
    try:
        mb = float(raw)
    except ValueError:
        mb = -1
    if mb < 0:
        raise NanoframesError(
            "config-invalid", f"NANOFRAMES_CACHE_MAX_MB must be a number >= 0, got {raw!r}")
    return int(mb * 1024 * 1024)


def film_key(identity: Mapping[str, str], width: int, height: int) -> str:
    """The cache key of a film's frames: identity components and the drawn size."""
    blob = json.dumps({"v": 2, "identity": dict(identity), "size": [int(width), int(height)]},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


@dataclass(frozen=True)
class CacheStats:
    directory: Path
    entries: int  # frames stored (a held frame counts, though it has no file of its own)
    bytes: int
    max_bytes: int


class FrameCache(Counts):
    """Films' frames on disk. Counters (``hits``, ``misses``, ``rejected``,
    ``written``, in frames) are for reports and tests."""

    def __init__(self, directory: str | Path | None = None, limit: int | None = None) -> None:
        self.root = Path(directory) if directory is not None else cache_dir()
        self.films_dir = self.root / FILMS
        self.limit = max_bytes() if limit is None else limit
        super().__init__()

    def film(self, key: str, width: int, height: int) -> FilmFrames:
        """The frames stored under a film's key (``film_key``), at the size given."""
        return FilmFrames(self.films_dir / key, key, width, height, self)

    def film_of(self, film, identity: Mapping[str, str]) -> FilmFrames:
        """``film``'s frames, keyed on its ``identity`` (the caller's: the
        determinism layer's ``reading.film_identity``) and the size it draws at
        (``--scale`` keys a film of its own)."""
        w, h = film.width, film.height
        return self.film(film_key(identity, w, h), w, h)

    # --- the whole cache -------------------------------------------------

    def _units(self) -> Iterator[_Unit]:
        """What eviction weighs: each film directory, and each file of an older
        format. Dead writers' temp files are removed on the way."""
        now = time.time()
        for top in (self.films_dir, self.root / LEGACY):
            try:
                dirs = [d for d in os.scandir(top) if d.is_dir(follow_symlinks=False)]
            except OSError:
                continue
            for d in dirs:
                files = []
                try:
                    for f in os.scandir(d.path):
                        try:
                            st = f.stat(follow_symlinks=False)
                        except OSError:
                            continue
                        if f.name.startswith("."):  # a temp file (files.py)
                            if now - st.st_mtime > _STALE_TMP_S:
                                unlink_quietly(f.path)
                            continue
                        files.append((f.name, f.path, st))
                except OSError:
                    continue
                if top == self.films_dir:
                    yield _film_unit(d.path, files)
                else:
                    for _name, path, st in files:
                        yield _Unit(st.st_mtime, st.st_size, 1, [path], None)

    def stats(self) -> CacheStats:
        units = list(self._units())
        return CacheStats(self.root, sum(u.frames for u in units),
                          sum(u.size for u in units), self.limit)

    def clear(self) -> CacheStats:
        """Delete every stored frame (and stray temp files); returns what was removed."""
        removed = self.stats()
        for top in (self.films_dir, self.root / LEGACY):
            shutil.rmtree(top, ignore_errors=True)
        return removed

    def prune(self) -> int:
        """Evict the least recently used films until under 90 % of the cap; remove
        temp files of dead writers. Returns the number of frames evicted."""
        units = sorted(self._units())
        total = sum(u.size for u in units)
        if total <= self.limit:
            return 0
        target = int(self.limit * 0.9)
        evicted = 0
        for unit in units:
            if total <= target:
                break
            for path in unit.files:
                unlink_quietly(path)
            if unit.directory is not None:
                _rmdir(unit.directory)
            total -= unit.size
            evicted += unit.frames
        return evicted


class _Unit(NamedTuple):
    """What eviction removes at once: a film's directory, or one older file."""

    used: float  # last used (mtime)
    size: int
    frames: int
    files: list[str]
    directory: str | None  # removed too, once empty


def _film_unit(directory: str, files: list[tuple[str, str, os.stat_result]]) -> _Unit:
    """A film directory as one unit, last used when its ``checks`` were last read
    or written (else its newest file: a run killed before writing them)."""
    checks = next((st for name, _p, st in files if name == CHECKS), None)
    used = checks.st_mtime if checks else max((st.st_mtime for *_, st in files), default=0.0)
    frames = 0
    if checks is not None:
        data = read_or_none(os.path.join(directory, CHECKS)) or b""
        head = HEAD.unpack_from(data) if len(data) >= HEAD.size else None
        frames = head[4] if head and head[0] == FILM_MAGIC else 0
    return _Unit(used, sum(st.st_size for *_, st in files), frames,
                 [path for _n, path, _st in files], directory)


def _rmdir(path: str | None) -> None:
    if path:
        try:
            os.rmdir(path)
        except OSError:
            pass  # another process wrote into it meanwhile
