"""Candidate face files: where they are, what their name tables say, their bytes.

The discovery half of font handling (:mod:`nanoframes.text.fonts` resolves
``font-family`` lists over what is found here). Face files are ``*.ttf``,
``*.otf``, ``*.ttc`` and ``*.otc``; each face in them with TrueType (``glyf``)
outlines is a candidate, a face of a collection included (ThorVG is handed it
copied out of the collection: :mod:`nanoframes.text.drawn`). A face with CFF
outlines is found too, so that text naming it is told ThorVG 1.0.4 does not draw
it, but it is never drawn. Variable TrueType fonts are kept: ThorVG draws their
default instance, which is what their ``OS/2`` weight describes.

The bundled faces are package data: the package ``nanoframes.fonts`` (the
repository's top-level ``fonts/``, mapped into the package by the build; see
docs/packaging.md). They are found through the import system, never beside the
source tree, so an editable install and a wheel find the same files.
"""

from __future__ import annotations

import hashlib
import os
import re
import struct
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import NamedTuple

from ..errors import NanoframesError
from ..files import open_regular, read_regular
from .drawn import MAX_COLLECTION_FACES, drawn_copy
from .sfnt import NameRecord, Sfnt, SfntError, read_face, read_sfnt
from .style import DEFAULT_WEIGHT, EX_PER_EM

FONT_SUFFIXES = (".ttf", ".otf", ".ttc", ".otc")
BUNDLED_PACKAGE = "nanoframes.fonts"


def bundled_fonts_dir() -> Path:
    """The directory of the installed package ``nanoframes.fonts``.

    If the package is missing (an install from before the faces were package
    data), the path where it would be: it holds no faces, so text fails with
    ``font-missing`` naming that path, and text-free films still work.
    """
    from importlib import resources  # here: most commands never need the faces

    try:
        found = resources.files(BUNDLED_PACKAGE)
    except ModuleNotFoundError:
        found = None
    if isinstance(found, Path):
        return found.resolve()
    return Path(__file__).resolve().parent.parent / "fonts"


def host_font_dirs() -> tuple[Path, ...]:
    home = Path.home()
    dirs = [Path("/usr/share/fonts"), Path("/usr/local/share/fonts"),
            home / ".local/share/fonts", home / ".fonts"]
    if sys.platform == "darwin":
        dirs += [Path("/Library/Fonts"), Path("/System/Library/Fonts"), home / "Library/Fonts"]
    if sys.platform == "win32":
        windir = os.environ.get("WINDIR", r"C:\Windows")
        dirs.append(Path(windir) / "Fonts")
        if os.environ.get("LOCALAPPDATA"):
            dirs.append(Path(os.environ["LOCALAPPDATA"]) / "Microsoft/Windows/Fonts")
    return tuple(dirs)


@dataclass(frozen=True)
class Face:
    """One loadable face file.

    ``name`` is what nanoframes registers the face under in ThorVG and writes
    into rendered documents: the file stem reduced to ``[A-Za-z0-9._-]``,
    with ``-2``, ``-3``... appended when an earlier candidate took it (so a
    bundled face's name never depends on what the host has).
    """

    path: Path
    family: str
    weight: int
    style: str
    origin: str  # 'bundled' | 'project' | 'host'
    name: str
    index: int = 0  # the face's place in a collection (.ttc); 0 for a single face

    @property
    def label(self) -> str:
        """The file's name, with ``#N`` for a face of a collection: ``wqy-microhei.ttc#1``."""
        return f"{self.path.name}#{self.index}" if is_collection(self.path) else self.path.name

    @property
    def travels(self) -> bool:
        """Whether the face goes where the project goes: bundled or in its font-dirs,
        not found in this machine's font directories."""
        return self.origin != "host"


def is_collection(path: Path) -> bool:
    return path.suffix.lower() in (".ttc", ".otc")


class FaceMeta(NamedTuple):
    family: str
    weight: int
    style: str
    legacy: str | None  # nameID 1 when it differs from the typographic family
    outlines: str = "glyf"  # or "CFF": found, named, never drawn


_META_CACHE: dict[tuple[str, int, int], list[tuple[int, FaceMeta]]] = {}


def _name_record(records: list[NameRecord], name_id: int) -> str | None:
    # Prefer Windows/Unicode English, then Mac Roman English, then any record.
    preferred = [next((r for r in records if r.name_id == name_id
                       and (r.platform, r.encoding, r.language) == key), None)
                 for key in ((3, 1, 0x409), (3, 0, 0x409), (1, 0, 0))]
    for rec in [*preferred, *(r for r in records if r.name_id == name_id)]:
        if rec is not None:
            text = (rec.text() or "").strip()
            if text:
                return text
    return None


def _read_meta(path: Path) -> FaceMeta | None:
    """Family, weight and style of a single-face TrueType-outline file; else None."""
    metas = _read_metas(path)
    if is_collection(path) or len(metas) != 1 or metas[0][1].outlines != "glyf":
        return None
    return metas[0][1]


def _read_metas(path: Path) -> list[tuple[int, FaceMeta]]:
    """``(index, meta)`` of each face in the file (one, or each of a collection's), CFF
    faces included; unreadable faces are left out."""
    found: list[tuple[int, FaceMeta]] = []
    try:
        with open_regular(path) as fh:
            head = fh.read(16)
            offsets = [0]
            if head[:4] == b"ttcf" and len(head) == 16:
                count = min(struct.unpack_from(">I", head, 8)[0], MAX_COLLECTION_FACES)
                raw = head[12:] + fh.read(4 * count - 4) if count else b""
                offsets = list(struct.unpack(f">{len(raw) // 4}I", raw[:len(raw) // 4 * 4]))
            for index, at in enumerate(offsets):
                try:
                    meta = _meta(read_sfnt(fh, at))
                except (SfntError, struct.error):
                    continue
                if meta is not None:
                    found.append((index, meta))
    except OSError:  # any unreadable file is simply not a candidate
        return []
    return found


def _meta(font: Sfnt) -> FaceMeta | None:
    outlines = "CFF" if font.version == b"OTTO" or "CFF " in font.tables else "glyf"
    if outlines == "glyf" and (font.version not in (b"\x00\x01\x00\x00", b"true") or not all(
            t in font.tables for t in ("glyf", "loca", "cmap", "head", "hmtx", "name"))):
        return None  # not a face ThorVG could draw, nor a CFF one to name
    if "name" not in font.tables:
        return None
    names = font.names()
    legacy = _name_record(names, 1)
    family = _name_record(names, 16) or legacy
    if not family:
        return None
    subfamily = (_name_record(names, 17) or _name_record(names, 2) or "").lower()
    weight, style = 0, ""
    os2 = font.weight_and_selection()
    if os2 is not None:
        weight, selection = os2
        if 1 <= weight <= 9:  # some old fonts use a 1-9 scale
            weight *= 100
        if selection & 0x200:
            style = "oblique"
        elif selection & 0x1:
            style = "italic"
    if not 1 <= weight <= 1000:
        weight = _weight_from_subfamily(subfamily)
    if not style:
        style = ("oblique" if "oblique" in subfamily
                 else "italic" if "italic" in subfamily else "normal")
    family = " ".join(family.split())
    legacy = " ".join(legacy.split()) if legacy else None
    return FaceMeta(family, min(900, max(100, weight)), style,
                    legacy if legacy and legacy.casefold() != family.casefold() else None,
                    outlines)


def _weight_from_subfamily(subfamily: str) -> int:
    for words, weight in ((("thin", "hairline"), 100), (("extralight", "ultralight"), 200),
                          (("light",), 300), (("medium",), 500), (("semibold", "demibold"), 600),
                          (("extrabold", "ultrabold"), 800), (("black", "heavy"), 900),
                          (("bold",), 700)):
        if any(w in subfamily.replace(" ", "").replace("-", "") for w in words):
            return weight
    return DEFAULT_WEIGHT


@lru_cache(maxsize=256)
def _x_height(path: str, mtime_ns: int, size: int, index: int = 0) -> float:
    try:
        with open_regular(Path(path)) as fh:
            found = read_face(fh, index).x_height()
    except (OSError, SfntError, struct.error):
        found = None
    return found if found is not None else EX_PER_EM


def face_x_height(face: Face) -> float:
    """1ex of ``face`` in em: its ``OS/2`` x-height, else CSS's fallback, 0.5
    (cached per file version)."""
    try:
        st = face.path.stat()
    except OSError:
        return EX_PER_EM
    return _x_height(str(face.path), st.st_mtime_ns, st.st_size, face.index)


def face_metas(path: Path) -> list[tuple[int, FaceMeta]]:
    """:func:`_read_metas`, cached per path + mtime + size (a changed file is read again)."""
    try:
        st = path.stat()
    except OSError:
        return []
    key = (str(path), st.st_mtime_ns, st.st_size)
    if key not in _META_CACHE:
        _META_CACHE[key] = _read_metas(path)
    return _META_CACHE[key]


def face_meta(path: Path) -> FaceMeta | None:
    """The meta of a single-face TrueType-outline file (cached), else None."""
    metas = face_metas(path)
    if is_collection(path) or len(metas) != 1 or metas[0][1].outlines != "glyf":
        return None
    return metas[0][1]


def font_files(root: Path) -> Iterator[Path]:
    """Font files under ``root``, recursively, in sorted relative-path order."""
    if not root.is_dir():
        return
    found: list[tuple[str, Path]] = []
    seen_dirs: set[str] = set()
    for dirpath, dirnames, filenames in os.walk(root, followlinks=True):
        real = os.path.realpath(dirpath)
        if real in seen_dirs:  # a symlink loop or a second link to the same directory
            dirnames[:] = []
            continue
        seen_dirs.add(real)
        for fn in filenames:
            if fn.lower().endswith(FONT_SUFFIXES) and not fn.startswith("."):
                p = Path(dirpath, fn)
                found.append((p.relative_to(root).as_posix(), p))
    found.sort(key=lambda item: (item[0].casefold(), item[0]))
    yield from (p for _, p in found)


def drawable_faces(directory: Path, seen: set[str]) -> list[tuple[Path, int, FaceMeta]]:
    """The faces under ``directory`` (CFF ones included, ``meta.outlines`` says), in file
    order, each real file once, by real path (links resolved: names, paths and identity
    follow the real file).

    ``seen`` holds the real paths taken by earlier directories; it is updated.
    """
    entries = []
    for path in font_files(directory):
        real = os.path.realpath(path)
        metas = face_metas(path)
        if real in seen or not metas:
            continue
        seen.add(real)
        entries += [(Path(real), index, meta) for index, meta in metas]
    return entries


def _safe_name(stem: str) -> str:
    return re.sub(r"[^A-Za-z0-9._-]+", "-", stem).strip("-.") or "face"


def unique_name(stem: str, taken: set[str]) -> str:
    """``stem`` made safe, with ``-2``, ``-3``... when an earlier face took it; records it."""
    name = _safe_name(stem)
    if name.casefold() in taken:
        n = 2
        while f"{name}-{n}".casefold() in taken:
            n += 1
        name = f"{name}-{n}"
    taken.add(name.casefold())
    return name


def _file_key(path: Path) -> tuple[str, int, int]:
    st = path.stat()
    return (str(path), st.st_mtime_ns, st.st_size)


@lru_cache(maxsize=32)
def _bytes_for(key: tuple[str, int, int]) -> bytes:
    return read_regular(key[0])


@lru_cache(maxsize=256)
def _digest_for(key: tuple[str, int, int]) -> str:
    return hashlib.sha256(_bytes_for(key)).hexdigest()


@lru_cache(maxsize=32)
def _drawn_for(key: tuple[str, int, int], index: int) -> bytes:
    return drawn_copy(_bytes_for(key), index)


def face_bytes(face: Face) -> bytes:
    """The bytes ThorVG is handed for ``face``: its drawn copy (:mod:`.drawn`; cached,
    made again if the file changed), checked (:func:`_checked`)."""
    return _checked(face, _drawn_for(_file_key(face.path), face.index))


def _checked(face: Face, copy: bytes) -> bytes:
    """``copy``, if it passes the check (cached per copy); the bundled faces are ours.
    The face was checked when it was resolved; this is the same verdict unless the
    file changed since, and then ThorVG is not handed what was not checked."""
    if face.origin != "bundled":
        from .sanitize import copy_problem

        problem = copy_problem(copy)
        if problem is not None:
            raise NanoframesError("face-rejected", f"face {face.path} ({face.family!r}) "
                                  f"is refused: {problem}", face.path)
    return copy


def face_digest(face: Face) -> str:
    """SHA-256 hex of the face file's bytes (cached per path + mtime + size)."""
    return _digest_for(_file_key(face.path))


def face_file(face: Face) -> tuple[bytes, str]:
    """The face's drawn copy and the SHA-256 hex of the face FILE, of one file version
    (both cached: a version already hashed is not hashed again)."""
    key = _file_key(face.path)
    return _checked(face, _drawn_for(key, face.index)), _digest_for(key)
