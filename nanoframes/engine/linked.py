"""The shared libraries libthorvg runs with: what it links, and what is preloaded.

libthorvg calls the system's libm (``sinf``, ``cosf``, ``atan2f``, ...), libstdc++
and libc through the dynamic linker, and a library preloaded into the process
(``LD_PRELOAD``, ``/etc/ld.so.preload``) can take over any of those symbols: each
can move a pixel while every other input stays put. So each is a toolchain part
of its own, hashed by its file's bytes.

Which files: libthorvg's ``DT_NEEDED`` entries, read from its ELF header, and
theirs in turn (the closure), each resolved as the dynamic linker resolves it:
a directory of the needing object's ``DT_RUNPATH``/``DT_RPATH`` first, else
``dlopen`` of the soname in this process (an object already loaded under that
soname is the one returned, so once ThorVG is loaded the answer is exact), and
the file behind the returned handle (``dlinfo`` ``RTLD_DI_LINKMAP``). Preloaded
objects are named by the process's initial environment (``/proc/self/environ``)
and ``/etc/ld.so.preload``. Linux (ELF, glibc's ``dlinfo``) only: elsewhere
there are no such parts. The CPU's own arithmetic is not a file and is not here.
"""

from __future__ import annotations

import ctypes
import hashlib
import os
import struct
import sys
from functools import cache
from pathlib import Path

PRELOAD = "preload:"  # part-name prefix of a preloaded object
_RTLD_DI_LINKMAP = 2
_DT_NEEDED, _DT_STRTAB, _DT_RPATH, _DT_RUNPATH = 1, 5, 15, 29
_PT_LOAD, _PT_DYNAMIC = 1, 2


class _LinkMap(ctypes.Structure):  # glibc's public prefix of struct link_map
    _fields_ = [("l_addr", ctypes.c_size_t), ("l_name", ctypes.c_char_p),
                ("l_ld", ctypes.c_void_p), ("l_next", ctypes.c_void_p),
                ("l_prev", ctypes.c_void_p)]


def elf_dynamic(path: str | Path) -> tuple[list[str], list[str]]:
    """``(DT_NEEDED sonames, DT_RUNPATH or DT_RPATH directories)`` of an ELF object
    (empty for anything else: a linker script, a truncated file)."""
    data = Path(path).read_bytes()
    if data[:4] != b"\x7fELF" or data[4] not in (1, 2) or data[5] not in (1, 2):
        return [], []
    wide, order = data[4] == 2, "<" if data[5] == 1 else ">"
    try:
        if wide:
            phoff, = struct.unpack_from(order + "Q", data, 0x20)
            phentsize, phnum = struct.unpack_from(order + "HH", data, 0x36)
            header, entry = order + "IIQQQQQQ", order + "qQ"
        else:
            phoff, = struct.unpack_from(order + "I", data, 0x1C)
            phentsize, phnum = struct.unpack_from(order + "HH", data, 0x2A)
            header, entry = order + "IIIIIIII", order + "iI"
        loads, dynamic = [], None
        for i in range(phnum):
            fields = struct.unpack_from(header, data, phoff + i * phentsize)
            if wide:
                kind, offset, vaddr, filesz = fields[0], fields[2], fields[3], fields[5]
            else:
                kind, offset, vaddr, filesz = fields[0], fields[1], fields[2], fields[4]
            if kind == _PT_LOAD:
                loads.append((vaddr, offset, filesz))
            elif kind == _PT_DYNAMIC:
                dynamic = (offset, filesz)
        if dynamic is None:
            return [], []
        tags: list[tuple[int, int]] = []
        size = struct.calcsize(entry)
        for at in range(dynamic[0], dynamic[0] + dynamic[1], size):
            tag, value = struct.unpack_from(entry, data, at)
            if tag == 0:
                break
            tags.append((tag, value))
        strtab = next(v for t, v in tags if t == _DT_STRTAB)
        base = next(o + strtab - v for v, o, n in loads if v <= strtab < v + n)

        def text(offset: int) -> str:
            end = data.index(b"\0", base + offset)
            return data[base + offset:end].decode("utf-8", "replace")

        needed = [text(v) for t, v in tags if t == _DT_NEEDED]
        paths = [text(v) for t, v in tags if t == _DT_RUNPATH] or \
                [text(v) for t, v in tags if t == _DT_RPATH]
    except (struct.error, StopIteration, ValueError):
        return [], []
    origin = str(Path(path).resolve().parent)
    dirs = [d.replace("$ORIGIN", origin).replace("${ORIGIN}", origin)
            for p in paths for d in p.split(":") if d]
    return needed, dirs


def _dlinfo():
    for name in (None, "libdl.so.2"):
        try:
            function = ctypes.CDLL(name).dlinfo
        except (OSError, AttributeError):
            continue
        function.argtypes = [ctypes.c_void_p, ctypes.c_int, ctypes.c_void_p]
        function.restype = ctypes.c_int
        return function
    return None


def loaded_path(soname: str) -> Path | None:
    """The file the dynamic linker gives for ``soname`` in this process (None: none)."""
    dlinfo = _dlinfo()
    if dlinfo is None:
        return None
    try:
        handle = ctypes.CDLL(soname, mode=os.RTLD_LAZY | os.RTLD_LOCAL)
    except OSError:
        return None
    link = ctypes.POINTER(_LinkMap)()
    if dlinfo(handle._handle, _RTLD_DI_LINKMAP, ctypes.byref(link)) != 0 or not link:
        return None
    name = link.contents.l_name
    return Path(os.fsdecode(name)).resolve() if name else None


def _resolve(soname: str, dirs: list[str]) -> Path | None:
    if "/" in soname:
        return Path(soname).resolve() if Path(soname).is_file() else None
    for directory in dirs:
        candidate = Path(directory) / soname
        if candidate.is_file():
            return candidate.resolve()
    return loaded_path(soname)


def _initial_environ() -> dict[str, str]:
    """The environment the process started with (what the dynamic linker read)."""
    try:
        raw = Path("/proc/self/environ").read_bytes()
    except OSError:
        return dict(os.environ)
    pairs = (item.split(b"=", 1) for item in raw.split(b"\0") if b"=" in item)
    return {os.fsdecode(k): os.fsdecode(v) for k, v in pairs}


def preloaded() -> list[str]:
    """What the dynamic linker preloaded: ``$LD_PRELOAD``, then ``/etc/ld.so.preload``."""
    names = _initial_environ().get("LD_PRELOAD", "").replace(":", " ").split()
    try:
        names += Path("/etc/ld.so.preload").read_text().replace(":", " ").split()
    except OSError:
        pass
    return names


@cache
def _file_sha256(path: str, version: tuple[int, int, int, int]) -> str:
    """A library file's SHA-256, once per file version (path, device, inode, size, mtime)."""
    h = hashlib.sha256()
    with open(path, "rb") as fh:
        for chunk in iter(lambda: fh.read(1 << 20), b""):
            h.update(chunk)
    return h.hexdigest()


def file_sha256(path: Path) -> str:
    st = path.stat()
    return _file_sha256(str(path), (st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns))


def linked_parts(library: Path) -> dict[str, str]:
    """``{soname: sha256}`` for libthorvg's closure of linked libraries, and
    ``{"preload:NAME": sha256}`` for each preloaded object; empty off Linux.
    A soname the linker cannot resolve here reads ``"unresolved"`` (it would not load)."""
    if not sys.platform.startswith("linux"):
        return {}
    parts: dict[str, str] = {}
    for name in preloaded():
        path = _resolve(name, [])
        parts[PRELOAD + Path(name).name] = file_sha256(path) if path else "unresolved"
    seen: set[str] = set()
    queue = [library]
    while queue:
        needed, dirs = elf_dynamic(queue.pop())
        for soname in needed:
            if soname in seen:
                continue
            seen.add(soname)
            path = _resolve(soname, dirs)
            parts[soname] = file_sha256(path) if path else "unresolved"
            if path is not None:
                queue.append(path)
    return dict(sorted(parts.items()))
