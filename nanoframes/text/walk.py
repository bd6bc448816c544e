"""ThorVG's reads of a drawn copy, done as ThorVG 1.0.4 does them
(``src/loaders/ttf/tvgTtfReader.cpp``), for the parts the OpenType Sanitizer may
pass without having checked them as ThorVG reads them.

- ``header()``: the checks ThorVG makes before it loads a face at all; a face it
  would not load is said so here rather than as an error at the first draw.
- ``kerning()``: ThorVG walks ``kern`` subtables with its own stride (past the
  6-byte header, past the 8-byte format-0 header, then ``length`` more) and
  binary-searches ``nPairs`` six-byte pairs without checking they lie in the
  file. OTS drops a ``kern`` table it dislikes and passes the face; ThorVG,
  handed that table, read past the face's memory. Every pair array ThorVG's walk
  reaches must lie inside the copy.
- ``glyph()``: the ``cmap`` subtable ThorVG picks (the first Unicode full-repertoire
  one, else the first Unicode BMP one, whether or not OTS kept it) must give only
  glyph ids below ``maxp.numGlyphs`` (a larger id makes ThorVG read ``loca``
  past its table and take another table's bytes for an outline), and a format 12
  subtable's groups must lie inside the copy (ThorVG does not check them).

Each function returns why ThorVG must not be handed the copy, or None. All
arithmetic is ThorVG's: unsigned 32-bit offsets, checked only against the copy's size.
"""

from __future__ import annotations

import struct

_U32 = 0xFFFFFFFF


def _table(data: bytes, tag: str) -> int:
    count = struct.unpack_from(">H", data, 4)[0]
    for n in range(count):  # the copy's directory is sorted and has each tag once
        if data[12 + 16 * n:16 + 16 * n] == tag.encode("latin-1"):
            return struct.unpack_from(">I", data, 20 + 16 * n)[0]
    return 0


def _fits(data: bytes, offset: int, margin: int) -> bool:  # TtfReader::validate
    return offset <= len(data) and len(data) - offset >= margin


def _u16(data: bytes, at: int) -> int:
    return struct.unpack_from(">H", data, at)[0]


def problem(data: bytes) -> str | None:
    """Why ThorVG must not be handed the drawn copy ``data``, or None."""
    return header_problem(data) or kern_problem(data) or cmap_problem(data)


def header_problem(data: bytes) -> str | None:
    sizes = {"head": 54, "hhea": 36, "maxp": 6, "cmap": 4}
    at = {tag: _table(data, tag) for tag in (*sizes, "kern")}
    for tag, size in sizes.items():
        if not at[tag] or not _fits(data, at[tag], size):
            return f"'{tag}': shorter than ThorVG reads ({size} bytes)"
    glyphs = _u16(data, at["maxp"] + 4)
    metrics = _u16(data, at["hhea"] + 34)
    if glyphs == 0:
        return "'maxp': no glyphs (ThorVG does not load the face)"
    if not 1 <= metrics <= glyphs:
        return (f"'hhea': {metrics} horizontal metrics for {glyphs} glyphs "
                "(ThorVG does not load the face)")
    if at["kern"]:
        if not _fits(data, at["kern"], 4):
            return "'kern': shorter than its header"
        if _u16(data, at["kern"]) != 0:
            return ("'kern': not version 0 (an Apple-format kern table): "
                    "ThorVG 1.0.4 does not load the face")
    return None


def kern_problem(data: bytes) -> str | None:
    kern = _table(data, "kern")
    if not kern:
        return None
    tables = _u16(data, kern + 2)
    kern += 4
    for n in range(tables):
        if not _fits(data, kern, 6):
            return None  # ThorVG stops its walk here
        length, fmt, flags = struct.unpack_from(">HBB", data, kern + 2)
        kern = (kern + 6) & _U32
        if fmt == 0 and flags & 1 and not flags & 2:
            if not _fits(data, kern, 8):
                return None
            pairs = _u16(data, kern)
            kern = (kern + 8) & _U32
            if not _fits(data, kern, 6 * pairs):
                return (f"'kern': subtable {n} claims {pairs} pairs, which run "
                        f"{kern + 6 * pairs - len(data)} bytes past the face")
        kern = (kern + length) & _U32
    return None


def cmap_problem(data: bytes) -> str | None:
    cmap, maxp = _table(data, "cmap"), _table(data, "maxp")
    glyphs = _u16(data, maxp + 4)
    entries = _u16(data, cmap + 2)
    if not _fits(data, cmap, 4 + 8 * entries):
        return None  # ThorVG maps no character
    records = [struct.unpack_from(">HHI", data, cmap + 4 + 8 * k) for k in range(entries)]
    # ThorVG keys a record by platform * 64 + encoding: 4 and 202 are (0, 4) and (3, 10)
    for wanted, formats in (((4, 202), (12,)), ((3, 193), (4, 6))):
        for platform, encoding, offset in records:
            if platform * 64 + encoding not in wanted:
                continue
            table = (cmap + offset) & _U32
            if not _fits(data, table, 8 if 12 in formats else 6):
                return None
            fmt = _u16(data, table)
            if fmt not in formats:
                return None  # ThorVG maps no character through it (nor falls back)
            check = {12: _format_12, 4: _format_4, 6: _format_6}[fmt]
            found = check(data, table, glyphs)
            return f"'cmap' format {fmt} subtable ({platform}, {encoding}): {found}" \
                if found else None
    return None


def _format_12(data: bytes, table: int, glyphs: int) -> str | None:
    import numpy as np  # here: only a face's check loads NumPy

    length = struct.unpack_from(">I", data, table + 4)[0]
    if length < 16 or not _fits(data, table, length):
        return None  # ThorVG maps no character through it
    count = struct.unpack_from(">I", data, table + 12)[0]
    if not _fits(data, table + 16, 12 * count):
        return f"{count} groups run past the face"
    groups = np.frombuffer(data, ">u4", 3 * count, table + 16).reshape(-1, 3).astype(np.int64)
    first, last, start = groups[:, 0], groups[:, 1], groups[:, 2]
    live = first <= last
    top = (start + last - first)[live]
    if top.size and (top >= glyphs).any():
        return f"maps a character to glyph {int(top.max())} of {glyphs}"
    return None


def _format_6(data: bytes, table: int, glyphs: int) -> str | None:
    import numpy as np  # here: only a face's check loads NumPy

    count = _u16(data, table + 8)
    if not _fits(data, table + 6, 4 + 2 * count):
        return None  # ThorVG checks this itself
    ids = np.frombuffer(data, ">u2", count, table + 10)
    if ids.size and int(ids.max()) >= glyphs:
        return f"maps a character to glyph {int(ids.max())} of {glyphs}"
    return None


def _format_4(data: bytes, table: int, glyphs: int) -> str | None:
    import numpy as np  # here: only a face's check loads NumPy

    at = table + 6
    segx2 = _u16(data, at)
    if segx2 & 1 or segx2 == 0:
        return None  # ThorVG maps no character through it
    segs = segx2 // 2
    ends_at = at + 8
    starts_at = ends_at + segx2 + 2
    deltas_at = starts_at + segx2
    ranges_at = deltas_at + segx2
    if not _fits(data, ranges_at, segx2):
        return None  # ThorVG checks this itself
    ends, starts, deltas, ranges = (np.frombuffer(data, ">u2", segs, a).astype(np.int64)
                                    for a in (ends_at, starts_at, deltas_at, ranges_at))
    if (np.diff(ends) < 0).any():
        return "segments out of order (ThorVG's binary search would read others' glyphs)"
    codes = np.arange(0x10000, dtype=np.int64)
    seg = np.minimum(np.searchsorted(ends, codes, "left"), segs - 1)  # ThorVG's search
    mapped = starts[seg] <= codes
    codes, seg = codes[mapped], seg[mapped]
    delta, offset = deltas[seg], ranges[seg]
    ids = (codes + delta) & 0xFFFF
    indirect = offset != 0
    where = ranges_at + 2 * seg[indirect] + offset[indirect] + 2 * (codes[indirect]
                                                                  - starts[seg[indirect]])
    inside = where + 2 <= len(data)
    raw = np.zeros(where.shape, np.int64)
    buf = np.frombuffer(data, np.uint8)
    raw[inside] = buf[where[inside]].astype(np.int64) << 8 | buf[where[inside] + 1]
    ids[indirect] = np.where(raw > 0, (raw + delta[indirect]) & 0xFFFF, 0)
    bad = ids >= glyphs
    if bad.any():
        return f"maps U+{int(codes[bad][0]):04X} to glyph {int(ids[bad][0])} of {glyphs}"
    return None
