"""The on-disk frame cache: the PNGs of a film's frames, kept per film.

``nanoframes render`` and ``nanoframes video`` read frames from here and store
what they had to render. Digests never do: ``Film.digests``, ``film_digests``,
``read_film`` and everything behind ``nanoframes digest --check`` and the
pytest plugin render fresh, and this module is imported by none of them. A
cache can make a picture cheaper; it must never make a verdict.

Where: ``$NANOFRAMES_CACHE_DIR``, else the user cache directory
(``platformdirs.user_cache_dir("nanoframes")``), under ``films/``.

A film's key: SHA-256 over canonical JSON of the composition's four identity
components (source, media, fonts, toolchain; ``reading.composition_identity``)
and the canvas size as drawn. The toolchain component covers nanoframes' own
modules, so any code change starts a fresh set of keys. A film's directory,
``films/<key>/``, holds:

- ``<index>.png``: a frame's PNG file, exactly the bytes ``render`` writes.
  Where ``render -o DIR`` has just written that file, the cache keeps a hard
  link to it instead of writing the bytes a second time (``files.link_atomic``;
  a copy where the file systems differ). A held frame (the same picture as a
  frame stored just before it) has no file of its own.
- ``checks``: what each stored frame is (``FILM_MAGIC`` format, below): for
  every frame index, the index whose file holds its PNG, the PNG's length and
  CRC-32, and the CRC-32 of the frame's straight RGBA. One file per film,
  written at the end of a run and every few dozen frames during one (merged
  each time with what another process may have written meanwhile), so a cold
  run creates a few small files besides the links, and an interrupted one
  keeps most of what it stored.

Reading checks everything: ``checks`` must be whole (its own CRC-32, the
magic, the size and the key it was written for), a PNG must have the length
and CRC-32 ``checks`` gives it, and ``frame`` (``video``, which needs pixels)
also decodes it and checks the RGBA. What fails is deleted and drawn again: a
PNG file that ``render``'s output shares and that someone edited in place is
only a miss. A warm ``render -o DIR`` writes copies, never links, so two output
files never share one file (an edit of one cannot change another).

CRC-32, not SHA-256: these checks catch damage and mistakes in files we wrote
ourselves (no one gains by forging an entry in their own cache, and anyone who
can write one could write a matching SHA-256 as easily), and ISA-L's CRC-32 of
a 1080p frame takes 0.7 ms where SHA-256 takes 5 ms.

Several processes at once: every file is written or linked to a temp name and
renamed into place, so a reader sees a whole file or none; the last rename
wins, and a process whose ``checks`` then disagree with a PNG only misses.
Nothing is locked. No fsync: a torn file after a power loss fails its check.

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
import struct
import threading
import time
from collections import OrderedDict
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..errors import NanoframesError
from ..files import link_atomic, write_bytes_atomic

if TYPE_CHECKING:  # imported where frames are touched: `render --help` needs neither
    import numpy as np

FILM_MAGIC = b"NFFILM_4"
# checks: magic, width, height, film key, record count; the records; CRC-32 of all before
_HEAD = struct.Struct("<8sII32sI")
_RECORD = struct.Struct("<IIIII")  # frame index, index of the PNG file, length, PNG, pixels
_TAIL = struct.Struct("<I")
CHECKS = "checks"
FILMS = "films"
LEGACY = "frames"  # NFCACHE2/3 entries and raw .rgba files: counted, evicted, never read
DEFAULT_MAX_MB = 2048
_STALE_TMP_S = 3600  # a temp file this old belongs to a writer that died
_VERIFIED = 8  # PNG files read and checked, kept for the held frames after them
# checks are written during a run too, so an interrupted render (whose teardown
# exits at once: cli/interrupt.py) loses at most this much of what it stored
_SAVE_EVERY = 32  # frames
_SAVE_AFTER_S = 2.0


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


def pixel_check(frame: np.ndarray) -> int:
    """CRC-32 of a frame's straight RGBA (C order)."""
    from ..checksum import crc32

    return crc32(frame)


class Record(NamedTuple):
    """What ``checks`` keeps of one stored frame."""

    file: int  # the frame index whose ``<index>.png`` holds the PNG (itself, or a held twin)
    length: int  # of the PNG
    png: int  # CRC-32 of the PNG
    pixels: int  # pixel_check of the frame it was encoded from


@dataclass(frozen=True)
class CacheStats:
    directory: Path
    entries: int  # frames stored (a held frame counts, though it has no file of its own)
    bytes: int
    max_bytes: int


class FrameCache:
    """Films' frames on disk. Counters (``hits``, ``misses``, ``rejected``,
    ``written``, in frames) are for reports and tests."""

    def __init__(self, directory: str | Path | None = None, limit: int | None = None) -> None:
        self.root = Path(directory) if directory is not None else cache_dir()
        self.films_dir = self.root / FILMS
        self.limit = max_bytes() if limit is None else limit
        self.hits = self.misses = self.rejected = self.written = 0

    def film(self, key: str, width: int, height: int) -> FilmFrames:
        """The frames stored under a film's key (``film_key``), at the size given."""
        return FilmFrames(self.films_dir / key, key, width, height, self)

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
                                _unlink(f.path)
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
                _unlink(path)
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
        data = _load(os.path.join(directory, CHECKS)) or b""
        head = _HEAD.unpack_from(data) if len(data) >= _HEAD.size else None
        frames = head[4] if head and head[0] == FILM_MAGIC else 0
    return _Unit(used, sum(st.st_size for *_, st in files), frames,
                 [path for _n, path, _st in files], directory)


class FilmFrames:
    """One film's frames in the cache: read (checked) and stored.

    ``checks`` is read at the first lookup and written by ``save``: after a run,
    and every ``_SAVE_EVERY`` frames or ``_SAVE_AFTER_S`` seconds during one. Sent
    to a worker process (pickled), it carries only where to write: the worker
    stores its frames' PNGs, and what it stored (``taken``) comes back to be
    ``add``-ed here, so this process writes ``checks`` alone.
    """

    pixel_check = staticmethod(pixel_check)

    def __init__(self, directory: Path, key: str, width: int, height: int,
                 cache: FrameCache | None = None) -> None:
        self.directory, self.key, self.width, self.height = directory, key, width, height
        self.cache = cache if cache is not None else FrameCache(directory.parent.parent, 0)
        self._records: dict[int, Record] | None = None  # None: checks not read yet
        self._new: dict[int, Record] = {}  # stored by this process (or handed back to it)
        # file index -> (its CRC-32, its PNG): checked once, for the held frames after it
        self._verified: OrderedDict[int, tuple[int, bytes]] = OrderedDict()
        self._read_any = False
        # write_pngs' feeder threads add what workers stored while this thread stores
        self._lock = threading.RLock()
        self._saves = True  # False in a worker's copy: only the command writes checks
        self._saved_at = time.monotonic()

    def __getstate__(self) -> dict:  # what a worker needs: where, not what is there
        return {"directory": self.directory, "key": self.key, "width": self.width,
                "height": self.height}

    def __setstate__(self, state: dict) -> None:
        self.__init__(**state)
        self._saves = False

    # --- reading ---------------------------------------------------------

    @property
    def records(self) -> dict[int, Record]:
        if self._records is None:
            self._records = self._load_checks()
        return self._records

    def _load_checks(self) -> dict[int, Record]:
        path = self.directory / CHECKS
        data = _load(path)
        if data is None:
            return {}
        records = _parse_checks(data, self.key, self.width, self.height)
        if records is None:  # damaged, another film's, another size, another format
            self.cache.rejected += 1
            _unlink(path)
            return {}
        self._read_any = True
        return records

    def has(self, index: int) -> bool:
        return index in self._new or index in self.records

    def _record(self, index: int) -> Record | None:
        return self._new.get(index) or self.records.get(index)

    def png(self, index: int) -> bytes | None:
        """The frame's PNG, checked (length and CRC-32); None, and what failed
        deleted, if it is not stored or fails."""
        rec = self._record(index)
        if rec is None:
            self.cache.misses += 1
            return None
        png = self._checked_file(rec, own=rec.file == index)
        if png is None:
            self._refuse(index)
            return None
        self.cache.hits += 1
        return png

    def _checked_file(self, rec: Record, own: bool) -> bytes | None:
        """The PNG file ``rec`` names, if it has the record's length and CRC-32.
        A file that fails its own frame's record is deleted (not one that fails a
        held frame's: that record may be what is wrong)."""
        crc, png = self._verified.get(rec.file, (None, b""))
        if crc is None:
            from ..checksum import crc32

            path = self.directory / f"{rec.file}.png"
            png = _load(path)
            if png is None:
                return None
            if len(png) != rec.length or crc32(png) != rec.png:
                if own:
                    _unlink(path)
                return None
        elif (crc, len(png)) != (rec.png, rec.length):  # another record for the same file
            return None
        self._verified[rec.file] = rec.png, png
        self._verified.move_to_end(rec.file)
        if len(self._verified) > _VERIFIED:
            self._verified.popitem(last=False)
        return png

    def frame(self, index: int) -> np.ndarray | None:
        """The frame decoded from its PNG and checked against its pixels' CRC-32;
        None (and the entry dropped) if it is not stored or fails a check."""
        png = self.png(index)
        if png is None:
            return None
        import numpy as np

        from ..frames.png import decode_png

        try:
            frame = decode_png(png)
        except Exception:  # noqa: BLE001 - any undecodable file is a damaged entry
            frame = None
        rec = self._record(index)
        if frame is None or rec is None or frame.shape != (self.height, self.width, 4) or \
                pixel_check(np.ascontiguousarray(frame)) != rec.pixels:
            self.cache.hits -= 1  # the PNG is whole (its CRC-32 held): the record is wrong
            self._refuse(index)
            return None
        frame.flags.writeable = False
        return frame

    def _refuse(self, index: int) -> None:
        self.cache.rejected += 1
        self.cache.misses += 1
        with self._lock:
            self._new.pop(index, None)
            self.records.pop(index, None)

    # --- storing ---------------------------------------------------------

    def put(self, index: int, frame: np.ndarray) -> None:
        """Store ``frame`` (uint8 RGBA, height x width x 4) as frame ``index``."""
        import numpy as np

        from ..frames.png import encode_png

        if frame.dtype != np.uint8 or frame.shape != (self.height, self.width, 4):
            raise TypeError(f"a frame of this film is uint8 ({self.height}, {self.width}, 4), "
                            f"got {frame.dtype} {frame.shape}")
        frame = np.ascontiguousarray(frame)
        self.put_png(index, encode_png(frame), pixel_check(frame))

    def put_png(self, index: int, png: bytes, pixels: int, *, written: str | None = None,
                same_as: int | None = None) -> None:
        """Store frame ``index``'s PNG; ``pixels`` is the ``pixel_check`` of the
        frame it was encoded from. ``written``: a file holding exactly these bytes
        (``render``'s output), kept as a hard link where possible. ``same_as``: the
        index this process has just stored the same PNG as (a held frame): its
        file is shared, nothing is written."""
        from ..checksum import crc32

        if same_as is None:
            path = self.directory / f"{index}.png"
            if written is None or not link_atomic(written, path):
                try:
                    write_bytes_atomic(path, png, durable=False)
                except (NanoframesError, OSError):
                    return  # a cache that cannot be written is only a slower render
            record = Record(index, len(png), crc32(png), pixels)
        else:  # the twin's file, and its checks: the same bytes are not checksummed again
            twin = self._new.get(same_as) or (self._records or {}).get(same_as)
            record = Record(same_as, len(png), twin.png if twin else crc32(png), pixels)
        with self._lock:
            self._new[index] = record
            self.cache.written += 1
            self._save_now_and_then()

    def taken(self) -> dict[int, Record]:
        """What this object stored: a worker hands it back to its parent's ``add``."""
        return dict(self._new)

    def add(self, taken: dict[int, Record]) -> None:
        """Frames a worker stored for this film: written out with ``save``."""
        with self._lock:
            for index, rec in taken.items():
                self._new[index] = Record(*rec)
            self.cache.written += len(taken)
            self._save_now_and_then()

    def _save_now_and_then(self) -> None:
        if self._saves and (len(self._new) >= _SAVE_EVERY or
                            time.monotonic() - self._saved_at >= _SAVE_AFTER_S):
            self.save()

    def save(self) -> None:
        """Write ``checks``: what is on disk now, with what was stored here on top
        (a record refused here and not stored again stays: it is refused again).
        A run that only read refreshes its mtime (eviction)."""
        with self._lock:
            self._saved_at = time.monotonic()
            if not self._new:
                if self._read_any:
                    _touch(self.directory / CHECKS)
                return
            on_disk = _load(self.directory / CHECKS)
            merged = (_parse_checks(on_disk, self.key, self.width, self.height) or {}) \
                if on_disk is not None else {}
            merged.update(self._new)
            try:
                write_bytes_atomic(self.directory / CHECKS,
                                   _pack_checks(merged, self.key, self.width, self.height),
                                   durable=False)
            except (NanoframesError, OSError):
                return
            self._records, self._new = merged, {}


def _pack_checks(records: dict[int, Record], key: str, width: int, height: int) -> bytes:
    from ..checksum import crc32

    data = _HEAD.pack(FILM_MAGIC, width, height, bytes.fromhex(key), len(records)) + \
        b"".join(_RECORD.pack(i, *records[i]) for i in sorted(records))
    return data + _TAIL.pack(crc32(data))


def _parse_checks(data: bytes, key: str, width: int, height: int) -> dict[int, Record] | None:
    """The records of a whole ``checks`` file written for this film and size; None
    for anything else."""
    from ..checksum import crc32

    if len(data) < _HEAD.size + _TAIL.size:
        return None
    magic, w, h, kbytes, count = _HEAD.unpack_from(data)
    if magic != FILM_MAGIC or (w, h) != (width, height) or kbytes.hex() != key or \
            len(data) != _HEAD.size + count * _RECORD.size + _TAIL.size or \
            crc32(data[:-_TAIL.size]) != _TAIL.unpack_from(data, len(data) - _TAIL.size)[0]:
        return None
    records = {}
    for n in range(count):
        index, *rest = _RECORD.unpack_from(data, _HEAD.size + n * _RECORD.size)
        records[index] = Record(*rest)
    return records


def _load(path: Path | str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def _touch(path: Path | str) -> None:
    try:
        os.utime(path)
    except OSError:
        pass


def _unlink(path: Path | str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass


def _rmdir(path: str | None) -> None:
    if path:
        try:
            os.rmdir(path)
        except OSError:
            pass  # another process wrote into it meanwhile


# --- frames of a film through the cache --------------------------------------

def film_identity(film) -> dict[str, str]:
    """The identity components the cache keys a film's frames on. ThorVG is not
    loaded for them: a warm render draws nothing, and the workers of a render
    with frames to draw are forked after the lookups (see ``cached_pngs``)."""
    from .reading import composition_identity

    film.inputs()  # first: the key is of these versions (what is drawn is checked on them)
    return composition_identity(film.comp, film.baker, load_engine=False).as_dict()


def film_frames_in(film, cache: FrameCache) -> FilmFrames:
    """``film``'s frames in ``cache`` (at the size it draws: ``--scale`` keys its own)."""
    w, h = film.width, film.height
    return cache.film(film_key(film_identity(film), w, h), w, h)


def cached_frame(film, index: int, cache: FrameCache) -> np.ndarray:
    """One frame: from the cache when a checked entry exists, else rendered and stored."""
    stored = film_frames_in(film, cache)
    frame = stored.frame(index)
    if frame is None:
        frame = film.raster(film.document(index)).copy()
        stored.put(index, frame)
        stored.save()
        cache.prune()
    return frame


def cached_frames(film, indices: Iterable[int] | None = None, jobs: int = 1,
                  cache: FrameCache | None = None) -> Iterator[tuple[int, np.ndarray]]:
    """``film_frames`` through the cache: (index, RGBA) in the given order.

    Frames with an entry are read (and checked); the rest are rendered, here or
    over ``jobs`` worker processes, and stored. An entry that fails a check is
    rendered again in this process. With ``cache=None`` this is ``film_frames``.
    """
    from ..frames.film import film_frames

    order = film.indices(indices)
    if cache is None:
        yield from film_frames(film, order, jobs=jobs)
        return
    stored = film_frames_in(film, cache)
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
        stored.save()
        if cache.written:
            cache.prune()


def cached_png(film, index: int, cache: FrameCache) -> bytes:
    """One frame's PNG: the cache's bytes when a checked entry exists, else drawn,
    encoded and stored."""
    stored = film_frames_in(film, cache)
    png = stored.png(index)
    if png is None:
        from ..frames.png import encode_png

        frame = film.raster(film.document(index))
        png = encode_png(frame)
        stored.put_png(index, png, pixel_check(frame))
        stored.save()
        cache.prune()
    return png


def cached_pngs(film, files: Sequence[tuple[int, Path]], jobs: int = 1,
                cache: FrameCache | None = None) -> Iterator[int]:
    """Write each ``(index, file)``'s PNG; yields how many frames each step wrote.

    Frames with a checked entry are copied from the cache here (their PNG bytes,
    nothing is encoded); the rest are drawn, encoded and written by
    ``frames.output.write_pngs`` (over ``jobs`` workers), and the cache keeps a
    link to each file written.
    """
    from ..frames.output import write_pngs

    if cache is None:
        yield from write_pngs(film, [(i, str(f)) for i, f in files], jobs)
        return
    # Neither the identity nor the copies load ThorVG, so the workers (forked from
    # this process where frames/workers.py allows) start only if a frame is missing.
    stored = film_frames_in(film, cache)
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
        stored.save()
        if cache.written:
            cache.prune()
