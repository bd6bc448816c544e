"""A Lottie animation's images and faces: resolved by nanoframes, never by ThorVG.

Images: ThorVG opens whatever path an asset names (``..`` and absolute paths
included) and draws a missing one as nothing. Here every image asset is resolved
under nanoframes' image sandbox (``bake.media``: inside the project root, no
absolute path, no URL, no escape through a symlink), validated and hashed, and
rewritten as an inline ``data:`` URI (``"e": 1``), so ThorVG never opens a file.

Faces: a text layer whose font has no glyph outlines in the file draws with a
registered face, else with whichever face the process registered first. So each
such font is resolved here over the project's faces (``text.fonts``, by
``fFamily`` and ``fStyle``), and both the font entry and the text that uses it
are renamed to the face's registered name, which the player registers before it
draws. A face embedded in the file (``fPath`` ``data:font/...``) is refused:
ThorVG registers it process-wide without a copy (a later film drew with it, and
crashed once its animation was freed).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..errors import NanoframesError
from .jsontext import Number, number

# archive member name -> bytes (a .lottie's images), or None: files in the project
Members = dict[str, bytes] | None


@dataclass(frozen=True)
class FaceUse:
    name: str     # the name registered with ThorVG (the face's nanoframes name)
    family: str   # the Lottie fFamily asked for
    path: Path
    sha256: str   # of the face FILE (the fonts identity)
    # the resolved text.fonts.Face: ThorVG is handed its checked drawn copy, the bytes
    # a composition's text registers under the same name (text/faces.py face_file)
    face: object = field(default=None, compare=False, repr=False)


def image_ident(asset: dict, position: int) -> str:
    """An image asset's name in ``media``: its ``id``, else ``#N`` (1-based position)."""
    return str(asset["id"]) if "id" in asset else f"#{position}"


def is_image_asset(asset: object) -> bool:
    return isinstance(asset, dict) and _is_image_asset(asset)


def _is_image_asset(asset: dict) -> bool:
    return "layers" not in asset and isinstance(asset.get("p"), str) \
        and not isinstance(asset.get("p"), Number)


def inline_images(tree: dict, file: Path, project_root: Path, members: Members,
                  loader: Callable) -> list[tuple[str, str, Path | None]]:
    """Rewrite every image asset of ``tree`` in place as an inline ``data:`` image.
    Returns ``(asset id, sha256, file read or None)`` per image. ``loader`` is
    ``bake.media.load_image``."""
    found = []
    for position, asset in enumerate(tree.get("assets") or [], 1):
        if not isinstance(asset, dict) or not _is_image_asset(asset):
            continue
        folder = asset.get("u") if isinstance(asset.get("u"), str) else ""
        name = asset["p"]
        ident = image_ident(asset, position)
        if name.startswith("data:"):
            image = loader(name, file.parent, project_root, file, None, position)
            read = None
        elif members is not None:
            image, read = _from_archive(folder, name, members, file, loader, position), None
        else:
            href = name if not folder or name.startswith(("/", "\\")) or ":" in name \
                else folder.rstrip("/") + "/" + name
            image = loader(href, file.parent, project_root, file, None, position)
            read = image.path
        asset["u"], asset["p"], asset["e"] = "", image.data_uri, Number("1")
        found.append((ident, image.sha256, read))
    return found


def _from_archive(folder: str, name: str, members: dict[str, bytes], file: Path, loader,
                  position: int):
    """An image of a .lottie archive, by its path inside the archive (``/images/x.png``
    and ``images/x.png`` are the same member); a bare name (``"u": ""``, as dotLottie
    exporters write) is looked up in ``images/`` (dotLottie 2: ``i/``)."""
    import base64

    joined = PurePosixPath(folder.lstrip("/")) / name if folder else PurePosixPath(name)
    parts = [p for p in joined.parts if p not in ("", ".")]
    if name.startswith(("/", "\\")) or ":" in name or ".." in parts or "\\" in name:
        raise NanoframesError("image-outside", f"{name[:80]!r} does not name a file inside "
                              "the archive", file)
    key = "/".join(parts)
    data = members.get(key)
    if data is None and len(parts) == 1:
        key = next((f"{d}{key}" for d in ("images/", "i/") if f"{d}{key}" in members), key)
        data = members.get(key)
    if data is None:
        raise NanoframesError("image-missing", f"{key[:80]!r} is not in the archive", file)
    uri = "data:application/octet-stream;base64," + base64.b64encode(data).decode("ascii")
    return loader(uri, file.parent, file.parent, file, None, position)


def check_embedded_fonts(tree: dict, file: Path) -> None:
    for font in _font_list(tree):
        path = font.get("fPath")
        if isinstance(path, str) and path.strip().lower().startswith("data:"):
            raise NanoframesError("lottie-font", f"font {str(font.get('fName'))[:40]!r} embeds "
                                  "its face (fPath data:): embedded faces are refused; put the "
                                  "face file in the project's font-dirs", file)


def _font_list(tree: dict) -> list[dict]:
    fonts = tree.get("fonts")
    items = fonts.get("list") if isinstance(fonts, dict) else None
    return [f for f in items or [] if isinstance(f, dict)]


def _text_docs(tree: dict):
    """Every text document (``t.d.k[].s``) of every text layer."""
    stack: list = [tree.get("layers")]
    stack.extend(a.get("layers") for a in tree.get("assets") or [] if isinstance(a, dict))
    while stack:
        layers = stack.pop()
        for layer in layers if isinstance(layers, list) else []:
            text = layer.get("t") if isinstance(layer, dict) else None
            data = text.get("d") if isinstance(text, dict) else None
            keys = data.get("k") if isinstance(data, dict) else None
            for key in keys if isinstance(keys, list) else []:
                doc = key.get("s") if isinstance(key, dict) else None
                if isinstance(doc, dict):
                    yield doc


def _weight(style: str) -> tuple[int, str]:
    words = style.lower()
    weight = 700 if "bold" in words else 300 if "light" in words else 900 if "black" in words \
        else 500 if "medium" in words else 400
    return weight, "italic" if "italic" in words or "oblique" in words else "normal"


def resolve_faces(tree: dict, file: Path, book, allow_fallback: bool = False
                  ) -> list[FaceUse]:
    """Give every font a text layer draws without glyphs a face of ``book`` (a
    ``text.fonts.FontBook``), renaming it in place; the faces used, in order. A
    refused face the project provides refuses the film, as for a composition's text
    (``text.fonts.enforce``), unless ``allow_fallback``."""
    from ..text.faces import face_digest
    from ..text.fonts import enforce

    fonts = _font_list(tree)
    for font in fonts:
        font.pop("fPath", None)  # never read: ThorVG's C API has no font resolver
    glyph_families = {(str(c.get("fFamily")), str(c.get("style")))
                      for c in tree.get("chars") or [] if isinstance(c, dict)}
    by_name = {str(f.get("fName")): f for f in fonts}
    renamed: dict[str, str] = {}
    used: dict[str, FaceUse] = {}
    for doc in _text_docs(tree):
        asked = doc.get("f")
        if not isinstance(asked, str):
            continue
        font = by_name.get(asked)
        origin = number(font.get("origin")) if font else None
        family = str(font.get("fFamily", asked)) if font else asked
        style = str(font.get("fStyle", "")) if font else ""
        if font is not None and (origin in (None, 0.0)) and (family, style) in glyph_families:
            continue  # drawn from the file's own glyph outlines
        if asked not in renamed:
            weight, slant = _weight(style)
            res = book.resolve(family, weight, slant)
            if res.refused:  # never silently another face
                enforce(res, file, allow_fallback)
            face = res.face
            renamed[asked] = face.name
            used.setdefault(face.name, FaceUse(face.name, family, face.path,
                                               face_digest(face), face))
        doc["f"] = renamed[asked]
    for asked, name in renamed.items():
        if asked in by_name:
            by_name[asked]["fName"] = name
        else:  # a text naming a font the list lacks: give ThorVG the entry it looks up
            tree.setdefault("fonts", {}).setdefault("list", []).append(
                {"fName": name, "fFamily": asked, "fStyle": "Regular",
                 "ascent": Number("75")})
    return list(used.values())
