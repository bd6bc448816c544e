"""Commands run with a process setting of their own (a umask, a memory limit, a
private /dev/shm), set up by a launcher in the new process, which then execs the
command (same pid, same session).

Not ``preexec_fn``: that runs Python in the forked child of a process with
threads (pytest-xdist's, a test's own pool), where a lock another thread held at
the fork stays held and the child can hang before it execs (it did, under
Python 3.13, in the signal tests' four-thread pool).
"""

from __future__ import annotations

import os
import sys
from pathlib import Path

_LAUNCHER = """\
import json, os, sys

setup, argv = json.loads(sys.argv[1]), sys.argv[2:]
if "umask" in setup:
    os.umask(setup["umask"])
if "address_space" in setup:
    import resource

    limit = setup["address_space"]
    resource.setrlimit(resource.RLIMIT_AS, (limit, limit))
if "shm" in setup:  # best effort: where it is not permitted, the shared one is used
    import ctypes

    libc = ctypes.CDLL(None, use_errno=True)
    if libc.unshare(0x20000) == 0 \\
            and libc.mount(b"none", b"/", None, 16384 | (1 << 18), None) == 0:
        libc.mount(setup["shm"].encode(), b"/dev/shm", None, 4096, None)
os.execvp(argv[0], argv)
"""


def launched(argv: list[str], *, umask: int | None = None, address_space: int | None = None,
             shm: Path | None = None) -> list[str]:
    """``argv`` run with: ``umask``; an address-space limit in bytes
    (``RLIMIT_AS``); ``shm`` bind-mounted over /dev/shm in a mount namespace of its
    own (Linux, as root), so a test sees exactly the named semaphores it leaves."""
    import json

    setup: dict[str, object] = {}
    if umask is not None:
        setup["umask"] = umask
    if address_space is not None:
        setup["address_space"] = address_space
    if shm is not None and private_shm_possible():
        setup["shm"] = str(shm)
    # -S, and imports only as a setting needs them: 7 ms less CPU a launch, hundreds a run
    return [sys.executable, "-S", "-c", _LAUNCHER, json.dumps(setup), *argv]


def private_shm_possible() -> bool:
    return sys.platform.startswith("linux") and os.geteuid() == 0 \
        and Path("/dev/shm").is_dir()


def nanoframes_capped(root: Path, args: tuple[str, ...], address_space: int,
                      timeout: float):
    """``python -m nanoframes ARGS`` in ``root`` under an address-space limit; a run
    past ``timeout`` fails the test (a hang is the bug such a test looks for)."""
    import subprocess

    import pytest

    try:
        return subprocess.run(launched([sys.executable, "-m", "nanoframes", *args],
                                       address_space=address_space), cwd=root,
                              capture_output=True, text=True, errors="replace",
                              timeout=timeout)
    except subprocess.TimeoutExpired:
        pytest.fail(f"nanoframes {' '.join(args)} ran past {timeout} s")
