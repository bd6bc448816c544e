"""A dotLottie archive (``.lottie``): a zip of ``manifest.json``, ``animations/*.json``
and ``images/`` (dotLottie 2: ``a/*.json`` and ``i/``), unpacked in memory with
bounds: member count, each member's and the total unpacked size (read, not
trusted from the headers), and names that stay inside the archive. ThorVG 1.0.4
reads no archives: nanoframes hands it the animation's JSON with the archive's
images inlined, the same document a project with the same JSON and image files
gives.
"""

from __future__ import annotations

import io
import json
import zipfile
from pathlib import Path, PurePosixPath

from ..errors import NanoframesError

MAX_MEMBERS = 1_000
MAX_MEMBER_BYTES = 32 * 1024 * 1024
MAX_TOTAL_BYTES = 128 * 1024 * 1024
_CHUNK = 1 << 16
ANIMATION_FOLDERS = ("animations/", "a/")  # dotLottie 1 and 2
IMAGE_FOLDERS = ("images/", "i/")


def _member_name(name: str, file: Path) -> str:
    parts = PurePosixPath(name).parts
    if name.startswith(("/", "\\")) or "\\" in name or ".." in parts or ":" in name \
            or "\0" in name:
        raise NanoframesError("lottie-archive", f"member {name[:80]!r} names a place outside "
                              "the archive", file)
    return "/".join(p for p in parts if p not in ("", "."))


def unpack(data: bytes, file: Path) -> tuple[bytes, dict[str, bytes]]:
    """(the animation's JSON, image members by name) of a dotLottie archive: the
    animation the manifest names first, else the only one in ``animations/``."""
    try:
        archive = zipfile.ZipFile(io.BytesIO(data))
        infos = archive.infolist()
    except Exception as exc:  # noqa: BLE001 - zipfile raises many types for damaged archives
        raise NanoframesError("lottie-archive", f"not a readable .lottie (zip) archive: "
                              f"{str(exc)[:100]}", file) from None
    if len(infos) > MAX_MEMBERS:
        raise NanoframesError("lottie-archive", f"{len(infos)} members exceed the limit of "
                              f"{MAX_MEMBERS}", file)
    members: dict[str, bytes] = {}
    total = 0
    for info in infos:
        if info.is_dir():
            continue
        name = _member_name(info.filename, file)
        if name in members:
            raise NanoframesError("lottie-archive", f"member {name[:80]!r} appears twice", file)
        body = bytearray()
        try:
            with archive.open(info) as fh:
                while chunk := fh.read(_CHUNK):
                    body += chunk
                    total += len(chunk)
                    if len(body) > MAX_MEMBER_BYTES or total > MAX_TOTAL_BYTES:
                        raise NanoframesError(
                            "lottie-archive", f"member {name[:80]!r} unpacks past the limits "
                            f"({MAX_MEMBER_BYTES} bytes a member, {MAX_TOTAL_BYTES} in all)",
                            file)
        except NanoframesError:
            raise
        except Exception as exc:  # noqa: BLE001 - zlib.error, a bad CRC, an unknown method
            raise NanoframesError("lottie-archive", f"member {name[:80]!r} cannot be "
                                  f"unpacked: {str(exc)[:100]}", file) from None
        members[name] = bytes(body)
    animation = _chosen(members, file)
    return members[animation], {k: v for k, v in members.items()
                                if k.startswith(IMAGE_FOLDERS)}


def _chosen(members: dict[str, bytes], file: Path) -> str:
    """The animation the manifest names first (``animations/ID.json``, or ``a/ID.json``
    in dotLottie 2), else the only one in those folders."""
    animations = sorted(k for k in members if k.endswith(".json") and k.count("/") == 1
                        and k.startswith(ANIMATION_FOLDERS))
    manifest = members.get("manifest.json")
    if manifest is not None:
        try:
            listed = json.loads(manifest).get("animations") or []
            first = listed[0].get("id") if listed and isinstance(listed[0], dict) else None
        except (ValueError, AttributeError, RecursionError):
            raise NanoframesError("lottie-archive", "manifest.json is not a readable "
                                  "manifest", file) from None
        if isinstance(first, str):
            for folder in ANIMATION_FOLDERS:
                if f"{folder}{first}.json" in members:
                    return f"{folder}{first}.json"
            raise NanoframesError("lottie-archive", f"the manifest names {first[:60]!r}, "
                                  "which is not in animations/ (or a/)", file)
    if len(animations) != 1:
        raise NanoframesError("lottie-archive", f"{len(animations)} animations in animations/ "
                              "(or a/) and no manifest naming one", file)
    return animations[0]
