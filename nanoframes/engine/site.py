"""Where this process is in ThorVG's work, kept where a crash cannot erase it.

A segfault or an abort inside ThorVG kills the process before Python can say
which composition and frame it was drawing or measuring. So a process that
calls ThorVG keeps one page of a file in the crash directory (``<dir>/<pid>``)
mapped in memory and writes the calling thread's site (composition, frame,
drawing or measuring) there as each ThorVG call begins; Python's
``faulthandler`` appends its report after the page if the process dies of a
fatal signal. Whoever started the process (the command's guard, a worker
pool's owner) reads the file after the death: a report means a crash, and the
page says where (docs/errors.md, ``render-crashed``).

Standard library only: the command's guard (``cli/guard.py``) reads crashes
before anything heavy is imported.
"""

from __future__ import annotations

import contextlib
import faulthandler
import mmap
import os
import signal
import threading
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

DIR_ENV = "NANOFRAMES_CRASH_DIR"  # set by the command's guard; inherited by its workers
# Testing aid (docs/errors.md): "draw|measure:<file name>:<frame>:segv|abort" makes
# the ThorVG call of that site crash for real, inside the library.
DEBUG_ENV = "NANOFRAMES_DEBUG_CRASH"
PAGE = 4096
_MAGIC = b"nanoframes-site\n"
_INSIDE = PAGE - 1  # the page's last byte: 1 while a ThorVG call runs

_local = threading.local()
_page: mmap.mmap | None = None
_page_pid: int | None = None
_shown: bytes | None = None  # what the page says now (the last site written)


@dataclass(frozen=True)
class Site:
    path: str
    frame: int | None
    encoded: dict  # doing -> the page's bytes, made once per site


@contextlib.contextmanager
def working_on(path: str | Path, frame: int | None = None) -> Iterator[None]:
    """Name the composition (and frame) this thread works on, for a crash record.

    An outer site with a frame wins over inner ones (a nested composition is
    reported as the frame of the film that draws it); a site without a frame
    (a composition being linted) is refined by an inner one with a frame.
    """
    outer = getattr(_local, "site", None)
    if outer is not None and outer.frame is not None:
        yield
        return
    _local.site = Site(str(path), frame, {})
    try:
        yield
    finally:
        _local.site = outer


def open_record(directory: str | Path | None = None) -> None:
    """Keep this process's record in ``directory`` (default ``$NANOFRAMES_CRASH_DIR``;
    none: no record is kept). Once per process; a forked child opens its own."""
    global _page, _page_pid
    if _page_pid == os.getpid():
        return
    directory = directory or os.environ.get(DIR_ENV, "")
    if not directory:
        return
    try:
        fd = os.open(os.path.join(directory, str(os.getpid())),
                     os.O_RDWR | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
        os.ftruncate(fd, PAGE)
        page = mmap.mmap(fd, PAGE)
        os.lseek(fd, PAGE, os.SEEK_SET)  # the report goes after the page
        faulthandler.enable(file=fd, all_threads=False)
    except (OSError, ValueError):
        return  # no record: a crash is still caught, only less precisely named
    _page, _page_pid = page, os.getpid()


def entering(doing: str) -> bool:
    """(holding ThorVG's lock) Write this thread's site before a ThorVG call; True
    when the testing aid asks this call to crash."""
    global _shown
    if _page is None or _page_pid != os.getpid():
        return False
    site = getattr(_local, "site", None)
    data = b"-"
    if site is not None:
        data = site.encoded.get(doing)
        if data is None:
            frame = "" if site.frame is None else str(site.frame)
            data = site.encoded[doing] = f"{doing}\n{frame}\n{site.path}\n".encode(
                errors="surrogateescape")[:PAGE - len(_MAGIC) - 2]  # NUL, _INSIDE
    if data is not _shown:
        _page[0:len(_MAGIC) + len(data) + 1] = _MAGIC + data + b"\0"
        _shown = data
    _page[_INSIDE] = 1
    return site is not None and _debug_crash(doing, site)


def left() -> None:
    """(holding ThorVG's lock) The call returned: a crash now is not ThorVG's."""
    if _page is not None and _page_pid == os.getpid():
        _page[_INSIDE] = 0


def overran() -> None:
    """(a watchdog thread, while the site's thread is stuck in ThorVG) Mark the page:
    the call ran past its time limit, and this process is about to abort."""
    if _page is None or _page_pid != os.getpid() or _shown is None:
        return
    data = b"overrun\n" + _shown.split(b"\n", 1)[-1]
    _page[0:len(_MAGIC) + len(data) + 1] = _MAGIC + data + b"\0"


def _debug_crash(doing: str, site: Site) -> bool:
    wanted = os.environ.get(DEBUG_ENV)
    if not wanted:
        return False
    parts = wanted.split(":")
    return (len(parts) == 4 and parts[0] == doing and parts[1] == Path(site.path).name
            and parts[2] == ("" if site.frame is None else str(site.frame)))


def debug_signal() -> str:
    """``segv`` or ``abort``: how the testing aid crashes."""
    return os.environ.get(DEBUG_ENV, "").rsplit(":", 1)[-1]


@dataclass(frozen=True)
class Crash:
    """A process that died of a fatal signal, and where it was."""

    pid: int
    signal: str   # e.g. "SIGSEGV"
    doing: str    # "draw", "measure", "font", "start", or "" (no site named yet)
    frame: int | None
    path: str | None
    inside: bool = True  # in a ThorVG call (else: after one, in other native code)

    def shown_path(self) -> str | None:
        """The composition, relative to the working directory where it is below it."""
        if not self.path:
            return None
        try:
            relative = os.path.relpath(self.path)
        except ValueError:  # another drive (Windows)
            return self.path
        return self.path if relative.startswith("..") else relative

    @property
    def code(self) -> str:
        """``render-timeout`` where a watchdog aborted a call past its time limit."""
        return "render-timeout" if self.doing == "overrun" else "render-crashed"

    def line(self) -> str:
        """The message of ``render-crashed`` (the composition is the error's file)."""
        if self.doing == "overrun":
            where = f"frame {self.frame}" if self.frame is not None else "the film"
            return f"drawing {where} ran past the per-frame time limit (an expression " \
                   "that does not end?); the process was stopped"
        what = {"draw": "drawing", "measure": "measuring text for", "font": "loading a face for",
                "start": "starting for"}.get(self.doing)
        where = f"frame {self.frame}" if self.frame is not None else "the composition"
        if what is None:
            return f"the renderer's process crashed ({self.signal})"
        if not self.inside:
            return f"the renderer's process crashed ({self.signal}) after {what} {where}"
        return f"ThorVG crashed ({self.signal}) while {what} {where}"


_REPORTS = {  # faulthandler's first line -> the signal
    "Segmentation fault": "SIGSEGV", "Aborted": "SIGABRT", "Bus error": "SIGBUS",
    "Floating point exception": "SIGFPE", "Illegal instruction": "SIGILL",
}


def read_crash(file: str | Path, died_of: int | None = None) -> Crash | None:
    """The crash recorded in ``file`` (one process's record), or None when its
    process did not die of a fatal signal. ``died_of``: the signal, where the
    caller saw the death itself (then no report is needed)."""
    try:
        with open(file, "rb") as fh:
            data = fh.read(PAGE + 512)
    except OSError:
        return None
    report = data[PAGE:].decode(errors="replace")
    name = next((sig for text, sig in _REPORTS.items() if f"error: {text}" in report), None)
    if died_of is not None:
        with contextlib.suppress(ValueError):
            name = signal.Signals(died_of).name
    if name is None:
        return None
    doing, frame, path = "", None, None
    inside = len(data) >= PAGE and data[_INSIDE] == 1
    if data.startswith(_MAGIC):
        fields = data[len(_MAGIC):PAGE].split(b"\0", 1)[0].decode(errors="replace")
        parts = fields.split("\n")
        if len(parts) >= 3:
            doing, path = parts[0], parts[2] or None
            frame = int(parts[1]) if parts[1].isdigit() else None
    return Crash(int(Path(file).name) if Path(file).name.isdigit() else 0, name, doing,
                 frame, path, inside)


def find_crash(directory: str | Path | None) -> Crash | None:
    """The first crash recorded in ``directory`` by a process other than this one."""
    if not directory:
        return None
    try:
        names = sorted(os.listdir(directory))
    except OSError:
        return None
    for name in names:
        if name.isdigit() and int(name) != os.getpid():
            crash = read_crash(os.path.join(directory, name))
            if crash is not None:
                return crash
    return None
