"""The check a face passes before ThorVG may draw it (decision 0085).

ThorVG's font loader trusts the tables it reads: a face with a damaged ``glyf``,
``loca`` or ``cmap`` crashed every command that measured text in its family. What
is checked is the face's drawn copy (:mod:`nanoframes.text.drawn`: exactly the
tables ThorVG 1.0.4 reads), and that copy is what ThorVG is handed, so:

- damage in a table ThorVG never reads (``GSUB``, ``GPOS``, ``name``, a hinting
  source such as ``TSI3``) refuses nothing: it is not in the copy;
- the copy passes ThorVG's own reads done as ThorVG does them
  (:mod:`nanoframes.text.walk`: its load-time checks, its ``kern`` walk, the
  glyph ids of the ``cmap`` subtable it picks), then the OpenType Sanitizer (OTS,
  the ``opentype-sanitizer`` package's ``ots-sanitize``, in a child process with a
  time limit), whose checks of ``glyf``, ``loca``, ``hmtx`` and the rest are the
  ones browsers rely on. What OTS would discard or repair is never handed over:
  ThorVG gets the checked bytes themselves, not OTS's output and not the file.

The verdict is cached per drawn copy (its SHA-256) and per face file version, and
asked for only when a face would be drawn: the bundled faces ship with nanoframes
and are checked by its test suite instead (tests/test_faces_sanitized.py). Where
``opentype-sanitizer`` has no wheel (Linux aarch64) only the walk runs.
"""

from __future__ import annotations

import hashlib
import os
import subprocess
import sys
import tempfile
from functools import lru_cache
from pathlib import Path

from ..files import read_regular
from .drawn import drawn_copy
from .sfnt import SfntError
from .walk import problem as walk_problem

_TIMEOUT_S = 20  # OTS takes ~15 ms for a face's copy; one it cannot finish is refused
_WARNED: set[str] = set()


def _ots(copy: bytes) -> str | None:
    try:
        import ots
    except ImportError:
        # Not installed where it has no wheel (Linux aarch64): the walk alone decides,
        # and a crash that slips through is still one line (render-crashed; docs/limits.md).
        return None
    fd, name = tempfile.mkstemp(suffix=".ttf", prefix="nanoframes-face-")
    try:
        with os.fdopen(fd, "wb") as fh:
            fh.write(copy)
        proc = subprocess.run([ots.OTS_SANITIZE, name], capture_output=True,
                              timeout=_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return f"the OpenType Sanitizer did not finish in {_TIMEOUT_S} s"
    except OSError as exc:
        return f"the OpenType Sanitizer could not run ({exc.strerror})"
    finally:
        os.unlink(name)
    if proc.returncode == 0:
        return None
    detail = [line.strip() for line in proc.stderr.decode("utf-8", "replace").splitlines()
              if line.strip() and "Failed to sanitize" not in line
              and not line.lstrip().startswith("WARNING")]
    return "rejected by the OpenType Sanitizer" + (f" ({detail[0][:120]})" if detail else "")


@lru_cache(maxsize=256)
def _copy_problem(digest: str, copy: bytes) -> str | None:
    found = walk_problem(copy)
    return f"would hurt ThorVG's reader: {found}" if found else _ots(copy)


def copy_problem(copy: bytes) -> str | None:
    """Why the drawn copy ``copy`` must not reach ThorVG, or None (cached per copy)."""
    return _copy_problem(hashlib.sha256(copy).hexdigest(), copy)


@lru_cache(maxsize=1024)
def _problem(path: str, mtime_ns: int, size: int, index: int) -> str | None:
    try:
        data = read_regular(path)
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    try:
        copy = drawn_copy(data, index)
    except SfntError as exc:
        return f"not a face ThorVG can load ({exc})"
    return copy_problem(copy)


def face_problem(path: Path, index: int = 0) -> str | None:
    """Why face ``index`` of the file at ``path`` must not reach ThorVG, or None."""
    try:
        st = path.stat()
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    return _problem(str(path), st.st_mtime_ns, st.st_size, index)


def warn_once(code: str, what: str, problem: str, outcome: str = "not a candidate") -> None:
    """One warning line on stderr per face and process, in the command's own process
    (not again in each worker)."""
    import multiprocessing  # already loaded wherever a face is drawn

    key = f"{code}:{what}"
    if key not in _WARNED and multiprocessing.parent_process() is None:
        _WARNED.add(key)
        print(f"nanoframes: warning[{code}]: {what}: {problem}; {outcome}", file=sys.stderr)
