"""SIGINT and SIGTERM end a command cleanly, at any moment.

The handler runs in the main thread and does not unwind the stack: unwinding
means joining worker processes and queue threads that may be blocked, which is
how a Ctrl-C used to hang. Instead it tears everything down itself and leaves
with ``os._exit``:

1. stderr is pointed at /dev/null, so no thread of ours prints a traceback
   while the pool it waits on disappears;
2. every process below this one (workers, the forkserver, the resource
   tracker) is killed with SIGKILL and reaped. This process is a child
   subreaper (Linux), so a worker orphaned by its forkserver's death is still
   found below us. SIGKILL prints nothing, so no worker traceback and no
   "leaked semaphore" warning from the tracker;
3. the named semaphores of our pools, which the killed tracker would have
   unlinked, are unlinked here;
4. this process's unfinished temp files are deleted (``files.remove_live_temps``),
   and so are those of the workers just killed, in every directory this
   process wrote into (``files.remove_dead_temps``; the workers write frames
   and cache files beside the command's): a final name only ever holds a whole
   file (written by rename), so nothing partial is left anywhere;
5. one line, ``nanoframes: interrupted``, and exit status 128 + the signal
   (130 for SIGINT, 143 for SIGTERM).

Only the standard library and ``files`` are imported, so the handlers can be
installed before anything heavy is (``install`` runs first thing in
``nanoframes.cli``).
"""

from __future__ import annotations

import contextlib
import gc
import os
import signal
import sys
import time

from ..files import remove_dead_temps, remove_live_temps

SIGNALS = (signal.SIGINT, signal.SIGTERM)
MESSAGE = b"nanoframes: interrupted\n"
_KILL_WITHIN_S = 1.5  # give up waiting for processes to go after this long
_PR_SET_CHILD_SUBREAPER = 36

_installed: dict[int, object] = {}


def is_program() -> bool:
    """Whether this process is the ``nanoframes`` command (the console script or
    ``python -m nanoframes``), not a host that imported the library."""
    main = sys.modules.get("__main__")
    spec = getattr(main, "__spec__", None)
    if spec is not None and spec.name == "nanoframes.__main__":
        return True
    return os.path.basename(getattr(main, "__file__", None) or "") == "nanoframes"


def install() -> None:
    """Handle SIGINT and SIGTERM with :func:`teardown` (main thread only; idempotent)."""
    if _installed or os.name != "posix":
        return
    try:
        for sig in SIGNALS:
            _installed[sig] = signal.signal(sig, _handle)
    except ValueError:  # not the main thread: leave the host's handlers alone
        for sig, old in _installed.items():
            signal.signal(sig, old)
        _installed.clear()
        return
    if is_program():
        _become_subreaper()


def uninstall() -> None:
    """Restore the handlers ``install`` replaced (for callers that run ``main`` in-process)."""
    for sig, old in _installed.items():
        with contextlib.suppress(ValueError, TypeError):
            signal.signal(sig, old)
    _installed.clear()


def _become_subreaper() -> None:
    # Orphaned descendants (a worker whose forkserver died) are re-parented to
    # this process instead of init, so the teardown can still find and reap them.
    if not sys.platform.startswith("linux"):
        return
    with contextlib.suppress(Exception):
        import ctypes

        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(_PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0)


_tearing_down = False


def _handle(signum: int, _frame) -> None:
    global _tearing_down
    if _tearing_down:  # the same signal from the terminal and from the guard (guard.py)
        return
    _tearing_down = True
    teardown(signum)


def exit_now(status: int) -> None:
    """``os._exit(status)``, unless SIGINT or SIGTERM arrived as the command exits:
    then the teardown, as at any other moment (no exit 0 without a word)."""
    if _installed:
        # blocking runs a handler already due; a signal from now on is held, read here
        with contextlib.suppress(Exception):
            signal.pthread_sigmask(signal.SIG_BLOCK, SIGNALS)
            for sig in SIGNALS:
                if sig in signal.sigpending():
                    _handle(sig, None)
    os._exit(status)


def teardown(signum: int) -> None:
    """Kill every descendant, delete live temps, print the line, exit 128 + signum."""
    for sig in SIGNALS:  # a second signal must not start a second teardown
        with contextlib.suppress(Exception):
            signal.signal(sig, signal.SIG_IGN)
    err = -1
    with contextlib.suppress(OSError):
        err = os.dup(2)
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, 2)
        os.close(devnull)
    with contextlib.suppress(Exception):
        workers = sys.modules.get("nanoframes.frames.workers")
        if workers is not None:  # a thread may be starting a pool: let it finish, then none
            workers.stop_spawning()
    with contextlib.suppress(Exception):
        kill_descendants()
    with contextlib.suppress(Exception):
        _unlink_semaphores()
    with contextlib.suppress(Exception):
        remove_live_temps()
    with contextlib.suppress(Exception):
        remove_dead_temps()
    with contextlib.suppress(OSError):
        os.write(err if err >= 0 else 2, MESSAGE)
    os._exit(128 + signum)


def descendants(pid: int | None = None) -> list[int]:
    """Living processes below ``pid`` (default: this one), read from /proc; zombies left out."""
    root = os.getpid() if pid is None else pid
    children: dict[int, list[int]] = {}
    try:
        names = os.listdir("/proc")
    except OSError:
        return []
    for name in names:
        if not name.isdigit():
            continue
        try:
            with open(f"/proc/{name}/stat", "rb") as fh:
                stat = fh.read()
        except OSError:
            continue
        fields = stat[stat.rfind(b")") + 2:].split()
        if fields[0] == b"Z":  # dead, waiting to be reaped
            continue
        children.setdefault(int(fields[1]), []).append(int(name))
    found, todo = [], list(children.get(root, ()))
    while todo:
        p = todo.pop()
        found.append(p)
        todo.extend(children.get(p, ()))
    return found


def _reap() -> None:
    with contextlib.suppress(ChildProcessError, OSError):
        while os.waitpid(-1, os.WNOHANG)[0] > 0:
            pass


def kill_descendants(within: float = _KILL_WITHIN_S) -> None:
    """SIGKILL every process below this one until none is left (or ``within`` s pass).

    Repeated because a forkserver may fork one more worker while it is being
    killed; as a subreaper this process inherits that orphan and kills it too.
    """
    deadline = time.monotonic() + within
    while True:
        pids = descendants()
        if not pids:
            break
        for pid in pids:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        _reap()
        if time.monotonic() > deadline:
            break
        time.sleep(0.005)
    _reap()


def _unlink_semaphores() -> None:
    """Unlink the named semaphores of this process's multiprocessing objects.

    The resource tracker (now killed) would have done it, warning about each.
    """
    synchronize = sys.modules.get("multiprocessing.synchronize")
    if synchronize is None:
        return
    import _multiprocessing

    for obj in gc.get_objects():
        if isinstance(obj, synchronize.SemLock):
            name = getattr(obj._semlock, "name", None)
            if name:
                with contextlib.suppress(OSError):
                    _multiprocessing.sem_unlink(name)
