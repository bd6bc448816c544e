"""Proof that the project's own pending readings were written by a check on this
machine (decision 0092).

``accept KEY``, ``accept --all-changed`` and ``review`` without ``--from`` take
``.nanoframes/pending/readings.json`` as what the person's own check read. A
pull request can commit that file (``git add -f``), so its presence proves
nothing. Each check that writes it also writes ``readings.mac``: HMAC-SHA256 of
the file's bytes under a key of 32 random bytes kept in this user's cache
folder (``$NANOFRAMES_CACHE_DIR``, else the user cache directory), outside every
project, created once with mode 0600 and never written anywhere else. A file
the key did not sign (committed, edited, or written on another machine) is
refused with ``pending-unverified``; running the check again replaces it.
Readings from elsewhere (``--from``) are not signed by this machine: their
frames are verified instead (acceptance.verify_frames).
"""

from __future__ import annotations

import hashlib
import hmac
import os
import secrets
from pathlib import Path

from ..errors import NanoframesError

KEY_FILE = "pending.key"
KEY_BYTES = 32


def key_path() -> Path:
    from ..frames.cache import cache_dir

    return cache_dir() / KEY_FILE


def _key(create: bool) -> bytes | None:
    path = key_path()
    try:
        data = path.read_bytes() if path.is_file() and not path.is_symlink() else None
    except OSError:
        data = None
    if data is not None and len(data) == KEY_BYTES:
        return data
    if not create:
        return None
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | getattr(os, "O_NOFOLLOW", 0),
                     0o600)
    except FileExistsError:  # another process made it first (or a bad one is there)
        data = _read_quietly(path)
        if data is not None and len(data) == KEY_BYTES:
            return data
        raise NanoframesError("output-failed", f"the key that signs pending readings is not "
                              f"{KEY_BYTES} bytes: delete it", path) from None
    except OSError as exc:
        raise NanoframesError("output-failed", f"cannot keep the key that signs pending "
                              f"readings: {exc.strerror}", path) from None
    data = secrets.token_bytes(KEY_BYTES)
    with os.fdopen(fd, "wb") as fh:
        fh.write(data)
    return data


def _read_quietly(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


def sign(raw: bytes) -> str:
    """The MAC of a readings file this machine writes (the key made on first use)."""
    key = _key(create=True)
    assert key is not None
    return hmac.new(key, raw, hashlib.sha256).hexdigest()


def verify(raw: bytes, seal: bytes | None, path: Path) -> None:
    """``pending-unverified`` unless ``seal`` is this machine's MAC of ``raw``."""
    key = _key(create=False)
    given = (seal or b"").strip()
    if key is not None and hmac.compare_digest(
            hmac.new(key, raw, hashlib.sha256).hexdigest().encode(), given):
        return
    raise NanoframesError("pending-unverified", "these pending readings were not written by a "
                          "check on this machine (committed to the repository, or edited): "
                          "not used; run the check again", path)
