"""Just enough of an sfnt (TrueType) file to choose faces: its table tags, the
``name`` strings and the ``OS/2`` weight and style bits; and, for lint and
``measure``, which characters it has glyphs for (the ``cmap``).

Font discovery reads every face file on the machine in every process that
draws text (the command, each worker, each pytest-xdist worker). A general
font library costs about 0.1 s to import and a few milliseconds a file to
parse; this reads the three things discovery needs with ``struct``, in well
under a millisecond a file. Every offset is bounds-checked: a damaged or
hostile file raises :class:`SfntError`, and discovery skips it.

Layouts are those of the OpenType specification ("Organization of an
OpenType font", "name", "OS/2", "cmap": formats 4, 6, 12 and 13, the ones
Unicode subtables use).
"""

from __future__ import annotations

import struct
from bisect import bisect_right
from dataclasses import dataclass
from typing import BinaryIO


class SfntError(ValueError):
    """Not a readable single-face sfnt file."""


# (platformID, encodingID) -> codec, for the records discovery may read. Other
# encodings (legacy CJK code pages, ...) are never needed: every face ThorVG can
# draw carries Windows-Unicode or Mac-Roman names.
_CODECS = {(3, 0): "utf_16_be", (3, 1): "utf_16_be", (3, 10): "utf_16_be",
           (1, 0): "mac_roman"}


@dataclass(frozen=True)
class NameRecord:
    platform: int
    encoding: int
    language: int
    name_id: int
    data: bytes

    def text(self) -> str | None:
        """The decoded string, or None where the encoding is not one we read or the
        bytes do not decode."""
        codec = "utf_16_be" if self.platform == 0 else _CODECS.get((self.platform,
                                                                      self.encoding))
        if codec is None:
            return None
        data = self.data
        if codec == "utf_16_be" and len(data) % 2:
            if data[-1:] != b"\0":
                return None
            data = data[:-1]  # a stray trailing NUL, seen in the wild
        try:
            text = data.decode(codec)
        except UnicodeDecodeError:
            return None
        # UTF-16 bytes stored under a one-byte encoding: NUL, letter, NUL, letter...
        if text and len(text) % 2 == 0 and not text[0::2].strip("\0") \
                and all(" " <= c <= "~" for c in text[1::2]):
            text = text[1::2]
        return text


@dataclass(frozen=True)
class Sfnt:
    version: bytes
    tables: dict[str, tuple[int, int]]  # tag -> (offset, length)
    file: BinaryIO  # open while the caller reads tables

    def table(self, tag: str) -> bytes:
        """One table's bytes, read from the file (only the tables asked for are read)."""
        offset, length = self.tables[tag]
        self.file.seek(offset)
        data = self.file.read(length)
        if len(data) != length:
            raise SfntError(f"table {tag!r} runs past the end of the file")
        return data

    def names(self) -> list[NameRecord]:
        """The ``name`` table's records, in file order (malformed ones skipped)."""
        table = self.table("name")
        if len(table) < 6:
            raise SfntError("'name' table too short")
        _, count, storage = struct.unpack_from(">HHH", table, 0)
        strings = table[storage:]
        records = []
        for n in range(count):
            at = 6 + 12 * n
            if at + 12 > len(table):
                break
            platform, encoding, language, name_id, length, offset = \
                struct.unpack_from(">6H", table, at)
            if offset + length > len(strings):
                continue
            records.append(NameRecord(platform, encoding, language, name_id,
                                      strings[offset:offset + length]))
        return records

    def char_map(self) -> CharMap:
        """The characters this face has glyphs for (:func:`read_cmap`)."""
        if "cmap" not in self.tables:
            raise SfntError("no 'cmap' table")
        return read_cmap(self.table("cmap"))

    def x_height(self) -> float | None:
        """``OS/2`` ``sxHeight`` over ``head`` ``unitsPerEm`` (the x-height in em);
        None where the face does not say (``OS/2`` before version 2)."""
        if "OS/2" not in self.tables or "head" not in self.tables:
            return None
        os2, head = self.table("OS/2"), self.table("head")
        if len(os2) < 88 or len(head) < 20 or struct.unpack_from(">H", os2, 0)[0] < 2:
            return None
        height, upem = struct.unpack_from(">h", os2, 86)[0], struct.unpack_from(">H", head, 18)[0]
        return height / upem if height > 0 and upem > 0 else None

    def weight_and_selection(self) -> tuple[int, int] | None:
        """``OS/2`` ``usWeightClass`` and ``fsSelection``; None without an ``OS/2`` table
        or with one too short to hold them (ThorVG never reads it: the face still draws)."""
        if "OS/2" not in self.tables:
            return None
        table = self.table("OS/2")
        if len(table) < 64:
            return None
        return struct.unpack_from(">H", table, 4)[0], struct.unpack_from(">H", table, 62)[0]


# Unicode cmap subtables, best first: (platformID, encodingID).
_UNICODE_CMAPS = ((3, 10), (0, 6), (0, 4), (3, 1), (0, 3), (0, 2), (0, 1), (0, 0))


# A run of code points and how its glyphs are found: (first, last, kind, a, b) with
# kind "delta": glyph = (cp + a) & 0xFFFF; "array": the u16 at a + 2 (cp − first),
# plus b (mod 65536) when non-zero; "seq": glyph = a + (cp − first); "const": glyph a.
_Run = tuple[int, int, str, int, int]


@dataclass(frozen=True)
class CharMap:
    """Which code points a face maps to a glyph (glyph 0 is "none"). Nothing is
    enumerated up front: a hostile table cannot make reading it slow."""

    starts: tuple[int, ...]
    runs: tuple[_Run, ...]
    data: bytes  # the cmap table, for "array" runs

    def has_glyph(self, cp: int) -> bool:
        k = bisect_right(self.starts, cp) - 1
        if k < 0:
            return False
        first, last, kind, a, b = self.runs[k]
        if cp > last:
            return False
        if kind == "delta":
            return (cp + a) & 0xFFFF != 0
        if kind == "seq":
            return a + (cp - first) != 0
        if kind == "const":
            return a != 0
        where = a + 2 * (cp - first)
        if where + 2 > len(self.data):
            return False
        glyph = struct.unpack_from(">H", self.data, where)[0]
        return glyph != 0 and (glyph + b) & 0xFFFF != 0


def _cmap_4(data: bytes, at: int) -> list[_Run]:
    if at + 14 > len(data):
        raise SfntError("'cmap' format 4 subtable too short")
    segs = struct.unpack_from(">H", data, at + 6)[0] // 2
    ends_at, starts_at = at + 14, at + 16 + 2 * segs
    deltas_at, offsets_at = starts_at + 2 * segs, starts_at + 4 * segs
    if offsets_at + 2 * segs > len(data):
        raise SfntError("'cmap' format 4 segments run past the table")
    out: list[_Run] = []
    for k in range(segs):
        last, first = (struct.unpack_from(">H", data, a + 2 * k)[0] for a in (ends_at, starts_at))
        delta = struct.unpack_from(">h", data, deltas_at + 2 * k)[0]
        offset = struct.unpack_from(">H", data, offsets_at + 2 * k)[0]
        if first > last or first == 0xFFFF:
            continue
        if offset == 0:
            out.append((first, last, "delta", delta, 0))
        else:
            out.append((first, last, "array", offsets_at + 2 * k + offset, delta))
    return out


def _cmap_groups(data: bytes, at: int, constant: bool) -> list[_Run]:
    if at + 16 > len(data):
        raise SfntError("'cmap' format 12/13 subtable too short")
    count = struct.unpack_from(">I", data, at + 12)[0]
    if at + 16 + 12 * count > len(data):
        raise SfntError("'cmap' groups run past the table")
    out: list[_Run] = []
    for k in range(count):
        first, last, glyph = struct.unpack_from(">III", data, at + 16 + 12 * k)
        if first <= last <= 0x10FFFF:
            out.append((first, last, "const" if constant else "seq", glyph, 0))
    return out


def _cmap_6(data: bytes, at: int) -> list[_Run]:
    if at + 10 > len(data):
        raise SfntError("'cmap' format 6 subtable too short")
    first, count = struct.unpack_from(">HH", data, at + 6)
    return [(first, first + count - 1, "array", at + 10, 0)] if count else []


def read_cmap(table: bytes) -> CharMap:
    """The best Unicode subtable of a ``cmap`` table (bounds-checked)."""
    if len(table) < 4:
        raise SfntError("'cmap' table too short")
    count = struct.unpack_from(">H", table, 2)[0]
    found: dict[tuple[int, int], int] = {}
    for k in range(count):
        if 4 + 8 * k + 8 > len(table):
            break
        platform, encoding, offset = struct.unpack_from(">HHI", table, 4 + 8 * k)
        if offset + 2 <= len(table):
            found.setdefault((platform, encoding), offset)
    readers = {4: _cmap_4, 6: _cmap_6, 12: lambda d, a: _cmap_groups(d, a, False),
               13: lambda d, a: _cmap_groups(d, a, True)}
    for key in _UNICODE_CMAPS:
        at = found.get(key)
        fmt = struct.unpack_from(">H", table, at)[0] if at is not None else None
        if fmt in readers:
            runs = sorted(readers[fmt](table, at))
            return CharMap(tuple(r[0] for r in runs), tuple(runs), table)
    raise SfntError("no Unicode 'cmap' subtable in a format this reader knows (4, 6, 12, 13)")


def read_sfnt(file: BinaryIO, at: int = 0) -> Sfnt:
    """The table directory at ``at`` (0, or a collection face's) of the sfnt file open
    (binary) in ``file``."""
    file.seek(at)
    header = file.read(12)
    if len(header) < 12:
        raise SfntError("too short for an sfnt header")
    (count,) = struct.unpack_from(">H", header, 4)
    directory = file.read(16 * count)
    if len(directory) < 16 * count:
        raise SfntError("table directory runs past the end of the file")
    tables = {}
    for n in range(count):
        tag, _, offset, length = struct.unpack_from(">4sIII", directory, 16 * n)
        tables.setdefault(tag.decode("latin-1"), (offset, length))
    return Sfnt(header[:4], tables, file)


def read_face(file: BinaryIO, index: int = 0) -> Sfnt:
    """The table directory of face ``index``: of a collection (``ttcf``) the face's, of a
    single-face file its only one (index 0)."""
    file.seek(0)
    header = file.read(12)
    if header[:4] != b"ttcf":
        if index:
            raise SfntError(f"no face {index} in a single-face file")
        return read_sfnt(file)
    count = struct.unpack_from(">I", header, 8)[0] if len(header) == 12 else 0
    if not 0 <= index < count:
        raise SfntError(f"no face {index} in the collection")
    file.seek(12 + 4 * index)
    raw = file.read(4)
    if len(raw) != 4:
        raise SfntError("collection header runs past the end of the file")
    return read_sfnt(file, struct.unpack(">I", raw)[0])
