"""Platform tags: the readable name a platform entry of the ledger goes by.

Every platform's thorvg-python wheel carries its own libthorvg, which may round
an edge differently. A platform entry records such a machine's reading beside
the primary one, only where it draws otherwise (a film equal to the primary is
a match on every platform: policy.py, verdict.judge), named ``linux-x86_64``,
``linux-arm64``, ``macos-arm64``, ``windows-x86_64``: what a person reviewing
the ledger can read. ``$NANOFRAMES_PLATFORM`` names the
running machine otherwise (two builds on one machine, a CI image of its own).

A reading kept for ``nanoframes accept --from`` carries its reader's tag
(``reader_tag``): on a CI runner one that names the runner (GitHub's runner
image, ``ubuntu24-x86_64``; another CI's ``ci-linux-x86_64``), so the platform
entry accepted from it is that runner's, never mistaken for a workstation's.
"""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Mapping

from ..errors import NanoframesError

PLATFORM_ENV = "NANOFRAMES_PLATFORM"
_TAG = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")
_SYSTEMS = {"darwin": "macos", "win32": "windows", "cygwin": "windows"}
_MACHINES = {"amd64": "x86_64", "x64": "x86_64", "aarch64": "arm64", "arm64": "arm64",
             "i686": "x86", "i386": "x86"}


def valid_tag(tag: str, what: str = "platform tag") -> str:
    """``tag`` if it is a readable tag (lowercase letters, digits, ``.``, ``_``, ``-``)."""
    if not isinstance(tag, str) or not _TAG.fullmatch(tag):
        raise NanoframesError("platform-invalid", f"{what} {tag!r} must be lowercase letters, "
                              "digits, '.', '_' or '-' (for example linux-x86_64)")
    return tag


def platform_tag(environ: Mapping[str, str] = os.environ) -> str:
    """The running machine's tag: ``$NANOFRAMES_PLATFORM``, else OS and CPU."""
    chosen = environ.get(PLATFORM_ENV, "").strip()
    if chosen:
        return valid_tag(chosen, f"${PLATFORM_ENV}")
    system = next((name for prefix, name in _SYSTEMS.items() if sys.platform.startswith(prefix)),
                  sys.platform.split("-")[0].rstrip("0123456789") or "unknown")
    import platform  # here: its import is slow, and a check that names no tag never needs it

    machine = platform.machine().lower() or "unknown"
    return f"{system}-{_MACHINES.get(machine, machine)}"


def reader_tag(environ: Mapping[str, str] = os.environ) -> str:
    """The tag a reading taken here is kept under: ``$NANOFRAMES_PLATFORM``; on a
    GitHub Actions runner its image and CPU (``$ImageOS``: ``ubuntu24-x86_64``), or
    ``github-`` and the platform tag; on another CI ``ci-`` and it; else the platform tag."""
    if environ.get(PLATFORM_ENV, "").strip():
        return platform_tag(environ)
    here = platform_tag(environ)
    if environ.get("GITHUB_ACTIONS") == "true":
        image = re.sub(r"[^a-z0-9._-]+", "-", environ.get("ImageOS", "").strip().lower())
        arch = here.split("-", 1)[1] if "-" in here else here
        tag = f"{image}-{arch}" if image and image[0].isalnum() else f"github-{here}"
    elif environ.get("CI", "").strip().lower() not in ("", "0", "false", "no"):
        tag = f"ci-{here}"
    else:
        return here
    return tag[:64] if _TAG.fullmatch(tag[:64]) else here
