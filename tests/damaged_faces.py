"""Damaged faces for tests: a bundled face with bytes of one table (``glyf``,
``loca`` or ``cmap``) overwritten by a seeded generator, so every run makes the
same files. The table directory is read with ``struct`` (the checksums are left
stale, as a damaged file's would be)."""

from __future__ import annotations

import random
import struct
from pathlib import Path

TABLES = ("glyf", "loca", "cmap")
SOURCE = Path(__file__).resolve().parents[1] / "fonts" / "NotoSans-Regular.ttf"


def table_ranges(data: bytes) -> dict[str, tuple[int, int]]:
    count = struct.unpack_from(">H", data, 4)[0]
    out = {}
    for i in range(count):
        tag, _checksum, offset, length = struct.unpack_from(">4sIII", data, 12 + 16 * i)
        out[tag.decode("latin-1")] = (offset, length)
    return out


FAMILY = "Damg Sans"  # "Noto" renamed in place (same length): not a bundled family


def renamed(data: bytes) -> bytearray:
    """The face with its family renamed to ``FAMILY`` in the ``name`` table."""
    out = bytearray(data)
    offset, length = table_ranges(data)["name"]
    for old, new in (("Noto", "Damg"),):
        for enc in ("utf-16-be", "latin-1"):
            a, b = old.encode(enc), new.encode(enc)
            out[offset:offset + length] = out[offset:offset + length].replace(a, b)
    return out


def damaged(seed: int, table: str, source: Path = SOURCE) -> bytes:
    """``source`` (renamed) with 1 to 64 bytes of ``table`` set to random values (or,
    one time in four, a run of up to 256 bytes zeroed or set to 0xff)."""
    rnd = random.Random(f"{seed}-{table}")
    data = renamed(source.read_bytes())
    offset, length = table_ranges(bytes(data))[table]
    if rnd.random() < 0.25:
        start = offset + rnd.randrange(length)
        run = min(rnd.randint(1, 256), offset + length - start)
        data[start:start + run] = bytes([rnd.choice((0, 0xFF))]) * run
    else:
        for _ in range(rnd.randint(1, 64)):
            data[offset + rnd.randrange(length)] = rnd.randrange(256)
    return bytes(data)


def make(directory: Path, count: int) -> list[Path]:
    """``count`` damaged faces per table in ``directory``: ``glyf-0.ttf``..."""
    directory.mkdir(parents=True, exist_ok=True)
    out = []
    for table in TABLES:
        for seed in range(count):
            path = directory / f"{table}-{seed}.ttf"
            path.write_bytes(damaged(seed, table))
            out.append(path)
    return out
