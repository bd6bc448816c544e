"""Which libthorvg draws, found without loading it.

The toolchain identity hashes the library file thorvg-python loads. Finding
that file need not load it: thorvg-python first tries the library shipped in
its own package directory (``libthorvg-1.so`` on Linux), so where that file
exists it is the one loaded, and ``nanoframes --version``, the plugin's header
line or a session with nothing to check never pay for starting ThorVG. Any
other layout falls back to asking the binding, which loads it.
"""

from __future__ import annotations

import hashlib
import importlib.util
import sys
from functools import lru_cache
from pathlib import Path

from ..errors import NanoframesError


def _bundled_name() -> str:
    if sys.platform.startswith(("win32", "cygwin", "msys", "os2")):
        return "thorvg-1.dll"
    if sys.platform.startswith("darwin"):
        return "libthorvg-1.dylib"
    return "libthorvg-1.so"


def _bundled() -> Path | None:
    """The library in thorvg-python's package directory, the binding's first choice."""
    spec = importlib.util.find_spec("thorvg_python")
    for directory in (spec.submodule_search_locations or []) if spec else []:
        candidate = Path(directory) / _bundled_name()
        if candidate.is_file():
            return candidate.resolve()
    return None


@lru_cache(maxsize=1)
def library_path() -> Path:
    """The libthorvg file thorvg-python loads (its bytes are part of the toolchain identity)."""
    bundled = _bundled()
    if bundled is not None:
        return bundled
    from thorvg_python.engine import THORVG_LIB

    if THORVG_LIB is None:
        raise NanoframesError("thorvg-missing", "thorvg-python could not load libthorvg")
    return Path(THORVG_LIB._name).resolve()


@lru_cache(maxsize=1)
def library_sha256() -> str:
    return hashlib.sha256(library_path().read_bytes()).hexdigest()


def thorvg_python_version() -> str:
    from importlib.metadata import version

    return version("thorvg-python")
