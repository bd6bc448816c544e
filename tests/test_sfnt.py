"""The face reader (``nanoframes/text/sfnt.py``) against fontTools, on every face
file this machine has, and on damaged files (which are skipped, never raised)."""

from __future__ import annotations

import random
import struct
from pathlib import Path

import pytest
from fontTools.ttLib import TTFont

from nanoframes.text import faces
from nanoframes.text.faces import FaceMeta, _read_meta, _weight_from_subfamily

BUNDLED = faces.bundled_fonts_dir()


def _fonttools_meta(path: Path) -> FaceMeta | None:
    """What discovery read through fontTools before it had its own reader."""

    def name(table, name_id: int) -> str | None:
        keys = ((3, 1, 0x409), (3, 0, 0x409), (1, 0, 0))
        preferred = [table.getName(name_id, *key) for key in keys]
        for rec in [*preferred, *(r for r in table.names if r.nameID == name_id)]:
            if rec is not None:
                try:
                    text = rec.toUnicode().strip()
                except UnicodeDecodeError:
                    continue
                if text:
                    return text
        return None

    try:
        with path.open("rb") as fh:
            if fh.read(4) not in (b"\x00\x01\x00\x00", b"true"):
                return None
        font = TTFont(str(path), lazy=True)
        with font:
            if not all(t in font for t in ("glyf", "loca", "cmap", "head", "hmtx", "name")):
                return None
            legacy = name(font["name"], 1)
            family = name(font["name"], 16) or legacy
            if not family:
                return None
            subfamily = (name(font["name"], 17) or name(font["name"], 2) or "").lower()
            weight, style = 0, ""
            if "OS/2" in font:
                weight = int(font["OS/2"].usWeightClass)
                weight *= 100 if 1 <= weight <= 9 else 1
                selection = font["OS/2"].fsSelection
                style = "oblique" if selection & 0x200 else "italic" if selection & 1 else ""
            if not 1 <= weight <= 1000:
                weight = _weight_from_subfamily(subfamily)
            style = style or ("oblique" if "oblique" in subfamily
                              else "italic" if "italic" in subfamily else "normal")
            family = " ".join(family.split())
            legacy = " ".join(legacy.split()) if legacy else None
            return FaceMeta(family, min(900, max(100, weight)), style,
                            legacy if legacy and legacy.casefold() != family.casefold()
                            else None)
    except Exception:  # noqa: BLE001 - unreadable: not a candidate
        return None


def _every_face_file() -> list[Path]:
    found = []
    for directory in (BUNDLED, *faces.host_font_dirs()):
        found += list(faces.font_files(directory))
    return found


def test_every_face_on_this_machine_reads_as_fonttools_reads_it():
    files = _every_face_file()
    assert len(files) >= 3  # the bundled faces at least
    differ = {f: (_read_meta(f), _fonttools_meta(f)) for f in files
              if _read_meta(f) != _fonttools_meta(f)}
    assert not differ


def _table_offset(data: bytes, tag: bytes) -> tuple[int, int]:
    (count,) = struct.unpack_from(">H", data, 4)
    for n in range(count):
        t, _, offset, length = struct.unpack_from(">4sIII", data, 12 + 16 * n)
        if t == tag:
            return offset, length
    raise AssertionError(tag)


def test_damaged_files_are_skipped_not_raised(tmp_path):
    good = (BUNDLED / "NotoSans-Regular.ttf").read_bytes()
    name_at, _ = _table_offset(good, b"name")
    os2_at, _ = _table_offset(good, b"OS/2")
    rng = random.Random(7)
    cases = {
        "empty": b"",
        "header only": good[:12],
        "half a directory": good[:40],
        "cut inside name": good[:name_at + 10],
        "cut before OS/2": good[:os2_at + 20],
        # a table directory claiming 65,535 tables
        "huge count": good[:4] + b"\xff\xff" + good[6:200],
        # name's record count far beyond the table
        "name count": good[:name_at + 2] + b"\xff\xff" + good[name_at + 4:],
        # name's string storage offset past the end
        "name storage": good[:name_at + 4] + b"\xff\xff" + good[name_at + 6:],
    }
    for n in range(20):  # random bytes over the first kilobyte (directory and tables)
        data = bytearray(good)
        for _ in range(30):
            data[rng.randrange(1024)] = rng.randrange(256)
        cases[f"noise {n}"] = bytes(data)
    read = {}
    for n, (label, data) in enumerate(cases.items()):
        path = tmp_path / f"case-{n}.ttf"
        path.write_bytes(data)
        read[label] = _read_meta(path)  # never raises
        assert read[label] is None or isinstance(read[label], FaceMeta), label
    for label in ("empty", "header only", "half a directory", "cut inside name",
                  "cut before OS/2", "huge count", "name storage"):
        assert read[label] is None, label


@pytest.mark.parametrize("record, expected", [
    ((3, 1, 0x409, "Noto Sans".encode("utf_16_be")), "Noto Sans"),
    ((3, 1, 0x409, "Noto Sans".encode("utf_16_be") + b"\0"), "Noto Sans"),  # stray NUL
    ((3, 1, 0x409, "Noto Sans".encode("utf_16_be") + b"x"), None),  # odd, not a NUL
    ((1, 0, 0, "Caf\u00e9".encode("mac_roman")), "Caf\u00e9"),
    ((1, 0, 0, "Sans".encode("utf_16_be")), "Sans"),  # UTF-16 stored as Mac Roman
    ((3, 2, 0x411, b"\x82\xa0"), None),  # a legacy code page discovery never reads
])
def test_name_record_decoding(record, expected):
    from nanoframes.text.sfnt import NameRecord

    platform, encoding, language, data = record
    assert NameRecord(platform, encoding, language, 1, data).text() == expected


def test_each_face_of_a_collection_reads_as_fonttools_reads_it():
    """A collection's faces (``.ttc``): each one's table directory, as fontTools finds
    it, gives the same family and outline kind."""
    from fontTools.ttLib import TTCollection

    files = [f for f in _every_face_file() if faces.is_collection(f)]
    if not files:
        pytest.skip("no .ttc face on this machine (.ci/run installs fonts-wqy-microhei)")
    for path in files:
        read = faces._read_metas(path)
        with TTCollection(str(path), lazy=True) as collection:
            expected = []
            for index, font in enumerate(collection.fonts):
                name = font["name"]
                family = (name.getDebugName(16) or name.getDebugName(1) or "").strip()
                kind = "CFF" if "CFF " in font else "glyf"
                expected.append((index, " ".join(family.split()), kind))
        assert [(i, m.family, m.outlines) for i, m in read] == expected, path
