"""The command's guard: a crash in ThorVG is one line, never a dead command.

ThorVG is C++: a composition or a face that still makes it segfault or abort
kills the process that called it, with no Python left to say why. So the
``nanoframes`` command forks itself first thing, before anything heavy is
imported (no process that has loaded ThorVG is ever forked), and the command
runs in the child. This process, the guard, only waits:

- the child exits: the guard exits with its status;
- the child dies of a fatal signal (SIGSEGV, SIGABRT...): the guard reads the
  child's crash record (``engine/site.py``: the composition, the frame, drawing
  or measuring) and prints ``nanoframes: PATH: error[render-crashed]: ...``,
  exit status 2; the ledger is untouched (it is written only at the end, by the
  child, atomically). A worker of the child (``-j N``) that crashes is named
  by the child itself (``workers.died``), from the same records;
- SIGINT or SIGTERM sent to the guard is passed on to the child, which tears
  itself down (``interrupt.py``); one that lands as the child exits still ends
  the command with ``nanoframes: interrupted`` and 128 + the signal.

The cost is one fork of a small interpreter (about a millisecond) per command;
decision record 0030 has the measurement. Standard library only.
"""

from __future__ import annotations

import contextlib
import os
import signal

from . import interrupt

# Fatal signals: a crash. Any other death (SIGKILL from the OOM killer, a signal
# sent to the child alone) is passed on as it was, as if there were no guard.
_CRASHES = {signal.SIGSEGV, signal.SIGABRT, signal.SIGBUS, signal.SIGFPE, signal.SIGILL,
            signal.SIGTRAP, signal.SIGSYS}
_DIR_ENV = "NANOFRAMES_CRASH_DIR"  # engine/site.py's DIR_ENV (not imported: it is heavier)
_GUARDED_ENV = "NANOFRAMES_GUARDED"  # "0": run unguarded (benchmarks compare the two)


def guard() -> None:
    """Fork; the child returns and runs the command, this process never returns."""
    if os.name != "posix" or not hasattr(os, "fork") or os.environ.get(_GUARDED_ENV) == "0":
        return
    try:
        crashes = _make_dir()
    except OSError:
        return  # nowhere to keep records: run unguarded rather than not at all
    os.environ[_DIR_ENV] = crashes
    held = set(interrupt.SIGNALS)
    before = signal.pthread_sigmask(signal.SIG_BLOCK, held)  # none lost across the fork
    try:
        pid = os.fork()
    except OSError:
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
        _remove(crashes)
        return
    if pid == 0:  # the command: its handlers (interrupt.install) came with the fork
        signal.pthread_sigmask(signal.SIG_SETMASK, before)
        return
    _wait(pid, crashes, before)


def _wait(pid: int, crashes: str, before) -> None:
    received: list[int] = []

    def forward(signum: int, _frame) -> None:
        received.append(signum)
        with contextlib.suppress(OSError):
            os.kill(pid, signum)

    for sig in interrupt.SIGNALS:
        signal.signal(sig, forward)
    signal.pthread_sigmask(signal.SIG_SETMASK, before)
    status = 0
    while True:
        try:
            status = os.waitpid(pid, 0)[1]
            break
        except ChildProcessError:
            break
    # From here no signal is handled late: one already caught runs now (the mask
    # call checks), one arriving later is held and read below.
    signal.pthread_sigmask(signal.SIG_BLOCK, set(interrupt.SIGNALS))
    received += [sig for sig in interrupt.SIGNALS if sig in signal.sigpending()]
    if os.WIFSIGNALED(status):
        # A child that exits stops its own processes; one that died left them to us
        # (its subreaper): the forkserver, workers forked from it.
        with contextlib.suppress(Exception):
            interrupt.kill_descendants()
        sig = os.WTERMSIG(status)
        if sig in _CRASHES:
            line = _crash_line(os.path.join(crashes, str(pid)), sig)
            _remove(crashes)
            _write(f"nanoframes: {line}\n".encode())
            os._exit(2)
        _remove(crashes)
        if not received:  # killed from outside: end the same way
            signal.signal(sig, signal.SIG_DFL)
            signal.pthread_sigmask(signal.SIG_UNBLOCK, {sig})
            os.kill(os.getpid(), sig)
            os._exit(128 + sig)
        code = -1
    else:
        _remove(crashes)
        code = os.WEXITSTATUS(status) if os.WIFEXITED(status) else 1
    if received and code != 128 + received[0]:
        # the signal landed as the command exited: it still ends as interrupted
        _write(interrupt.MESSAGE)
        os._exit(128 + received[0])
    os._exit(code)


def _crash_line(record: str, sig: int) -> str:
    from ..engine.site import read_crash

    crash = read_crash(record, died_of=sig)
    message = crash.line() if crash is not None else \
        f"the renderer's process crashed ({signal.Signals(sig).name})"
    where = f"{crash.shown_path()}: " if crash is not None and crash.path else ""
    code = crash.code if crash is not None else "render-crashed"
    return f"{where}error[{code}]: {message}"


def _write(data: bytes) -> None:
    with contextlib.suppress(OSError):
        os.write(2, data)


def _make_dir() -> str:
    base = os.environ.get("TMPDIR") or "/tmp"
    path = os.path.join(base, f"nanoframes-crashes-{os.getpid()}-{os.urandom(4).hex()}")
    os.mkdir(path, 0o700)
    return path


def _remove(path: str) -> None:
    with contextlib.suppress(OSError):
        for name in os.listdir(path):
            with contextlib.suppress(OSError):
                os.unlink(os.path.join(path, name))
        os.rmdir(path)

