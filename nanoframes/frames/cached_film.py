"""One film's frames in the frame cache (``frames/cache.py``): its PNG files and
its ``checks``, read back checked and stored.

A film's directory, ``films/<key>/``, holds:

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
a 1080p frame takes 0.7 ms where SHA-256 takes 5 ms
(docs/decisions/0009-frame-cache-checks-are-crc32.md).

Several processes at once: every file is written or linked to a temp name and
renamed into place, so a reader sees a whole file or none; the last rename
wins, and a process whose ``checks`` then disagree with a PNG only misses.
Nothing is locked. No fsync: a torn file after a power loss fails its check.
"""

from __future__ import annotations

import os
import struct
import threading
import time
from collections import OrderedDict
from pathlib import Path
from typing import TYPE_CHECKING, NamedTuple

from ..errors import NanoframesError
from ..files import link_atomic, write_bytes_atomic

if TYPE_CHECKING:  # imported where frames are touched: `render --help` needs neither
    import numpy as np

FILM_MAGIC = b"NFFILM_4"
# checks: magic, width, height, film key, record count; the records; CRC-32 of all before
HEAD = struct.Struct("<8sII32sI")
_RECORD = struct.Struct("<IIIII")  # frame index, index of the PNG file, length, PNG, pixels
_TAIL = struct.Struct("<I")
CHECKS = "checks"
_VERIFIED = 8  # PNG files read and checked, kept for the held frames after them
# checks are written during a run too, so an interrupted render (whose teardown
# exits at once: cli/interrupt.py) loses at most this much of what it stored
_SAVE_EVERY = 32  # frames
_SAVE_AFTER_S = 2.0


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


class Counts:
    """Frames served (``hits``), not found (``misses``), refused by a check
    (``rejected``) and stored (``written``): for reports and tests."""

    def __init__(self) -> None:
        self.hits = self.misses = self.rejected = self.written = 0


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
                 cache: Counts | None = None) -> None:
        self.directory, self.key, self.width, self.height = directory, key, width, height
        # the counters of the FrameCache it came from (a worker's copy: its own)
        self.cache = cache if cache is not None else Counts()
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
        data = read_or_none(path)
        if data is None:
            return {}
        records = _parse_checks(data, self.key, self.width, self.height)
        if records is None:  # damaged, another film's, another size, another format
            self.cache.rejected += 1
            unlink_quietly(path)
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
            png = read_or_none(path)
            if png is None:
                return None
            if len(png) != rec.length or crc32(png) != rec.png:
                if own:
                    unlink_quietly(path)
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

        from .png import decode_png

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

        from .png import encode_png

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
                    touch_quietly(self.directory / CHECKS)
                return
            on_disk = read_or_none(self.directory / CHECKS)
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

    data = HEAD.pack(FILM_MAGIC, width, height, bytes.fromhex(key), len(records)) + \
        b"".join(_RECORD.pack(i, *records[i]) for i in sorted(records))
    return data + _TAIL.pack(crc32(data))


def _parse_checks(data: bytes, key: str, width: int, height: int) -> dict[int, Record] | None:
    """The records of a whole ``checks`` file written for this film and size; None
    for anything else."""
    from ..checksum import crc32

    if len(data) < HEAD.size + _TAIL.size:
        return None
    magic, w, h, kbytes, count = HEAD.unpack_from(data)
    if magic != FILM_MAGIC or (w, h) != (width, height) or kbytes.hex() != key or \
            len(data) != HEAD.size + count * _RECORD.size + _TAIL.size or \
            crc32(data[:-_TAIL.size]) != _TAIL.unpack_from(data, len(data) - _TAIL.size)[0]:
        return None
    records = {}
    for n in range(count):
        index, *rest = _RECORD.unpack_from(data, HEAD.size + n * _RECORD.size)
        records[index] = Record(*rest)
    return records


def read_or_none(path: Path | str) -> bytes | None:
    try:
        with open(path, "rb") as fh:
            return fh.read()
    except OSError:
        return None


def touch_quietly(path: Path | str) -> None:
    try:
        os.utime(path)
    except OSError:
        pass


def unlink_quietly(path: Path | str) -> None:
    try:
        os.unlink(path)
    except OSError:
        pass
