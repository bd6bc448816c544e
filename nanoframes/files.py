"""Writing files so that nothing is ever half-written (the one atomic writer), and
reading inputs that are files.

Every file nanoframes produces (ledger, PNG, MP4, cache entry, store entry,
report) goes through :func:`atomic_target`: the bytes go to a temp file beside
the target, are flushed to disk, get the permissions a plain ``open()`` would
have given (the umask honoured, or the old file's mode kept), and are renamed
over the target in one step. A reader sees the old file or the new one.

Temp files are named ``.<target name>.<pid>.<random><suffix>``, so a later
writer in the same directory can tell a temp file whose writer was killed
(its process is gone) from one being written right now, and sweeps the dead
ones: a process sweeps a directory at its first write there. Temp files of
this process that are still open are remembered, so a signal handler can
remove them before the process exits (:func:`remove_live_temps`).

OS errors become one-line :class:`NanoframesError` s naming the file and the
reason (read-only file system, disk full, a directory in the way, ...).

:func:`link_atomic` puts a hard link in place the same way (a temp name, then
a rename): the frame cache keeps the PNG files ``render -o`` wrote without
writing their bytes again.

Reading: every input (composition, image, clip, face, ledger) is opened with
:func:`open_regular`, which refuses anything but a regular file before a read
could wait for ever (a FIFO) or never end (``/dev/zero``). What a pull request or
a CI artifact can hand over (store records, readings files, ``accept --list``,
archives) is read through :func:`read_limited` (a size limit checked before and
while reading) and, where it is JSON, decoded by :func:`loads_limited` (its
nesting measured before the decoder recurses).
"""

from __future__ import annotations

import contextlib
import errno
import os
import re
import stat
import tempfile
import threading
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import BinaryIO, TypeVar

from .errors import NanoframesError

T = TypeVar("T")

_LIVE: set[str] = set()  # temp files this process has open right now
# re-entrant: the signal handler runs in the main thread, which may hold it
_LIVE_LOCK = threading.RLock()
_UMASK: int | None = None


def open_regular(path: Path | str) -> BinaryIO:
    """``path`` opened for reading if it is a regular file (links followed).

    Anything else is refused before a read could block or never end: a FIFO
    (opened without waiting for a writer), a device such as ``/dev/zero``, a
    socket: ``OSError`` "not a regular file". Every input nanoframes reads
    (compositions, images, clips, faces) is opened here.
    """
    flags = os.O_RDONLY | getattr(os, "O_NONBLOCK", 0) | getattr(os, "O_BINARY", 0)
    fd = os.open(path, flags)
    try:
        mode = os.fstat(fd).st_mode
        if stat.S_ISDIR(mode):
            raise IsADirectoryError(errno.EISDIR, "is a directory", str(path))
        if not stat.S_ISREG(mode):
            raise OSError(errno.EINVAL, "not a regular file", str(path))
        # a regular file reads the same with O_NONBLOCK set: nothing to clear
        return os.fdopen(fd, "rb")
    except BaseException:
        os.close(fd)
        raise


def read_regular(path: Path | str) -> bytes:
    """The bytes of a regular file (``open_regular``)."""
    with open_regular(path) as fh:
        return fh.read()


class TooLarge(OSError):
    """A file past the size its reader allows (``errno.EFBIG``)."""

    def __init__(self, path: Path | str, limit: int) -> None:
        super().__init__(errno.EFBIG, f"over {limit:,} bytes (the limit)", str(path))


def read_limited(path: Path | str, limit: int) -> bytes:
    """The bytes of a regular file (``open_regular``: never a FIFO or a device) of at
    most ``limit`` bytes. Its size is checked before reading, and at most
    ``limit + 1`` bytes are ever read (a file may grow meanwhile): ``TooLarge``
    (an ``OSError``) past it."""
    with open_regular(path) as fh:
        if os.fstat(fh.fileno()).st_size > limit:
            raise TooLarge(path, limit)
        data = fh.read(limit + 1)
    if len(data) > limit:
        raise TooLarge(path, limit)
    return data


# A string (an unterminated one runs to the end: possessive, so never rescanned) or
# a bracket: one pass over the text, whatever it holds.
_JSON_TOKEN = re.compile(rb'"(?:[^"\\]++|\\.)*+"?|[\[{\]}]', re.DOTALL)


def json_too_deep(raw: bytes | str, limit: int) -> bool:
    """Whether the brackets of a JSON text nest deeper than ``limit`` (strings
    skipped): one linear scan without recursion, stopping at the first level past
    it, made before a decoder that recurses per level sees the text."""
    data = raw.encode("utf-8", "surrogatepass") if isinstance(raw, str) else raw
    depth = 0
    for match in _JSON_TOKEN.finditer(data):
        token = match.group()
        if token in (b"[", b"{"):
            depth += 1
            if depth > limit:
                return True
        elif token in (b"]", b"}"):
            depth -= 1
    return False


def loads_limited(raw: bytes | str, max_depth: int) -> object:
    """``json.loads`` of untrusted text nested at most ``max_depth`` deep; ``ValueError``
    (as for any bad JSON) where it nests deeper, never a ``RecursionError``."""
    import json

    if json_too_deep(raw, max_depth):
        raise ValueError(f"JSON nested deeper than {max_depth} levels")
    try:
        return json.loads(raw)
    except RecursionError:  # not reached below the limit; a last guard
        raise ValueError(f"JSON nested deeper than {max_depth} levels") from None


def umask() -> int:
    """The process umask (read once: reading it means setting it)."""
    global _UMASK
    if _UMASK is None:
        current = os.umask(0o022)
        os.umask(current)
        _UMASK = current
    return _UMASK


def new_file_mode() -> int:
    """The mode ``open(path, "w")`` would give a new file: 0666 less the umask."""
    return 0o666 & ~umask()


def write_failed(exc: OSError, path: Path | str, code: str = "write-failed") -> NanoframesError:
    """One line for an OS error while writing ``path``."""
    if isinstance(exc, IsADirectoryError):
        reason = "is a directory, not a file"
    else:
        reason = exc.strerror or str(exc)
    return NanoframesError(code, f"cannot write: {reason}", path)


def _temp_prefix(target: Path) -> str:
    return f".{target.name}.{os.getpid()}."


_TEMP_NAME = re.compile(r"^\.(?P<name>.+)\.(?P<pid>\d+)\.[a-z0-9_]+\.tmp(\.[A-Za-z0-9]+)?$")


# Directories this process has swept: a write sweeps its directory the first time
# only. Per write, the listing cost more than the write itself for a render's
# frames or the cache's entries, hundreds of files in one directory.
_SWEPT: set[str] = set()


def sweep_directory(directory: Path | str) -> int:
    """Remove every temp file in ``directory`` whose writer process is gone, whatever
    the final name it was for (a killed ``render -o DIR`` leaves one per frame in
    flight); return how many."""
    removed = 0
    _SWEPT.add(os.path.abspath(directory))
    try:
        names = os.listdir(directory)
    except OSError:
        return 0
    for name in names:
        match = _TEMP_NAME.match(name)
        if match is None or _alive(int(match["pid"])):
            continue
        with contextlib.suppress(OSError):
            os.unlink(os.path.join(directory, name))
            removed += 1
    return removed


def _alive(pid: int) -> bool:
    if pid == os.getpid():
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:
        return True  # alive but not ours to signal
    return True


def remove_live_temps() -> None:
    """Delete this process's unfinished temp files (called on SIGINT/SIGTERM)."""
    with _LIVE_LOCK:
        live = list(_LIVE)
        _LIVE.clear()
    for name in live:
        with contextlib.suppress(OSError):
            os.unlink(name)


# Folders whose files this process's workers write, where this process itself
# may write nothing: the frame store (its workers keep frames and scene records
# under ``ab/`` and ``inputs/<kind>/``). Swept, with what lies below them, on a signal.
_WORKERS_WRITE: set[str] = set()


def workers_write_under(directory: Path | str) -> None:
    """Have :func:`remove_dead_temps` sweep ``directory`` and the folders below it."""
    _WORKERS_WRITE.add(os.path.abspath(directory))


def remove_dead_temps() -> None:
    """Sweep again every directory this process has written into, and every one
    below a folder its workers write under (called on SIGINT/SIGTERM once the
    workers are killed): a worker killed in the middle of a write leaves its temp
    file there."""
    directories = set(_SWEPT)
    for top in list(_WORKERS_WRITE):  # not following links: only what lies there
        directories.update(folder for folder, _subs, _names in os.walk(top))
    for directory in sorted(directories):
        sweep_directory(directory)


def _temp_name(target: Path, suffix: str) -> str:
    """A fresh temp name beside ``target`` (``.<name>.<pid>.<random><suffix>``)."""
    return (f"{os.path.join(target.parent, _temp_prefix(target))}"
            f"{next(tempfile._get_candidate_names())}{suffix}")


def _in_its_directory(target: Path, create: Callable[[], T]) -> T:
    """Run ``create`` (which makes a file beside ``target``) in a directory that
    exists: this process makes and sweeps a directory at its first write there
    only, so one removed since (a user clearing an output folder) is made again
    and ``create`` retried once."""
    directory = os.path.abspath(target.parent)
    if directory not in _SWEPT:
        target.parent.mkdir(parents=True, exist_ok=True)
        sweep_directory(directory)
    try:
        return create()
    except FileNotFoundError:
        target.parent.mkdir(parents=True, exist_ok=True)
        return create()


def _new_temp(target: Path, suffix: str) -> tuple[str, int]:
    """Create an empty temp file beside ``target``, known as live before it exists
    (a signal arriving in between cannot leave it behind); return its name and a
    descriptor open for writing."""
    for _ in range(100):
        name = _temp_name(target, suffix)
        with _LIVE_LOCK:
            _LIVE.add(name)
        try:
            return name, os.open(name, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        except FileExistsError:
            pass
        except OSError:
            with _LIVE_LOCK:
                _LIVE.discard(name)
            raise
        with _LIVE_LOCK:
            _LIVE.discard(name)
    raise FileExistsError(f"no free temp name beside {target}")


def _fsync_directory(directory: Path) -> None:
    # Makes the rename itself durable; not possible (nor needed) on Windows.
    if os.name != "posix":
        return
    with contextlib.suppress(OSError):
        fd = os.open(directory, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)


@contextlib.contextmanager
def atomic_target(path: Path | str, suffix: str = ".tmp", *, code: str = "write-failed",
                  durable: bool = True) -> Iterator[Path]:
    """Yield a temp path beside ``path``; on a clean exit it replaces ``path``.

    The caller writes the temp file however it likes (PIL, PyAV, plain bytes).
    ``suffix`` lets writers that pick a format by extension see it
    (``".tmp.mp4"``). ``durable`` fsyncs the file and the directory (the
    ledger, the store); frames written by the hundred may skip it. On any
    error the temp file is removed and the target is untouched; an OS error
    becomes one ``NanoframesError`` line.

    The first write of this process into a directory sweeps it of temps left by
    killed writers (``sweep_directory``); later writes there do not list it again.
    """
    with _atomic_fd(path, suffix, code, durable) as (tmp, _fd):
        yield tmp


def write_bytes_atomic(path: Path | str, data: bytes, *, code: str = "write-failed",
                       durable: bool = True) -> None:
    """Write ``data`` to ``path`` as :func:`atomic_target` does, through the
    descriptor that created the temp file: frames and cache entries are written
    by the hundred, and opening each temp file a second time cost as much as
    writing it."""
    with _atomic_fd(path, ".tmp", code, durable) as (_tmp, fd), \
            open(fd, "wb", closefd=False) as fh:
        fh.write(data)


def link_atomic(source: Path | str, target: Path | str) -> bool:
    """Make ``target`` a hard link of the file ``source`` (replacing whatever
    ``target`` was in one step); False, and nothing changed, where that cannot
    be done (another file system, no hard links there, ``source`` gone), so the
    caller writes a copy instead. The frame cache keeps the PNG files
    ``render -o`` wrote this way instead of writing their bytes again."""
    target = Path(target)
    name = _temp_name(target, ".tmp")
    with _LIVE_LOCK:
        _LIVE.add(name)
    linked = False
    try:
        _in_its_directory(target, lambda: os.link(source, name))
        linked = True
        os.replace(name, target)
        if os.path.lexists(name):  # target was already this file: rename did nothing
            os.unlink(name)
        return True
    except OSError:
        if linked:
            with contextlib.suppress(OSError):
                os.unlink(name)
        return False
    finally:
        with _LIVE_LOCK:
            _LIVE.discard(name)


@contextlib.contextmanager
def _atomic_fd(path: Path | str, suffix: str, code: str, durable: bool
               ) -> Iterator[tuple[Path, int]]:
    """A new temp file beside ``path``, as its path and a descriptor open for
    writing (this function closes it; fsync through it reaches whatever was
    written by path too); renamed over ``path`` on a clean exit."""
    target = Path(path)
    try:
        mode = os.stat(target).st_mode
    except FileNotFoundError:
        mode = new_file_mode()
    except OSError as exc:
        raise write_failed(exc, target, code) from None
    else:
        if stat.S_ISDIR(mode):
            raise NanoframesError(code, "cannot write: is a directory, not a file", target)
        mode &= 0o777
    try:
        name, fd = _in_its_directory(target, lambda: _new_temp(target, suffix))
    except OSError as exc:
        raise write_failed(exc, target, code) from None
    tmp = Path(name)
    replaced = False
    try:
        try:
            yield tmp, fd
            if durable:
                os.fsync(fd)
        finally:
            os.close(fd)
        os.chmod(tmp, mode)
        os.replace(tmp, target)
        replaced = True
        if durable:
            _fsync_directory(target.parent)
    except OSError as exc:
        raise write_failed(exc, target, code) from None
    finally:
        with _LIVE_LOCK:
            _LIVE.discard(name)
        if not replaced:
            with contextlib.suppress(OSError):
                tmp.unlink()
