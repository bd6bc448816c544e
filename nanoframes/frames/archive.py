"""The store as one archive: ``nanoframes store --export`` writes a tar of every
entry and input record; ``--import`` adds a tar's (gzip, bzip2 or xz too), each
verified, bounded before anything is read (docs/limits.md)."""

from __future__ import annotations

import lzma
import tarfile
import zlib
from collections.abc import Iterator
from pathlib import Path, PurePosixPath

from ..errors import NanoframesError
from ..files import atomic_target, open_regular
from .digest import frame_digest
from .store import (
    COMPRESSED_KINDS,
    MAX_COMPRESSED,
    MAX_ENTRY,
    MAX_RECORD,
    RecordCheck,
    Store,
    decode_png,
    is_digest,
    record_suffix,
)

MAX_MEMBERS = 2_500_000  # above the 2.3 million frame digests the largest ledger holds
MAX_TAR_HEADER = 1 << 20  # a pax header or GNU long name (a path, a few attributes)


class _HeaderTooLarge(tarfile.SubsequentHeaderError):
    pass


class _BoundedInfo(tarfile.TarInfo):
    """A tar header whose extended headers (read whole by ``tarfile``) are refused
    past ``MAX_TAR_HEADER`` before they are read."""

    def _proc_member(self, tar):
        if self.type in (tarfile.GNUTYPE_LONGNAME, tarfile.GNUTYPE_LONGLINK,
                         tarfile.XHDTYPE, tarfile.XGLTYPE, tarfile.SOLARIS_XHDTYPE) \
                and self.size > MAX_TAR_HEADER:
            raise _HeaderTooLarge(f"an extended header of {self.size:,} bytes "
                                  f"(over {MAX_TAR_HEADER:,})")
        return super()._proc_member(tar)


def _members(tar: tarfile.TarFile) -> Iterator[tarfile.TarInfo]:
    """The members one at a time, none kept (``tarfile`` would keep every header)."""
    while (member := tar.next()) is not None:
        tar.members = []
        yield member


def _read_member(tar: tarfile.TarFile, member: tarfile.TarInfo) -> bytes:
    """A member's bytes; only called within its limit, and never more than it
    declares (the stream's own size may lie)."""
    fh = tar.extractfile(member)
    return b"" if fh is None else fh.read(member.size)


def export_tar(store: Store, target: Path) -> int:
    """Every entry (and input record) into an uncompressed tar (PNG is compressed
    already); returns how many frames."""
    entries = list(store.entries())
    with atomic_target(target, ".tmp.tar", code="store-write-failed") as tmp, \
            tarfile.open(tmp, "w", format=tarfile.PAX_FORMAT) as tar:
        for path in [*entries, *store.records()]:
            info = tar.gettarinfo(str(path), arcname=path.relative_to(store.root).as_posix())
            info.uid = info.gid = 0
            info.uname = info.gname = ""
            info.mtime = 0
            with open_regular(path) as fh:
                tar.addfile(info, fh)
    return len(entries)


def import_tar(store: Store, source: Path, record_check: RecordCheck | None = None
               ) -> tuple[int, list[str]]:
    """Add a tar's entries, each verified; returns (added, rejected member names).

    Only members named ``xx/<64 hex>.png`` (regular files) are read, so no
    member can write outside the store (no ``..``, no absolute path, no link).
    With ``record_check`` (kind, digest, bytes -> believed), input records
    named ``inputs/<kind>/<64 hex>.json`` come along too, each checked by it.

    Bounded before anything is read (docs/limits.md): the archive is a regular
    file (never a FIFO); a member is read only if the size its header declares
    is within its kind's limit (a frame ``MAX_ENTRY``, a record ``MAX_RECORD`` or
    ``MAX_COMPRESSED``), else rejected unread (gzip, bzip2 and xz stream past
    it); an extended header (pax, GNU long name) over ``MAX_TAR_HEADER`` and an
    archive of more than ``MAX_MEMBERS`` members are ``store-import-failed``.
    """
    added, rejected = 0, []
    try:
        fh = open_regular(source)
    except OSError as exc:
        raise NanoframesError("store-import-failed", f"cannot read the archive: "
                              f"{exc.strerror or exc}", source) from None
    try:
        with fh, tarfile.open(fileobj=fh, mode=_mode(fh), tarinfo=_BoundedInfo) as tar:
            for count, member in enumerate(_members(tar), 1):
                if count > MAX_MEMBERS:
                    raise tarfile.ReadError(f"more than {MAX_MEMBERS:,} members")
                added += _import_member(store, tar, member, record_check, rejected)
    except (OSError, EOFError, tarfile.TarError, zlib.error, lzma.LZMAError) as exc:
        reason = " ".join(str(exc).split())  # one line, whatever the library said
        raise NanoframesError("store-import-failed", f"cannot read the archive: {reason}",
                              source) from None
    return added, rejected


_MAGIC = ((b"\x1f\x8b", "r:gz"), (b"BZh", "r:bz2"), (b"\xfd7zXZ\x00", "r:xz"))


def _mode(fh) -> str:
    """The tar's compression, from its first bytes (a plain tar otherwise): one
    reader's error, not one per compression tried."""
    head = fh.read(6)
    fh.seek(0)
    return next((mode for magic, mode in _MAGIC if head.startswith(magic)), "r:")


def _import_member(store: Store, tar: tarfile.TarFile, member: tarfile.TarInfo,
                   record_check: RecordCheck | None, rejected: list[str]) -> int:
    """Import one member (1: a frame added); a rejected one is named in ``rejected``."""
    name = PurePosixPath(member.name)
    if record_check is not None and _record_member(member, name):
        data = _read_member(tar, member)
        kind = name.parts[1]
        if not record_check(kind, name.stem, data):
            rejected.append(member.name)
        elif not store.put_record(kind, name.stem, data):
            raise NanoframesError("store-write-failed",
                                  f"cannot write the store: {store.write_problem}", store.root)
        return 0
    if not _safe_member(member, name):
        if not member.isdir():
            rejected.append(member.name)
        return 0
    data = _read_member(tar, member)
    try:
        rgba = decode_png(data)
    except Exception:  # noqa: BLE001 - not a PNG: rejected
        rejected.append(member.name)
        return 0
    if frame_digest(rgba) != name.stem:
        rejected.append(member.name)
        return 0
    if store.has(name.stem):
        return 0
    if not store.put_png(name.stem, data):
        raise NanoframesError("store-write-failed",
                              f"cannot write the store: {store.write_problem}", store.root)
    return 1


def _record_member(member: tarfile.TarInfo, name: PurePosixPath) -> bool:
    if not (member.isfile() and not name.is_absolute() and len(name.parts) == 3
            and name.parts[0] == "inputs" and name.parts[1].isidentifier()
            and is_digest(name.stem)):
        return False
    kind = name.parts[1]
    limit = MAX_COMPRESSED if kind in COMPRESSED_KINDS else MAX_RECORD
    return name.suffix == record_suffix(kind) and member.size <= limit


def _safe_member(member: tarfile.TarInfo, name: PurePosixPath) -> bool:
    return (member.isfile() and member.size <= MAX_ENTRY and not name.is_absolute()
            and len(name.parts) == 2
            and name.parts[0] == name.stem[:2] and name.suffix == ".png"
            and is_digest(name.stem))
