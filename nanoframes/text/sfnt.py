"""Just enough of an sfnt (TrueType) file to choose faces: its table tags, the
``name`` strings and the ``OS/2`` weight and style bits.

Font discovery reads every face file on the machine in every process that
draws text (the command, each worker, each pytest-xdist worker). A general
font library costs about 0.1 s to import and a few milliseconds a file to
parse; this reads the three things discovery needs with ``struct``, in well
under a millisecond a file. Every offset is bounds-checked: a damaged or
hostile file raises :class:`SfntError`, and discovery skips it.

Layouts are those of the OpenType specification ("Organization of an
OpenType font", "name", "OS/2").
"""

from __future__ import annotations

import struct
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

    def weight_and_selection(self) -> tuple[int, int] | None:
        """``OS/2`` ``usWeightClass`` and ``fsSelection``; None without an ``OS/2`` table."""
        if "OS/2" not in self.tables:
            return None
        table = self.table("OS/2")
        if len(table) < 64:
            raise SfntError("'OS/2' table too short")
        return struct.unpack_from(">H", table, 4)[0], struct.unpack_from(">H", table, 62)[0]


def read_sfnt(file: BinaryIO) -> Sfnt:
    """The table directory of the single-face sfnt file open (binary) in ``file``."""
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
