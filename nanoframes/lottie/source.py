"""A Lottie film source: one animation read, checked, resolved and made canonical.

``LottieSource`` is the only place nanoframes reads Lottie JSON. Its ``document``
is exactly what ThorVG is handed; its identity names everything that decides a
frame (docs/lottie.md): ``source`` is the canonical projection with each image
replaced by its digest (so a ``.json`` beside its images and the same animation
inside a ``.lottie`` are one source), ``media`` the images, ``fonts`` the faces
registered for text drawn without the file's own glyphs.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass, field
from pathlib import Path

from ..errors import NanoframesError
from ..files import open_regular
from . import archive, assets, checks, jsontext
from .jsontext import Number

MAX_LOTTIE_BYTES = 64 * 1024 * 1024  # the file (.json with inline images, or .lottie)
SUFFIXES = (".json", ".lottie")
NONE = "none"


def is_lottie_name(path: str | Path) -> bool:
    """Whether a file name is one Lottie films are read from (``*.json``, ``*.lottie``)."""
    return str(path).lower().endswith(SUFFIXES)


def _named_digest(pairs) -> str:
    """``none`` when empty, else SHA-256 over sorted ``name NUL hex`` lines (the scheme
    of a composition's media and fonts parts)."""
    unique = sorted(set(pairs))
    if not unique:
        return NONE
    h = hashlib.sha256()
    for name, digest in unique:
        h.update(name.encode("utf-8") + b"\0" + digest.encode("ascii") + b"\n")
    return h.hexdigest()


@dataclass(frozen=True)
class LottieSource:
    path: Path
    width: int
    height: int
    fps: float
    frame_count: int
    markers: dict[str, tuple[int, int]]  # name -> film frames [start, end) of the whole film
    document: bytes
    marker: str | None = None
    offset: int = 0  # ThorVG frame of film frame 0 (a marker's start)
    expressions: bool = False
    faces: tuple[assets.FaceUse, ...] = ()
    images: tuple[tuple[str, str, Path | None], ...] = ()
    file_sha256: str = ""
    projection_sha256: str = ""
    skipped_markers: dict[str, str] = field(default_factory=dict)  # name -> why not a film

    def __hash__(self) -> int:  # the markers dict aside: a source names one film
        return hash((str(self.path), self.projection_sha256, self.identity_parts()["media"],
                     self.marker, self.offset, self.frame_count))

    # -- frames -------------------------------------------------------------------

    def frame_number(self, index: int) -> float:
        """ThorVG's frame (relative to ``ip``) for film frame ``index``."""
        if not 0 <= index < self.frame_count:
            raise NanoframesError("frame-range", f"frame {index} is outside the film's "
                                  f"{self.frame_count} frames", self.path)
        return float(self.offset + index)

    def scene(self, index: int) -> bytes:
        """What ThorVG is handed for film frame ``index``: the document and the frame."""
        return self.document + b"\n#frame=%r\n" % self.frame_number(index)

    def seed(self, index: int) -> bytes:
        """The bytes libc's random state is seeded from for ``index`` (the film's source
        identity and the frame): the same frame draws the same ``random()`` anywhere."""
        return hashlib.sha256(b"nanoframes-lottie-seed\0" + self.projection_sha256.encode()
                              + b"\0%r" % self.frame_number(index)).digest()

    # -- identity -----------------------------------------------------------------

    def projection(self) -> bytes:
        """The canonical projection ``source`` is the SHA-256 of: the document with
        each image's data left out (rebuilt from the document)."""
        made = jsontext.canonical(_projected(jsontext.parse(self.document, self.path)))
        if hashlib.sha256(made).hexdigest() != self.projection_sha256:  # pragma: no cover
            raise NanoframesError("render-failed", "the source projection does not rebuild "
                                  "from the document", self.path)
        return made

    def identity_parts(self) -> dict[str, str]:
        return {"source": self.projection_sha256,
                "media": _named_digest((name, sha) for name, sha in self.media_items()),
                "fonts": _named_digest(self.font_items())}

    def media_items(self) -> list[tuple[str, str]]:
        """(asset id, SHA-256 of what draws) of each image asset."""
        return [(name, sha) for name, sha, _ in self.images]

    def font_items(self) -> list[tuple[str, str]]:
        """(face file name, SHA-256) of each face registered for the film's text."""
        return [(face.path.name, face.sha256) for face in self.faces]

    def face_files(self) -> list[tuple[str, bytes]]:
        """(registered name, bytes) of each face the player must register first."""
        from ..text.faces import face_file

        out = []
        for face in self.faces:
            data, digest = face_file(face.face)  # the checked drawn copy, as for <text>
            if digest != face.sha256:
                raise NanoframesError("input-changed", f"face {face.path.name} changed "
                                      "while the film was drawn", self.path)
            out.append((face.name, data))
        return out

    def inputs(self) -> tuple[tuple[str, str, str], ...]:
        """``(kind, file, SHA-256)`` of every file read (as ``Baker.inputs()``)."""
        items = {("source", str(self.path), self.file_sha256)}
        items.update(("media", str(p), sha) for _, sha, p in self.images if p is not None)
        items.update(("font", str(face.path), face.sha256) for face in self.faces)
        return tuple(sorted(items))


def _read(path: Path) -> bytes:
    try:
        with open_regular(path) as fh:
            data = fh.read(MAX_LOTTIE_BYTES + 1)
    except OSError as exc:
        raise NanoframesError("lottie-unreadable", f"cannot read ({exc.strerror or exc})",
                              path) from None
    if len(data) > MAX_LOTTIE_BYTES:
        raise NanoframesError("lottie-too-large", f"over {MAX_LOTTIE_BYTES} bytes", path)
    return data


def open_lottie(path: Path, project_root: Path | None = None, *,
                marker: str | None = None) -> LottieSource:
    """Read ``path`` (``.json`` or ``.lottie``) as a film (of ``marker``'s range where given)."""
    path = Path(path)
    if project_root is None:
        from ..config import find_project_root

        project_root = find_project_root(path)
    return _build(_read(path), path, Path(project_root), marker)


def lottie_from_bytes(data: bytes, name: str = "<bytes>", project_root: Path | None = None,
                      *, marker: str | None = None) -> LottieSource:
    """A film from bytes (JSON or a dotLottie archive); images by path need a
    ``project_root`` (they resolve from its directory)."""
    if len(data) > MAX_LOTTIE_BYTES:
        raise NanoframesError("lottie-too-large", f"over {MAX_LOTTIE_BYTES} bytes", name)
    root = Path(project_root) if project_root is not None else None
    path = (root / name) if root is not None and not name.startswith("<") else Path(name)
    return _build(bytes(data), path, root, marker)


def _build(data: bytes, path: Path, project_root: Path | None, marker: str | None):
    file_sha = hashlib.sha256(data).hexdigest()
    members = None
    if data[:4] == b"PK\x03\x04" or path.suffix.lower() == ".lottie":
        data, members = archive.unpack(data, path)
    tree = jsontext.parse(data, path)
    if not checks.is_lottie_tree(tree):
        raise NanoframesError("lottie-not-lottie", "is JSON but not a Lottie animation (it "
                              "needs w, h, fr, ip, op and layers)", path)
    width, height = checks.check_canvas(tree, path)
    timing = checks.check_timing(tree, path)
    checks.check_structure(tree, path)
    assets.check_embedded_fonts(tree, path)
    images = assets.inline_images(tree, path, project_root or Path("/nonexistent-root"),
                                  members, _image_loader)
    faces = assets.resolve_faces(tree, path, *_book(project_root))
    document = jsontext.canonical(tree)
    projection = hashlib.sha256(jsontext.canonical(_projected(tree))).hexdigest()
    markers, skipped = _markers(tree, timing)
    offset, count = 0, timing.frame_count
    if marker is not None:
        if marker not in markers:
            why = skipped.get(marker, "no marker of that name")
            raise NanoframesError("lottie-marker", f"marker {marker[:60]!r}: {why}", path)
        offset, end = markers[marker]
        count = end - offset
    return LottieSource(path, width, height, timing.fps, count, markers, document, marker,
                        offset, b'"x":"' in document, tuple(faces), tuple(images), file_sha,
                        projection, skipped)


def _image_loader(*args):
    from ..bake.media import load_image

    return load_image(*args)


def _book(project_root: Path | None):
    """The project's font book, and whether a refused face may fall back."""
    from ..config import load_config
    from ..text.fonts import fallback_allowed, font_book

    config = load_config(project_root) if project_root is not None else None
    return font_book(config), fallback_allowed(config)


def _projected(tree: dict, images=None) -> dict:
    """``tree`` with each inlined image's data left out (its bytes are ``media``)."""
    if "assets" not in tree:
        return tree
    out = dict(tree)
    out["assets"] = [{**a, "p": "(media)"} if assets.is_image_asset(a) else a
                     for a in tree.get("assets") or []]
    return out


def _markers(tree: dict, timing: checks.Timing):
    """Markers as film frame ranges ``[start, end)``: the frames ``i`` with
    ``tm <= ip + i < tm + dr`` (``i`` over the whole film; the same thousandth of a
    frame forgiven as for ``op``). Markers that give no
    frames, or a name given twice, are kept out (``skipped``, with the reason)."""
    found: dict[str, tuple[int, int]] = {}
    skipped: dict[str, str] = {}
    for item in tree.get("markers") or []:
        if not isinstance(item, dict) or not isinstance(item.get("cm"), str):
            continue
        name = str(item["cm"])
        tm, dr = jsontext.number(item.get("tm")), jsontext.number(item.get("dr", Number("0")))
        if tm is None or dr is None or dr <= 0:
            skipped[name] = "its duration dr is not a positive number"
            continue
        start = max(0, checks.frames_below(tm - timing.ip))
        end = min(timing.frame_count, checks.frames_below(tm + dr - timing.ip))
        if name in found or name in skipped:
            skipped[name] = "the name is given to two markers"
            found.pop(name, None)
        elif end <= start:
            skipped[name] = "its range holds no frame of the film"
        else:
            found[name] = (start, end)
    return found, skipped
