"""The on-disk frame cache: rendered frames keyed on identity, frame and size.

``nanoframes render`` and ``nanoframes video`` read frames from here and store
what they had to render. Digests never do: ``Film.digests``, ``film_digests``,
``read_film`` and everything behind ``nanoframes digest --check`` and the
pytest plugin render fresh, and this module is imported by none of them. A
cache can make a picture cheaper; it must never make a verdict.

Where: ``$NANOFRAMES_CACHE_DIR``, else the user cache directory
(``platformdirs.user_cache_dir("nanoframes")``), under ``frames/``.

Key: SHA-256 over canonical JSON of the composition's four identity
components (source, media, fonts, toolchain; ``reading.composition_identity``),
the frame index and the canvas size. The toolchain component covers
nanoframes' own modules, so any code change starts a fresh set of keys.

Entry: one file ``frames/<k[:2]>/<k>.png-entry``: the frame as a PNG file
(``frames/png.py``), behind a header::

    magic     8 bytes  b"NFCACHE3"
    width     4 bytes  little-endian uint32
    height    4 bytes  little-endian uint32
    key      32 bytes  the entry's key (a file renamed onto another key is refused)
    pixels    4 bytes  CRC-32 of the frame's straight RGBA (``pixel_check``)
    png       4 bytes  CRC-32 of the PNG bytes
    payload  the PNG file

A held frame (one whose PNG this run has just stored under another key) gets
a short entry instead, with the magic ``NFSAME_3``, the same header (its own
key, the pixels' and the PNG's CRC-32s) and, as payload, the 32-byte key of the
entry that holds the PNG. Reading one follows it once: the entry it names must
be a whole ``NFCACHE3`` entry of the same size with the same two CRC-32s, or
the held frame's entry is refused like any damaged one. In a demo whose scenes
hold, this halves what a cold render writes to the cache.

PNG, not raw RGBA: a warm ``render -o DIR`` copies an entry's bytes into its
file and encodes nothing. ``get_png`` checks the magic, the size, the key and
the PNG's CRC-32; ``get`` (``video``) also decodes the PNG and checks its RGBA
against the pixels' CRC-32. A failed check deletes the entry; the frame is drawn
again. CRC-32, not SHA-256: these checks catch damage and mistakes in files we
wrote ourselves (no one gains by forging an entry in their own cache, and
anyone who can write one could write a matching SHA-256 as easily), and
ISA-L's CRC-32 of a 1080p frame takes 0.7 ms where SHA-256 takes 5 ms: on a
cold render that was a tenth of the drawing. Entries of the older format
(``NFCACHE2``) fail the magic check and are drawn again.

Writes go through ``files.write_bytes_atomic`` (a temp file in the entry's
directory, the umask's mode, renamed into place), so a reader sees a whole entry
or none, and several processes writing the same key at once are safe: the last
rename wins and every candidate is a whole, correct entry. No fsync: a torn file
after a power loss fails its checksum and is rendered again.

Size: capped at ``$NANOFRAMES_CACHE_MAX_MB`` (default 2048). A hit refreshes
the entry's mtime; after a run that wrote entries the least recently used are
evicted until the cache is under 90 % of the cap.
"""

from __future__ import annotations

import hashlib
import json
import os
import struct
import time
from collections.abc import Iterable, Iterator, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

from ..errors import NanoframesError
from ..files import write_bytes_atomic

if TYPE_CHECKING:  # imported where frames are touched: `render --help` needs neither
    import numpy as np

MAGIC = b"NFCACHE3"
SAME_MAGIC = b"NFSAME_3"  # a held frame's entry: the key of the entry with its PNG
_HEADER = struct.Struct("<8sII32sII")
HEADER_SIZE = _HEADER.size  # 56
SUFFIX = ".png-entry"
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


def frame_key(identity: Mapping[str, str], index: int, width: int, height: int) -> str:
    """The cache key of one frame: identity components, frame index, canvas size."""
    blob = json.dumps({"v": 1, "identity": dict(identity), "frame": int(index),
                       "size": [int(width), int(height)]},
                      sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(blob.encode("utf-8")).hexdigest()


def pixel_check(frame: np.ndarray) -> int:
    """CRC-32 of a frame's straight RGBA (C order)."""
    from ..checksum import crc32

    return crc32(frame)


@dataclass(frozen=True)
class CacheStats:
    directory: Path
    entries: int
    bytes: int
    max_bytes: int


class FrameCache:
    """Frames on disk. Counters (``hits``, ``misses``, ``rejected``, ``written``)
    are for reports and tests."""

    def __init__(self, directory: str | Path | None = None, limit: int | None = None) -> None:
        self.root = Path(directory) if directory is not None else cache_dir()
        self.frames_dir = self.root / "frames"
        self.limit = max_bytes() if limit is None else limit
        self.hits = self.misses = self.rejected = self.written = 0

    # --- entries ---------------------------------------------------------

    def path(self, key: str) -> Path:
        return self.frames_dir / key[:2] / f"{key}{SUFFIX}"

    def has(self, key: str) -> bool:
        return self.path(key).is_file()

    def get_png(self, key: str, width: int, height: int) -> bytes | None:
        """The PNG stored under ``key``, checked (magic, size, key, SHA-256 of the
        PNG); None (and the entry deleted) if it is missing, damaged or of another size."""
        found = self._read(key, width, height)
        return None if found is None else found[1]

    def get(self, key: str, width: int, height: int) -> np.ndarray | None:
        """The frame stored under ``key``, decoded and checked against its pixels'
        CRC-32; None (and the entry deleted) if it is missing or fails a check."""
        found = self._read(key, width, height)
        if found is None:
            return None
        import numpy as np

        from ..frames.png import decode_png

        check, png = found
        try:
            frame = decode_png(png)
        except Exception:  # noqa: BLE001 - any undecodable payload is a damaged entry
            frame = None
        if frame is None or frame.shape != (height, width, 4) or \
                pixel_check(np.ascontiguousarray(frame)) != check:
            self.hits -= 1
            self._reject(self.path(key))
            return None
        frame.flags.writeable = False
        return frame

    def _read(self, key: str, width: int, height: int) -> tuple[int, bytes] | None:
        path = self.path(key)
        data = _load(path)
        if data is None:
            self.misses += 1
            return None
        from ..checksum import crc32

        entry = _parse(data, key, width, height)
        if entry is not None and entry[0] == SAME_MAGIC:
            entry = self._held(entry, width, height)
        if entry is None or crc32(entry[3]) != entry[2]:
            self._reject(path)
            return None
        _touch(path)  # least recently used eviction reads mtime
        self.hits += 1
        return entry[1], entry[3]

    def _held(self, entry: tuple[bytes, int, int, bytes], width: int, height: int
              ) -> tuple[bytes, int, int, bytes] | None:
        """The entry a held frame's entry names, if it holds a PNG with the same checks."""
        _magic, pixels, png_crc, named = entry
        if len(named) != 32:
            return None
        path = self.path(named.hex())
        data = _load(path)
        found = None if data is None else _parse(data, named.hex(), width, height)
        if found is None or found[0] != MAGIC or found[1:3] != (pixels, png_crc):
            return None
        _touch(path)
        return found

    def _reject(self, path: Path) -> None:
        self.rejected += 1
        self.misses += 1
        _unlink(path)

    def put(self, key: str, frame: np.ndarray) -> None:
        """Store ``frame`` (uint8 RGBA, height x width x 4) atomically under ``key``."""
        import numpy as np

        from ..frames.png import encode_png

        if frame.dtype != np.uint8 or frame.ndim != 3 or frame.shape[2] != 4:
            raise TypeError(f"a frame is uint8 RGBA (h, w, 4), got {frame.dtype} {frame.shape}")
        frame = np.ascontiguousarray(frame)
        height, width = frame.shape[:2]
        self.put_png(key, encode_png(frame), pixel_check(frame), width, height)

    # what put_png keeps of a frame's pixels, for get to check a decoded PNG against
    # (frames.output takes it while the frame is at hand)
    pixel_check = staticmethod(pixel_check)

    def put_png(self, key: str, png: bytes, pixels: int, width: int, height: int,
                same_as: str | None = None) -> None:
        """Store an encoded frame atomically under ``key``; ``pixels`` is the
        ``pixel_check`` of the frame it was encoded from. ``same_as``: the key
        this process has just stored the same PNG under (a held frame), so only
        a short entry naming it is written."""
        from ..checksum import crc32

        header = _HEADER.pack(SAME_MAGIC if same_as else MAGIC, width, height,
                              bytes.fromhex(key), pixels, crc32(png))
        try:
            write_bytes_atomic(self.path(key), header + (bytes.fromhex(same_as) if same_as
                                                         else png), durable=False)
        except (NanoframesError, OSError):
            return  # a cache that cannot be written is only a slower render
        self.written += 1

    # --- the whole cache -------------------------------------------------

    def _entries(self) -> Iterator[os.DirEntry]:
        try:
            shards = list(os.scandir(self.frames_dir))
        except OSError:
            return
        for shard in shards:
            if not shard.is_dir(follow_symlinks=False):
                continue
            try:
                yield from os.scandir(shard.path)
            except OSError:
                continue

    def stats(self) -> CacheStats:
        entries = size = 0
        for entry in self._entries():
            if not entry.name.startswith("."):  # temps are dot-files; older formats count too
                try:
                    size += entry.stat(follow_symlinks=False).st_size
                except OSError:
                    continue
                entries += 1
        return CacheStats(self.root, entries, size, self.limit)

    def clear(self) -> CacheStats:
        """Delete every entry (and stray temp files); returns what was removed."""
        removed = self.stats()
        for entry in self._entries():
            _unlink(Path(entry.path))
        try:
            for shard in os.scandir(self.frames_dir):
                if shard.is_dir(follow_symlinks=False):
                    try:
                        os.rmdir(shard.path)
                    except OSError:
                        pass  # another process wrote into it meanwhile
        except OSError:
            pass
        return removed

    def prune(self) -> int:
        """Evict least recently used entries until under 90 % of the cap; remove temp
        files of dead writers. Returns the number of entries evicted."""
        now = time.time()
        live: list[tuple[float, int, str]] = []
        total = 0
        for entry in self._entries():
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if entry.name.startswith("."):  # a temp file (files.py; older: .tmp-)
                if now - st.st_mtime > _STALE_TMP_S:
                    _unlink(Path(entry.path))
                continue
            live.append((st.st_mtime, st.st_size, entry.path))
            total += st.st_size
        if total <= self.limit:
            return 0
        target = int(self.limit * 0.9)
        evicted = 0
        for _mtime, size, path in sorted(live):
            if total <= target:
                break
            _unlink(Path(path))
            total -= size
            evicted += 1
        return evicted


def _parse(data: bytes, key: str, width: int, height: int
           ) -> tuple[bytes, int, int, bytes] | None:
    """(magic, pixels' CRC-32, PNG's CRC-32, payload) of an entry whose header
    names ``key`` and the size asked for; None for anything else."""
    if len(data) < HEADER_SIZE:
        return None
    magic, w, h, kbytes, pixels, png_crc = _HEADER.unpack_from(data)
    if magic not in (MAGIC, SAME_MAGIC) or (w, h) != (width, height) or kbytes.hex() != key:
        return None
    return magic, pixels, png_crc, data[HEADER_SIZE:]


def _load(path: Path) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def _touch(path: Path) -> None:
    try:
        os.utime(path)
    except OSError:
        pass


def _unlink(path: Path) -> None:
    try:
        path.unlink()
    except OSError:
        pass


# --- frames of a film through the cache --------------------------------------

def film_identity(film) -> dict[str, str]:
    """The identity components the cache keys a film's frames on."""
    from .reading import composition_identity

    return composition_identity(film.comp, film.baker).as_dict()


def cached_frame(film, index: int, cache: FrameCache) -> np.ndarray:
    """One frame: from the cache when a verified entry exists, else rendered and stored."""
    w, h = film.width, film.height  # the drawn size: --scale keys its own frames
    key = frame_key(film_identity(film), index, w, h)
    frame = cache.get(key, w, h)
    if frame is None:
        frame = film.raster(film.document(index)).copy()
        cache.put(key, frame)
    return frame


def cached_frames(film, indices: Iterable[int] | None = None, jobs: int = 1,
                  cache: FrameCache | None = None) -> Iterator[tuple[int, np.ndarray]]:
    """``film_frames`` through the cache: (index, RGBA) in the given order.

    Frames with an entry are read (and verified); the rest are rendered, here or
    over ``jobs`` worker processes, and stored. An entry that fails verification
    is rendered again in this process. With ``cache=None`` this is ``film_frames``.
    """
    from ..frames.film import film_frames

    order = film.indices(indices)
    if cache is None:
        yield from film_frames(film, order, jobs=jobs)
        return
    w, h = film.width, film.height  # the drawn size: --scale keys its own frames
    ident = film_identity(film)
    keys = [frame_key(ident, i, w, h) for i in order]
    present = [cache.has(k) for k in keys]
    missing = [i for i, p in zip(order, present) if not p]
    rendered = film_frames(film, missing, jobs=jobs) if missing else iter(())
    try:
        for i, key, p in zip(order, keys, present):
            frame = cache.get(key, w, h) if p else None
            if frame is None and p:  # vanished or corrupt since it was listed
                frame = film.raster(film.document(i)).copy()
                cache.put(key, frame)
            elif frame is None:
                j, frame = next(rendered)
                assert j == i, (j, i)
                cache.put(key, frame)
            yield i, frame
    finally:
        close = getattr(rendered, "close", None)
        if close is not None:
            close()
        if cache.written:
            cache.prune()


def cached_png(film, index: int, cache: FrameCache) -> bytes:
    """One frame's PNG: the cache's bytes when a checked entry exists, else drawn,
    encoded and stored."""
    w, h = film.width, film.height  # the drawn size: --scale keys its own frames
    key = frame_key(film_identity(film), index, w, h)
    png = cache.get_png(key, w, h)
    if png is None:
        from ..frames.png import encode_png

        frame = film.raster(film.document(index))
        png = encode_png(frame)
        cache.put_png(key, png, pixel_check(frame), w, h)
    return png


def cached_pngs(film, files: Sequence[tuple[int, Path]], jobs: int = 1,
                cache: FrameCache | None = None) -> Iterator[int]:
    """Write each ``(index, file)``'s PNG; yields how many frames each step wrote.

    Frames with a checked entry are copied from the cache here (their PNG bytes,
    nothing is encoded); the rest are drawn, encoded and written by
    ``frames.output.write_pngs`` (over ``jobs`` workers), which also stores them.
    """
    from ..files import write_bytes_atomic
    from ..frames.film import pool_for
    from ..frames.output import write_pngs
    from ..frames.workers import can_fork, shut_down

    if cache is None:
        yield from write_pngs(film, [(i, str(f), None) for i, f in files], jobs)
        return
    # The film's identity checks the ThorVG build, which loads it here, and from
    # then on workers cannot be forked from this process (frames/workers.py):
    # fork them first, in case frames are missing; a warm run stops them unused.
    early = pool_for(film, jobs - 1) if jobs > 1 and len(files) > 1 and can_fork() else None
    try:
        w, h = film.width, film.height  # the drawn size: --scale keys its own frames
        ident = film_identity(film)
        missing = []
        for i, file in files:
            key = frame_key(ident, i, w, h)
            png = cache.get_png(key, w, h) if cache.has(key) else None
            if png is None:
                missing.append((i, str(file), key))
                continue
            write_bytes_atomic(file, png, code="output-failed", durable=False)
            yield 1
        if missing:
            booting, early = early, None  # write_pngs shuts it down
            yield from write_pngs(film, missing, jobs, cache, booting)
            cache.prune()
    finally:
        if early is not None:
            shut_down(early)

