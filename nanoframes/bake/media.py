"""Images a composition references: safe resolution, validation, ``data:`` URIs.

No file outside the project root is ever read: absolute paths, ``file:`` and
remote URLs, ``..`` escapes and symlinks that lead out are refused before any
byte is read. Nested compositions and SVG images (an href ending in ``.svg``) are handled
by :mod:`nanoframes.bake.nested`.

An image may also be inline (``href="data:image/png;base64,..."``): it is
validated exactly as a file is, and named by its position (the composition's
path plus ``#image-N``), since it has no path of its own. PNG, JPEG and a
still WebP go to ThorVG as they are (it decodes them); the first frame of a GIF
or an animated WebP, which ThorVG does not draw, is decoded here and handed over
as a PNG, and its identity is that frame's pixels (what draws). An SVG image is
a file drawn as a nested composition (``is_composition_href``).
"""

from __future__ import annotations

import base64
import binascii
import hashlib
import io
import re
import struct
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import NamedTuple
from urllib.parse import unquote_to_bytes

from ..errors import NanoframesError
from ..files import read_regular
from ..model.svg import is_composition_name

MAX_IMAGE_BYTES = 32 * 1024 * 1024
MAX_IMAGE_SIDE = 16_384
MAX_IMAGE_PIXELS = 64 * 1024 * 1024
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")
ACCEPTED = "PNG, JPEG, GIF or WebP (the first frame of an animated one)"
_DATA = re.compile(r"^data:([^,]*?)(;base64)?,", re.IGNORECASE | re.DOTALL)


@dataclass(frozen=True)
class Image:
    href: str            # as written, relative to the composition
    path: Path           # resolved, inside the project
    mime: str
    width: int
    height: int
    sha256: str
    data_uri: str


def resolve_reference(href: str, comp_dir: Path, project_root: Path, file: Path,
                      line: int | None = None) -> Path:
    """The file an href names, or an error if it is remote, absolute or outside the project."""
    if not href or not href.strip():
        raise NanoframesError("image-href", "empty href", file, line)
    if href.startswith("data:"):  # load_image decodes these; nothing to resolve
        raise NanoframesError("image-href", "an inline data: image has no file", file, line)
    if _SCHEME.match(href) or href.startswith("//"):
        raise NanoframesError("image-outside", f"{href!r} is a URL; only files inside the "
                              "project can be referenced", file, line)
    if href.startswith(("/", "\\")) or PurePosixPath(href).is_absolute() \
            or re.match(r"^[A-Za-z]:[\\/]", href):
        raise NanoframesError("image-outside", f"{href!r} is an absolute path; use a path "
                              "relative to the composition", file, line)
    root = project_root.resolve()
    try:
        target = (comp_dir / href).resolve()  # follows symlinks: a link out is caught below
        target.relative_to(root)
        found = target.is_file()
    except ValueError:
        raise NanoframesError("image-outside", f"{href!r} resolves outside the project "
                              f"({root})", file, line) from None
    except (OSError, RuntimeError) as exc:  # a name too long, a symlink loop
        reason = getattr(exc, "strerror", None) or str(exc).split(" from ")[0]
        raise NanoframesError("image-missing", f"{href[:100]!r} cannot be resolved "
                              f"({reason})", file, line) from None
    if not found:
        what = "is not a regular file" if target.exists() else "not found"  # a FIFO, a device
        raise NanoframesError("image-missing", f"{href!r} {what}", file, line)
    return target


def _png_size(data: bytes) -> tuple[int, int] | None:
    if len(data) >= 24 and data.startswith(PNG_MAGIC) and data[12:16] == b"IHDR":
        return struct.unpack(">II", data[16:24])
    return None


def _jpeg_size(data: bytes) -> tuple[int, int] | None:
    i = 2
    while i + 9 < len(data):
        if data[i] != 0xFF:
            return None
        marker = data[i + 1]
        if marker in (0xD8, 0x01) or 0xD0 <= marker <= 0xD7:
            i += 2
            continue
        seg = struct.unpack(">H", data[i + 2:i + 4])[0]
        if 0xC0 <= marker <= 0xCF and marker not in (0xC4, 0xC8, 0xCC):
            h, w = struct.unpack(">HH", data[i + 5:i + 9])
            return w, h
        i += 2 + seg
    return None


class _Problem(NamedTuple):
    """Why a file is not a usable image; ``message`` has a ``{href}`` slot."""

    code: str
    message: str


def _decode_problem(data: bytes) -> str | None:
    from PIL import Image as PILImage

    try:
        with PILImage.open(io.BytesIO(data)) as im:
            im.verify()
    except Exception as exc:  # noqa: BLE001 - Pillow raises many types for broken files
        return re.sub(r"\s*<[^<>]* at 0x[0-9a-fA-F]+>", "", str(exc))  # no addresses
    return None


@lru_cache(maxsize=64)
def _examine(path: Path, mtime_ns: int, size: int) -> Image | _Problem:
    """Read, validate and encode one file version, once per process. The result is
    shared by every reference to the file, so 10,000 references hold one copy."""
    if size > MAX_IMAGE_BYTES:
        return _Problem("image-too-large", f"{{href}} is {size} bytes; the limit is "
                        f"{MAX_IMAGE_BYTES}")
    return _validate(read_regular(path), path)


def _validate(data: bytes, path: Path) -> Image | _Problem:
    """One image's bytes checked against the limits and decoded once (Pillow), as
    the Image ThorVG is handed (``href`` is filled in by the caller)."""
    if data.startswith(PNG_MAGIC):
        mime, dims = "image/png", _png_size(data)
    elif data.startswith(b"\xff\xd8"):
        mime, dims = "image/jpeg", _jpeg_size(data)
    elif data.startswith((b"GIF87a", b"GIF89a")):
        mime, dims = "image/gif", _gif_size(data)
    elif data[:4] == b"RIFF" and data[8:12] == b"WEBP":
        mime, dims = "image/webp", _pillow_size(data)
    else:
        what = "an SVG document" if _looks_like_svg(data) else "in no format nanoframes reads"
        return _Problem("image-invalid", f"{{href}} is {what}; images must be {ACCEPTED}"
                        + (", and an SVG image a .svg file in the project"
                           if what.startswith("an SVG") else ""))
    if dims is None:
        return _Problem("image-invalid", "{href} has no readable size")
    w, h = dims
    if w == 0 or h == 0:
        return _Problem("image-invalid", f"{{href}} declares an empty {w}x{h} image")
    if not (w <= MAX_IMAGE_SIDE and h <= MAX_IMAGE_SIDE) or w * h > MAX_IMAGE_PIXELS:
        return _Problem("image-too-large", f"{{href}} declares {w}x{h} pixels; the limit "
                        f"is {MAX_IMAGE_SIDE} a side and {MAX_IMAGE_PIXELS} in all")
    detail = _decode_problem(data)
    if detail is not None:
        return _Problem("image-invalid", f"{{href}} is not a readable image ({detail})")
    digest = hashlib.sha256(data).hexdigest()
    if mime == "image/gif" or _animated_webp(data):  # ThorVG draws neither: frame 1 as PNG
        data, digest = _first_frame_png(data)
        mime = "image/png"
    uri = f"data:{mime};base64," + base64.b64encode(data).decode("ascii")
    return Image("", path, mime, w, h, digest, uri)


def _gif_size(data: bytes) -> tuple[int, int] | None:
    return struct.unpack("<HH", data[6:10]) if len(data) >= 10 else None


def _pillow_size(data: bytes) -> tuple[int, int] | None:
    from PIL import Image as PILImage

    try:
        with PILImage.open(io.BytesIO(data)) as im:
            return im.size
    except Exception:  # noqa: BLE001 - Pillow raises many types for broken files
        return None


def _animated_webp(data: bytes) -> bool:
    """An extended WebP with its animation flag: ThorVG's loader draws nothing for it
    (a still WebP it draws itself)."""
    return data[:4] == b"RIFF" and data[12:16] == b"VP8X" and len(data) > 20 \
        and bool(data[20] & 0x02)


def _looks_like_svg(data: bytes) -> bool:
    head = data[:1024].lstrip(b"\xef\xbb\xbf \t\r\n").lower()
    return head.startswith((b"<?xml", b"<svg", b"<!--")) and b"<svg" in data[:4096].lower()


def _first_frame_png(data: bytes) -> tuple[bytes, str]:
    """The first frame as straight RGBA in a PNG, and the SHA-256 of exactly those
    pixels (with the size): the identity of what draws, whoever decoded it."""
    from PIL import Image as PILImage

    with PILImage.open(io.BytesIO(data)) as im:
        im.seek(0)
        rgba = im.convert("RGBA")
    pixels = rgba.tobytes()
    out = io.BytesIO()
    rgba.save(out, format="PNG", compress_level=6)
    h = hashlib.sha256(b"rgba\0%d\0%d\0" % rgba.size)
    h.update(pixels)
    return out.getvalue(), h.hexdigest()


def load_image(href: str, comp_dir: Path, project_root: Path, file: Path,
               line: int | None = None, position: int = 1) -> Image:
    """Resolve, read (once per process per file version) and validate an image; a
    ``data:`` image is decoded and named as the composition's ``position``-th one."""
    if href.startswith("data:"):
        found = _inline(href, Path(file).with_name(f"{Path(file).name}#image-{position}"))
        if isinstance(found, _Problem):
            shown = f"the inline image at position {position}"
            raise NanoframesError(found.code, found.message.format(href=shown), file, line)
        return replace(found, href=f"#image-{position}")
    path = resolve_reference(href, comp_dir, project_root, file, line)
    try:
        st = path.stat()
        found = _examine(path, st.st_mtime_ns, st.st_size)
    except OSError as exc:  # unreadable (permissions), or gone since it was resolved
        raise NanoframesError("image-invalid", f"{href!r} cannot be read ({exc.strerror})",
                              file, line) from None
    if isinstance(found, _Problem):
        raise NanoframesError(found.code, found.message.format(href=repr(href)), file, line)
    return replace(found, href=href)  # the data URI string itself is shared


def _inline(href: str, name: Path) -> Image | _Problem:
    """A ``data:`` URI's bytes (base64 or percent-encoded), validated like a file's."""
    m = _DATA.match(href)
    if m is None:
        return _Problem("image-invalid", "{href} is not a data: URI (data:TYPE;base64,...)")
    body = href[m.end():]
    if m.group(2):
        packed = re.sub(r"\s+", "", body)  # exporters wrap base64 over lines
        if len(packed) * 3 // 4 > MAX_IMAGE_BYTES:
            return _Problem("image-too-large", f"{{href}} decodes to over {MAX_IMAGE_BYTES} "
                            "bytes (the limit)")
        try:
            data = base64.b64decode(packed + "=" * (-len(packed) % 4), validate=True)
        except (binascii.Error, ValueError):
            return _Problem("image-invalid", "{href} is not valid base64")
    else:
        data = unquote_to_bytes(body)
    if len(data) > MAX_IMAGE_BYTES:
        return _Problem("image-too-large", f"{{href}} is {len(data)} bytes; the limit is "
                        f"{MAX_IMAGE_BYTES}")
    return _validate(data, name)


def is_composition_href(href: str | None) -> bool:
    """A nested composition, or an SVG image (``.svg``): both are drawn through the
    same pipeline as the composition itself (bake/nested.py), never by ThorVG's own
    image loader."""
    if not href or href.startswith("data:"):
        return False
    name = href.split("?", 1)[0].split("#", 1)[0]
    return is_composition_name(name) or name.lower().endswith(".svg")
