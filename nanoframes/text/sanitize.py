"""Faces checked by the OpenType Sanitizer before ThorVG may see them.

ThorVG's font loader trusts the tables it reads: a face with a damaged ``glyf``,
``loca`` or ``cmap`` (each passing the project's own table reader, ``sfnt.py``)
crashed every command that measured text in its family. The check is the one
browsers run on web fonts, OTS, through the ``opentype-sanitizer`` package's
``ots-sanitize`` executable, in a child process with a time limit. A face that
fails is not a candidate (``fonts.FontBook.resolve`` passes over it), and the
command's process says so once, naming the file. The verdict is cached per face
file version (path, modification time, size), and asked for only when a face
would be drawn: the bundled faces ship with nanoframes and are checked by its
test suite instead (tests/test_faces_sanitized.py). Where the package has no
wheel (Linux aarch64) it is not a dependency and faces go unchecked.
"""

from __future__ import annotations

import subprocess
import sys
from functools import lru_cache
from pathlib import Path

_TIMEOUT_S = 20  # OTS takes ~30 ms for a face; a face it cannot finish is refused
_WARNED: set[str] = set()


@lru_cache(maxsize=1024)
def _problem(path: str, mtime_ns: int, size: int) -> str | None:
    try:
        import ots
    except ImportError:
        # Not installed where it has no wheel (Linux aarch64): the face goes unchecked,
        # and a crash it causes is still one line (render-crashed; docs/limits.md).
        return None

    try:
        proc = subprocess.run([ots.OTS_SANITIZE, path], capture_output=True,
                              timeout=_TIMEOUT_S, stdin=subprocess.DEVNULL)
    except subprocess.TimeoutExpired:
        return f"the OpenType Sanitizer did not finish in {_TIMEOUT_S} s"
    except OSError as exc:
        return f"the OpenType Sanitizer could not run ({exc.strerror})"
    if proc.returncode == 0:
        return None
    detail = [line.strip() for line in proc.stderr.decode("utf-8", "replace").splitlines()
              if line.strip() and "Failed to sanitize" not in line]
    return "rejected by the OpenType Sanitizer" + (f" ({detail[0][:120]})" if detail else "")


def face_problem(path: Path) -> str | None:
    """Why the face file at ``path`` must not reach ThorVG, or None."""
    try:
        st = path.stat()
    except OSError as exc:
        return f"cannot be read ({exc.strerror})"
    return _problem(str(path), st.st_mtime_ns, st.st_size)


def usable(path: Path) -> bool:
    """Whether a face may be drawn; the first refusal of each file is one warning line
    on stderr, in the command's own process (not again in each worker)."""
    problem = face_problem(path)
    if problem is None:
        return True
    import multiprocessing  # already loaded wherever a face is drawn

    if str(path) not in _WARNED and multiprocessing.parent_process() is None:
        _WARNED.add(str(path))
        print(f"nanoframes: warning[face-rejected]: {path}: {problem}; not a candidate",
              file=sys.stderr)
    return False
