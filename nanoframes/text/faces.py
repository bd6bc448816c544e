"""Candidate face files: where they are, what their name tables say, their bytes.

The discovery half of font handling (:mod:`nanoframes.text.fonts` resolves
``font-family`` lists over what is found here). Only files ThorVG 1.0.4 can
draw are candidates: single-face sfnt files with TrueType (``glyf``) outlines,
named ``*.ttf`` or ``*.otf``. CFF outlines and ``.ttc`` collections are refused
by its loader (NOT_SUPPORTED), so they are skipped. Variable TrueType fonts are
kept: ThorVG draws their default instance, which is what their ``OS/2`` weight
describes.

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

from ..files import open_regular, read_regular
from .sfnt import NameRecord, Sfnt, SfntError, read_sfnt
from .style import DEFAULT_WEIGHT, EX_PER_EM

FONT_SUFFIXES = (".ttf", ".otf")
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

    @property
    def travels(self) -> bool:
        """Whether the face goes where the project goes: bundled or in its font-dirs,
        not found in this machine's font directories."""
        return self.origin != "host"


class FaceMeta(NamedTuple):
    family: str
    weight: int
    style: str
    legacy: str | None  # nameID 1 when it differs from the typographic family


_META_CACHE: dict[tuple[str, int, int], FaceMeta | None] = {}


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
    """Family, weight and style from the name/OS-2 tables; None if ThorVG can't draw it."""
    try:
        with open_regular(path) as fh:
            return _meta(read_sfnt(fh))
    except (OSError, SfntError, struct.error):  # any unreadable file is simply not a candidate
        return None


def _meta(font: Sfnt) -> FaceMeta | None:
    if font.version not in (b"\x00\x01\x00\x00", b"true"):
        return None  # CFF ('OTTO'), collections ('ttcf'), non-fonts
    if not all(t in font.tables for t in ("glyf", "loca", "cmap", "head", "hmtx", "name")):
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
                    legacy if legacy and legacy.casefold() != family.casefold() else None)


def _weight_from_subfamily(subfamily: str) -> int:
    for words, weight in ((("thin", "hairline"), 100), (("extralight", "ultralight"), 200),
                          (("light",), 300), (("medium",), 500), (("semibold", "demibold"), 600),
                          (("extrabold", "ultrabold"), 800), (("black", "heavy"), 900),
                          (("bold",), 700)):
        if any(w in subfamily.replace(" ", "").replace("-", "") for w in words):
            return weight
    return DEFAULT_WEIGHT


@lru_cache(maxsize=256)
def _x_height(path: str, mtime_ns: int, size: int) -> float:
    try:
        with open_regular(Path(path)) as fh:
            found = read_sfnt(fh).x_height()
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
    return _x_height(str(face.path), st.st_mtime_ns, st.st_size)


def face_meta(path: Path) -> FaceMeta | None:
    """Cached per path + mtime + size, so a changed file is read again."""
    try:
        st = path.stat()
    except OSError:
        return None
    key = (str(path), st.st_mtime_ns, st.st_size)
    if key not in _META_CACHE:
        _META_CACHE[key] = _read_meta(path)
    return _META_CACHE[key]


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


def drawable_faces(directory: Path, seen: set[str]) -> list[tuple[Path, FaceMeta]]:
    """The drawable face files under ``directory``, in file order, each real file once,
    by real path (links resolved: names, paths and identity follow the real file).

    ``seen`` holds the real paths taken by earlier directories; it is updated.
    """
    entries = []
    for path in font_files(directory):
        real = os.path.realpath(path)
        meta = face_meta(path)
        if real in seen or meta is None:
            continue
        seen.add(real)
        entries.append((Path(real), meta))
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


def face_bytes(face: Face) -> bytes:
    """The face file's bytes (cached; re-read if the file changed)."""
    return _bytes_for(_file_key(face.path))


def face_digest(face: Face) -> str:
    """SHA-256 hex of the face file's bytes (cached per path + mtime + size)."""
    return _digest_for(_file_key(face.path))


def face_file(face: Face) -> tuple[bytes, str]:
    """The face file's bytes and their SHA-256 hex, of one file version (both cached:
    a version already hashed is not hashed again)."""
    key = _file_key(face.path)
    return _bytes_for(key), _digest_for(key)
