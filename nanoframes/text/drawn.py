"""The bytes ThorVG is handed for a face: its drawn copy.

ThorVG 1.0.4's TrueType reader (``src/loaders/ttf/tvgTtfReader.cpp``) reads the
table directory and eight tables, nothing else: ``head``, ``hhea``, ``maxp``,
``cmap``, ``hmtx``, ``loca``, ``glyf`` and ``kern`` (decision 0085). The drawn copy
of a face is a new single-face sfnt holding exactly those tables, byte for byte
as the face file has them, under a sorted table directory (ThorVG finds tables by
binary search), plus three fixed stub tables the OpenType Sanitizer insists on
(``OS/2``, ``name``, ``post``; ThorVG never reads them). The check
(:mod:`nanoframes.text.sanitize`) passes or refuses this copy, and this copy, not
the file, is what ThorVG loads: damage in a table ThorVG never reads (a layout
table, a hinting source) cannot refuse a face, and a table ThorVG reads cannot
reach it unchecked. A face of a ``.ttc`` collection is copied out the same way
(its own table directory, shared tables copied). The fonts identity still hashes
the face file.
"""

from __future__ import annotations

import struct

from .sfnt import SfntError

# What tvgTtfReader.cpp (v1.0.4) reads, in tag order (the copy's directory order).
DRAWN_TABLES = ("cmap", "glyf", "head", "hhea", "hmtx", "kern", "loca", "maxp")
REQUIRED = ("cmap", "glyf", "head", "hhea", "hmtx", "loca", "maxp")
TRUETYPE = (b"\x00\x01\x00\x00", b"true")
MAX_COLLECTION_FACES = 256

# Stubs for the tables OTS requires and ThorVG never reads: an OS/2 version 0
# (weight 400, width 5), a name table with no records, a post version 3.
_STUBS = {
    "OS/2": struct.pack(">HhHH", 0, 0, 400, 5) + bytes(78 - 8),
    "name": struct.pack(">HHH", 0, 0, 6),
    "post": struct.pack(">IIhhIIIII", 0x30000, 0, 0, 0, 0, 0, 0, 0, 0),
}


def face_offsets(data: bytes) -> list[int]:
    """Where each face's table directory starts: ``[0]`` for a single face, one per
    face of a ``ttcf`` collection."""
    if len(data) < 12:
        raise SfntError("too short for an sfnt header")
    if data[:4] != b"ttcf":
        return [0]
    count = struct.unpack_from(">I", data, 8)[0]
    if not 1 <= count <= MAX_COLLECTION_FACES or 12 + 4 * count > len(data):
        raise SfntError(f"a collection header claiming {count} faces")
    return list(struct.unpack_from(f">{count}I", data, 12))


def directory(data: bytes, at: int = 0) -> tuple[bytes, dict[str, tuple[int, int]]]:
    """The sfnt version and ``tag -> (offset, length)`` of the table directory at
    ``at`` (the first entry of a repeated tag wins), each table inside the file."""
    if at + 12 > len(data):
        raise SfntError("table directory past the end of the file")
    count = struct.unpack_from(">H", data, at + 4)[0]
    if at + 12 + 16 * count > len(data):
        raise SfntError("table directory runs past the end of the file")
    tables: dict[str, tuple[int, int]] = {}
    for n in range(count):
        tag, _, offset, length = struct.unpack_from(">4sIII", data, at + 12 + 16 * n)
        tables.setdefault(tag.decode("latin-1"), (offset, length))
    return data[at:at + 4], tables


def outlines(version: bytes, tables: dict) -> str | None:
    """``"glyf"`` (TrueType outlines: ThorVG draws them), ``"CFF"`` (it does not), or
    None (not a face)."""
    if version == b"OTTO" or "CFF " in tables or "CFF2" in tables:
        return "CFF"
    if version in TRUETYPE and "glyf" in tables:
        return "glyf"
    return None


def drawn_copy(data: bytes, index: int = 0) -> bytes:
    """The drawn copy of face ``index`` of the face file ``data``; SfntError where it
    is not a TrueType-outline face whose tables lie inside the file."""
    offsets = face_offsets(data)
    if not 0 <= index < len(offsets):
        raise SfntError(f"no face {index} in the file")
    version, tables = directory(data, offsets[index])
    if outlines(version, tables) != "glyf":
        raise SfntError("not a TrueType-outline face")
    missing = [tag for tag in REQUIRED if tag not in tables]
    if missing:
        raise SfntError(f"no {', '.join(repr(t) for t in missing)} table")
    view = memoryview(data)
    chosen: dict[str, bytes | memoryview] = dict(_STUBS)
    for tag in DRAWN_TABLES:
        if tag in tables:
            offset, length = tables[tag]
            if offset + length > len(data):
                raise SfntError(f"table {tag!r} runs past the end of the file")
            chosen[tag] = view[offset:offset + length]
    return _assemble(chosen)


def _checksum(block) -> int:
    import numpy as np  # here: listing faces or printing help never loads NumPy

    return int(np.frombuffer(block, dtype=">u4").sum(dtype=np.uint64)) & 0xFFFFFFFF


def _assemble(tables: dict) -> bytes:
    """An sfnt of ``tables`` (tag -> bytes), directory sorted, each table 4-byte
    aligned and zero-padded, with its checksum (``head``'s counting its
    ``checkSumAdjustment`` as zero, as the specification says); the bytes of each
    table as given."""
    tags = sorted(tables, key=lambda t: t.encode("latin-1"))
    count = len(tags)
    power = 1 << (count.bit_length() - 1)
    places, end = [], 12 + 16 * count
    for tag in tags:
        places.append(end)
        end += (len(tables[tag]) + 3) // 4 * 4
    out = bytearray(end)
    struct.pack_into(">4sHHHH", out, 0, TRUETYPE[0], count, 16 * power,
                     power.bit_length() - 1, 16 * (count - power))
    for n, (tag, at) in enumerate(zip(tags, places)):
        block = tables[tag]
        out[at:at + len(block)] = block
        padded = memoryview(out)[at:at + (len(block) + 3) // 4 * 4]
        total = _checksum(padded)
        if tag == "head" and len(block) >= 12:  # checkSumAdjustment counts as zero
            total = (total - struct.unpack_from(">I", out, at + 8)[0]) & 0xFFFFFFFF
        struct.pack_into(">4sIII", out, 12 + 16 * n, tag.encode("latin-1"), total, at,
                         len(block))
    return bytes(out)
