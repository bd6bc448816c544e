"""Ledger keys: the one function every key passes before it enters or leaves the
ledger (docs/digest.md, "Keys").

A key names a composition by its path relative to the project root, with POSIX
separators (``films/title.nf.svg``), or a test's check by its pytest node id
(``tests/test_charts.py::test_bar[de]``). A pull request or a CI artifact can
put any string there, so every reader and writer asks :func:`canonical_key`: a
key is a string of valid UTF-8 (no lone surrogate: a file name that is not
UTF-8 is refused, never half-written), at most ``MAX_KEY`` characters, each
path component at most ``MAX_COMPONENT`` bytes (what file systems allow), no
control character, no bidirectional control, no backslash; relative (no ``/``
at the start, no drive letter), with no empty, ``.`` or ``..`` component, so a
key can only name a file inside the project and names it one way only.
"""

from __future__ import annotations

import re
from pathlib import Path

from .errors import NanoframesError

MAX_KEY = 1024          # characters; a real key is well under 200
MAX_COMPONENT = 255     # bytes of UTF-8, the usual NAME_MAX
# C0 controls, DEL, C1 controls, line/paragraph separators, bidirectional controls
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u061c\u200e\u200f\u2028-\u202e\u2066-\u2069]")
_DRIVE = re.compile("[A-Za-z]:")


def canonical_key(key: object, file: str | Path | None = None) -> str:
    """``key`` if it is a canonical ledger key, else a ``key-invalid`` error (one
    line, naming the key as ``repr`` writes it: control characters escaped)."""
    problem = key_problem(key)
    if problem is not None:
        shown = repr(key) if not isinstance(key, str) or len(key) <= 120 else \
            repr(key[:120]) + "…"
        raise NanoframesError("key-invalid", f"ledger key {shown}: {problem}", file)
    return key  # type: ignore[return-value]


def is_canonical(key: object) -> bool:
    return key_problem(key) is None


def key_problem(key: object) -> str | None:
    """What makes ``key`` not a canonical key, in words; None when it is one."""
    if not isinstance(key, str):
        return f"must be a string, not {type(key).__name__}"
    if not key:
        return "is empty"
    if len(key) > MAX_KEY:
        return f"is {len(key)} characters long (at most {MAX_KEY})"
    try:
        key.encode("utf-8")
    except UnicodeEncodeError:
        return "is not valid UTF-8 (a file name in another encoding: rename it)"
    if _CONTROL.search(key):
        return "holds a control character"
    path, _, test = key.partition("::")
    if "\\" in path:
        return "holds a backslash (keys use '/')"
    if path.startswith("/") or _DRIVE.match(path):
        return "is absolute (keys are relative to the project root)"
    for part in path.split("/"):
        if part in ("", ".", ".."):
            return ("has an empty, '.' or '..' component (keys name a file inside the "
                    "project, one way only)")
        if len(part.encode("utf-8")) > MAX_COMPONENT:
            return f"has a component over {MAX_COMPONENT} bytes"
    return None
