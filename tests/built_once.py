"""Set-up that draws or records, done once per test session and copied after.

For set-up whose files are the same wherever it runs (the same films recorded
again write the same ledger and store): the first test to ask, on any xdist
worker, builds it and keeps a copy; the others get that copy. The test itself,
and every command it runs after its set-up, runs as before.
"""

from __future__ import annotations

import hashlib
import os
import shutil
from collections.abc import Callable
from pathlib import Path

from filelock import FileLock

# What pytester leaves beside a project: its runs' output and base temp directories.
_NOT_KEPT = shutil.ignore_patterns("stdout", "stderr", "runpytest-*")


def once(test_path: Path, key: str, build: Callable[[], None], into: Path) -> None:
    """``build()``, which writes ``into``, once per session for ``key``; a copy after.

    ``test_path``: the test's ``tmp_path`` or ``pytester.path``, a folder of the
    session's base temp directory (under xdist, the worker's, beside the others).
    """
    base = test_path.parent
    shared = base.parent if os.environ.get("PYTEST_XDIST_WORKER") else base
    kept = shared / f"built-once-{hashlib.sha256(key.encode()).hexdigest()[:16]}"
    with FileLock(f"{kept}.lock"):
        if kept.is_dir():
            shutil.copytree(kept, into, symlinks=True, dirs_exist_ok=True)
            return
        build()
        partial = kept.with_name(kept.name + "-partial")
        shutil.rmtree(partial, ignore_errors=True)
        shutil.copytree(into, partial, symlinks=True, ignore=_NOT_KEPT)
        partial.rename(kept)
