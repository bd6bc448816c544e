"""Images a composition references: safe resolution, validation, ``data:`` URIs.

No file outside the project root is ever read: absolute paths, ``file:`` and
remote URLs, ``..`` escapes and symlinks that lead out are refused before any
byte is read. Nested compositions (an href ending in ``.nf.svg``) are handled
by :mod:`nanoframes.bake.nested`.
"""

from __future__ import annotations

import base64
import hashlib
import re
import struct
from dataclasses import dataclass, replace
from functools import lru_cache
from pathlib import Path, PurePosixPath
from typing import NamedTuple

from ..errors import NanoframesError
from ..files import read_regular
from ..model.svg import is_composition_name

MAX_IMAGE_BYTES = 32 * 1024 * 1024
MAX_IMAGE_SIDE = 16_384
MAX_IMAGE_PIXELS = 64 * 1024 * 1024
PNG_MAGIC = b"\x89PNG\r\n\x1a\n"
_SCHEME = re.compile(r"^[A-Za-z][A-Za-z0-9+.-]*:")


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
    if href.startswith("data:"):
        raise NanoframesError("image-href", "inline data: images are not supported; reference "
                              "a file in the project", file, line)
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
    import io

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
    data = read_regular(path)
    if data.startswith(PNG_MAGIC):
        mime, dims = "image/png", _png_size(data)
    elif data.startswith(b"\xff\xd8"):
        mime, dims = "image/jpeg", _jpeg_size(data)
    else:
        return _Problem("image-invalid", "{href} is neither PNG nor JPEG")
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
    uri = f"data:{mime};base64," + base64.b64encode(data).decode("ascii")
    return Image("", path, mime, w, h, hashlib.sha256(data).hexdigest(), uri)


def load_image(href: str, comp_dir: Path, project_root: Path, file: Path,
               line: int | None = None) -> Image:
    """Resolve, read (once per process per file version) and validate an image."""
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


def is_composition_href(href: str | None) -> bool:
    return bool(href) and is_composition_name(href.split("?", 1)[0].split("#", 1)[0])
