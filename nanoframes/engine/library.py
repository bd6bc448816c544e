"""Which libthorvg draws, found without loading it.

``$NANOFRAMES_LIBTHORVG`` names a build to load instead of thorvg-python's
(how a team tries a ThorVG upgrade; ``raster`` checks it answers ThorVG's
version query with 1.x before drawing).

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
import os
import sys
from functools import lru_cache
from pathlib import Path

from ..errors import NanoframesError

LIBRARY_ENV = "NANOFRAMES_LIBTHORVG"  # a libthorvg build to load instead of the wheel's


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
    """The libthorvg file drawn with (its bytes are the toolchain's ``libthorvg`` part):
    ``$NANOFRAMES_LIBTHORVG`` when set, else the one thorvg-python loads."""
    chosen = os.environ.get(LIBRARY_ENV, "").strip()
    if chosen:
        path = Path(chosen).expanduser()
        if not path.is_file():
            raise NanoframesError("thorvg-invalid",
                                  f"{LIBRARY_ENV} names no readable file", path)
        return path.resolve()
    bundled = _bundled()
    if bundled is not None:
        return bundled
    try:
        from thorvg_python.engine import THORVG_LIB
    except (ImportError, OSError, AttributeError) as exc:
        raise NanoframesError("thorvg-missing", f"thorvg-python {thorvg_python_version()} "
                              f"could not load its libthorvg: {exc}") from None
    if THORVG_LIB is None:
        raise NanoframesError("thorvg-missing", "thorvg-python could not load libthorvg")
    return Path(THORVG_LIB._name).resolve()


@lru_cache(maxsize=1)
def library_sha256() -> str:
    return hashlib.sha256(library_path().read_bytes()).hexdigest()


def thorvg_python_version() -> str:
    from importlib.metadata import PackageNotFoundError, version

    try:
        return version("thorvg-python")
    except PackageNotFoundError:
        return "not installed"
