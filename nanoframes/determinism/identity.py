"""The four inputs a frame is a function of (docs/digest.md; README, "What a frame is a
function of").

Building blocks only: each function digests one component from plain values,
so the composition model can be wired to them without this module knowing it.
"""

from __future__ import annotations

import hashlib
import json
import os
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from typing import Any

from lxml import etree

from ..model.svg import TIMELINE_TYPE, local_name

NONE = "none"  # media / fonts when the composition has none

# The toolchain's parts, in the order a report names them.
TOOLCHAIN_PARTS = ("thorvg-python", "libthorvg", "nanoframes", "modules")
# The decoder's parts, only in the toolchain of a composition that draws video
# (a decoder draws its pixels): PyAV's version, libavcodec's and libswscale's bytes.
VIDEO_PARTS = ("pyav", "libavcodec", "libswscale")
ALL_PARTS = TOOLCHAIN_PARTS + VIDEO_PARTS
# Then one part per shared library libthorvg runs with, named by its soname
# (``libm.so.6``), and per preloaded object (``preload:NAME``): engine/linked.py.


def is_linked_part(name: str) -> bool:
    """Whether a toolchain part names a linked or preloaded shared library."""
    from ..engine.linked import PRELOAD

    bare = name[len(PRELOAD):] if name.startswith(PRELOAD) else name
    return ".so" in bare and name not in ALL_PARTS and "/" not in bare and bool(bare.strip())


def part_names(*parts: Mapping[str, str]) -> tuple[str, ...]:
    """The parts named in any of ``parts``, in report order: the fixed ones, then libraries."""
    present = {name for p in parts for name in p}
    return (tuple(n for n in ALL_PARTS if n in present)
            + tuple(sorted(n for n in present if n not in ALL_PARTS)))

# Read by lint only; they draw nothing, so editing them is not an edit.
CHECK_ONLY_ATTRIBUTES = frozenset({"data-safe-margin", "data-palette-budget"})

_PACKAGE_DIR = Path(__file__).resolve().parent.parent  # the nanoframes package


@dataclass(frozen=True)
class Identity:
    """Each component is a SHA-256 hex digest, or ``"none"`` for media and fonts."""

    source: str
    media: str
    fonts: str
    toolchain: str

    def as_dict(self) -> dict[str, str]:
        return {
            "source": self.source,
            "media": self.media,
            "fonts": self.fonts,
            "toolchain": self.toolchain,
        }


def _sha256_hex(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


def _is_hex64(value: str) -> bool:
    return len(value) == 64 and all(c in "0123456789abcdef" for c in value)


def _file_sha256(path: str | Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


# --- toolchain -------------------------------------------------------------


# Subdirectories of the package that hold data, not code: an editable install
# finds the bundled faces outside the package directory, a wheel inside it.
_DATA_DIRS = frozenset({"fonts"})


def module_files(directory: str | Path | None = None) -> list[tuple[str, Path]]:
    """``(relative POSIX path, path)`` of the package's modules, sorted.

    A module is a ``*.py`` file with an importable name in a regular package
    (a directory with ``__init__.py``) under this one: exactly what the build
    puts in a wheel, so the set is the same whichever way the package was
    installed. Editor leftovers (``.#film.py``, ``film-old.py``), directories
    that are not packages, ``__pycache__`` and compiled files, the data
    directories and what an installer puts beside the package (``__editable__``
    finders live in site-packages, not here) do not count.
    """
    base = Path(directory) if directory is not None else _PACKAGE_DIR
    files: list[tuple[str, Path]] = []
    for dirpath, dirnames, filenames in os.walk(base):
        top = Path(dirpath) == base
        dirnames[:] = [d for d in dirnames if d.isidentifier() and d != "__pycache__"
                       and not (top and d in _DATA_DIRS)
                       and Path(dirpath, d, "__init__.py").is_file()]
        for name in filenames:
            path = Path(dirpath, name)
            if name.endswith(".py") and name[:-3].isidentifier() and path.is_file():
                files.append((path.relative_to(base).as_posix(), path))
    return sorted(files)


def modules_digest(directory: str | Path | None = None) -> str:
    """SHA-256 over the package's modules (:func:`module_files`; default: this package).

    Only the ``nanoframes`` package counts: ``pytest_nanoframes`` reports
    verdicts and draws nothing. Each file contributes its relative POSIX path
    and its bytes' digest, so a rename moves the digest as well as an edit.
    """
    return modules_digest_of((rel, _file_sha256(path)) for rel, path in module_files(directory))


def modules_digest_of(files: Iterable[tuple[str, str]]) -> str:
    """The modules digest of ``(relative POSIX path, SHA-256 hex)`` pairs, in order."""
    h = hashlib.sha256()
    for rel, digest in files:
        h.update(rel.encode("utf-8") + b"\0" + digest.encode("ascii") + b"\n")
    return h.hexdigest()


@cache
def _toolchain_parts() -> tuple[tuple[str, str], ...]:
    from importlib.metadata import version

    from .. import __version__
    from ..engine.library import library_path, library_sha256  # bytes: nothing is loaded
    from ..engine.linked import linked_parts

    return (
        ("thorvg-python", version("thorvg-python")),
        ("libthorvg", library_sha256()),
        ("nanoframes", __version__),
        ("modules", modules_digest()),
        *linked_parts(library_path()).items(),
    )


def toolchain_parts(video: bool = False, *, load_engine: bool = True) -> dict[str, str]:
    """The toolchain's four parts and one per shared library libthorvg runs with
    (engine/linked.py), computed once per process (a fresh dict each call); with
    ``video``, the decoder's three parts too.

    ``load_engine`` loads ThorVG first, which checks its build: one that
    nanoframes cannot draw with is one error here, not later. The frame cache
    passes False: it keys frames before it knows whether any must be drawn
    (a warm render loads no renderer), and drawing loads and checks it anyway.
    """
    if load_engine:
        from ..engine.raster import engine_version

        engine_version()
    parts = dict(_toolchain_parts())
    if video:
        from ..bake.clips import decoder_parts

        parts.update(decoder_parts())
    return parts


def toolchain_digest(parts: Mapping[str, str]) -> str:
    """SHA-256 over the parts as canonical JSON (sorted keys, compact)."""
    return _sha256_hex(_canonical_json(dict(parts)).encode("utf-8"))


# --- source ----------------------------------------------------------------


def _canonical_json(value: Any) -> str:
    return json.dumps(value, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def _is_timeline(el: Any) -> bool:
    return local_name(el) == "script" and (el.get("type") or "").strip() == TIMELINE_TYPE


def _project(el: Any, in_text: bool) -> list[Any]:
    """One element as ``[clark tag, [[name, value], ...], [children]]``.

    Children are strings (character data) and nested lists (elements), with
    comments and processing instructions removed and the text around them
    joined, so ``a<!-- x -->b`` reads as ``ab``.
    """
    tag = el.tag
    attrs = sorted(
        [name, value] for name, value in el.attrib.items() if name not in CHECK_ONLY_ATTRIBUTES
    )
    # Whitespace between elements never draws, except inside <text>, where it
    # can be a space on the canvas: there it is kept verbatim (over-invalidates
    # a reindent of multi-line text rather than miss an edit that draws).
    in_text = in_text or local_name(el) == "text"
    content: list[Any] = []

    def add_text(text: str | None) -> None:
        if not text:
            return
        if content and isinstance(content[-1], str):
            content[-1] += text
        else:
            content.append(text)

    if _is_timeline(el):
        raw = el.text or ""
        try:
            add_text(_canonical_json(json.loads(raw)))
        except ValueError:
            add_text(raw.strip())
    else:
        add_text(el.text)

    for child in el:
        if isinstance(child.tag, str):
            content.append(_project(child, in_text))
        elif isinstance(child, etree._Entity):  # unresolved: reads as its "&name;" text
            add_text(child.text)
        add_text(child.tail)
    if not in_text:
        content = [c for c in content if not isinstance(c, str) or c.strip()]
    return [tag, attrs, content]


def canonical_source(root: Any) -> bytes:
    """The composition as the canonical projection docs/digest.md describes.

    ``root`` is an lxml element (or tree). The projection is compact JSON of
    nested ``[tag, sorted attributes, children]`` lists with namespace-qualified
    (Clark) names, so prefixes, attribute order, comments, indentation and the
    timeline's formatting do not move it; every character that can draw does.
    The root's own tail lies outside the document and is ignored.
    """
    if hasattr(root, "getroot"):
        root = root.getroot()
    return _canonical_json(_project(root, False)).encode("utf-8")


def source_digest(root: Any, extra: Sequence[tuple[str, str]] = ()) -> str:
    """SHA-256 of the canonical source plus sorted ``(name, digest)`` extras.

    ``extra`` carries nested compositions' source digests. Compact JSON has no
    raw newline, so a newline cleanly separates the extras from the projection.
    """
    return source_digest_of(canonical_source(root), extra)


def source_digest_of(canonical: bytes, extra: Sequence[tuple[str, str]] = ()) -> str:
    """``source_digest`` of a projection already made (kept in the store, inputs.py)."""
    h = hashlib.sha256(canonical)
    for name, digest in sorted(set(extra)):
        h.update(b"\n" + name.encode("utf-8") + b"\0" + digest.encode("utf-8"))
    return h.hexdigest()


# --- media and fonts -------------------------------------------------------


def _named_digests(pairs: Iterable[tuple[str, str]]) -> str:
    """``"none"`` when empty, else SHA-256 over sorted, de-duplicated name NUL hex lines."""
    unique = sorted(set(pairs))
    if not unique:
        return NONE
    h = hashlib.sha256()
    for name, digest in unique:
        if not _is_hex64(digest):
            raise ValueError(f"{name}: not a SHA-256 hex digest: {digest!r}")
        h.update(name.encode("utf-8") + b"\0" + digest.encode("ascii") + b"\n")
    return h.hexdigest()


def media_digest(items: Iterable[tuple[str, bytes | str]]) -> str:
    """Local images: ``(path relative to the composition, bytes or their SHA-256 hex)``."""
    return _named_digests(
        (name, _sha256_hex(data) if isinstance(data, (bytes, bytearray, memoryview)) else data)
        for name, data in items
    )


def fonts_digest(faces: Iterable[tuple[str, str]]) -> str:
    """Resolved faces: ``(face file basename, SHA-256 hex of the face's bytes)``."""
    return _named_digests(faces)
