"""Pending readings: what a check read for every composition that did not match.

A check keeps each such fresh reading (its entry as it would be recorded, its
verdict with the evidence, the machine's platform tag, its full frame digests)
in ``.nanoframes/pending/readings.json``, and in ``DIR/pending/`` with its frames
as PNGs (and the scenes the check diffed, frames/scenes.py) when artifacts
are asked for, so a person (or ``accept --from`` on
another machine) can accept it later without drawing it again. A pending
reading never touches the ledger; each check replaces the file.
"""

from __future__ import annotations

import json
import lzma
import os
import shutil
import zipfile
import zlib
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ..config import state_dir
from ..errors import NanoframesError
from ..files import TooLarge, loads_limited, read_limited, write_bytes_atomic
from ..keys import canonical_key
from .ledger import Entry
from .verdict import Kind, Reading, Verdict

READINGS = "readings.json"
SEAL = "readings.mac"  # HMAC-SHA256 of readings.json under this machine's key (origin.py)
FRAMES = "frames"
SCENES = "scenes"  # beside frames/: <scene digest>.z, one self-contained file each
VERSION = 1
MAX_READINGS = 64 << 20  # a readings file is text: a larger one is not one
MAX_FRAME = 256 << 20
MAX_DEPTH = 32  # a readings file nests about 10 deep


@dataclass(frozen=True)
class Pending:
    """One composition's pending reading."""

    key: str
    entry: Entry
    verdict: Mapping[str, Any]   # policy.verdict_to_json: kind, reasons, evidence
    platform: str                # the tag of the machine that read it
    frames: tuple[str, ...]      # full frame digests, one per distinct frame
    scenes: tuple[str, ...] = ()  # full scene digests, one per distinct scene

    @property
    def kind(self) -> Kind:
        return Kind(self.verdict["verdict"])

    def to_json(self) -> dict[str, Any]:
        return {"entry": self.entry.to_json(), "verdict": dict(self.verdict),
                "platform": self.platform, "frames": list(self.frames),
                "scenes": list(self.scenes)}


def local_dir(root: Path) -> Path:
    return state_dir(root) / "pending"


def is_pending(verdict: Verdict) -> bool:
    """A verdict whose fresh reading is kept: anything but a plain match, an error
    (nothing was read) or a stale entry (nothing to read)."""
    if verdict.kind in (Kind.ERROR, Kind.STALE):
        return False
    return not (verdict.kind is Kind.MATCH and not verdict.reasons)


def pending_of(verdicts: Iterable[Verdict], readings: Mapping[str, Reading],
               platform: str) -> list[Pending]:
    from .policy import verdict_to_json
    from .reading import entry_from_reading

    out = []
    for verdict in verdicts:
        reading = readings.get(verdict.key)
        if reading is None or not is_pending(verdict):
            continue
        out.append(Pending(verdict.key, entry_from_reading(reading), verdict_to_json(verdict),
                           platform, frames_of(reading),
                           tuple(sorted(set(reading.scene_digests)))))
    return out


def frames_of(reading: Reading) -> tuple[str, ...]:
    return tuple(sorted(set(reading.frame_digests)))


def save(directory: Path, pending: list[Pending], store_root: Path | None = None,
         with_frames: bool = False, report: Path | None = None) -> Path:
    """Replace ``directory``'s pending readings with ``pending``; ``with_frames``:
    copy each one's frames from the store beside them (artifacts travel alone)."""
    directory = Path(directory)
    frames, scenes = directory / FRAMES, directory / SCENES
    for folder in (frames, scenes):
        if folder.is_dir():
            shutil.rmtree(folder, ignore_errors=True)
    if with_frames and store_root is not None:
        from ..frames.scenes import portable, recorded_scene
        from ..frames.store import Store

        store = Store(store_root, warn=None)
        for item in pending:
            for digest in item.frames:
                try:  # bounded, a regular file only: a FIFO in the store never blocks
                    data = read_limited(store.path_for(digest), MAX_FRAME)
                except OSError:
                    continue
                write_bytes_atomic(frames / f"{digest}.png", data, code="output-failed",
                                   durable=False)
            for digest in item.scenes:  # those the store holds: the ones a check diffed
                document = recorded_scene(store, digest)
                if document is not None:
                    write_bytes_atomic(scenes / f"{digest}.z", portable(document),
                                       code="output-failed", durable=False)
    data = {"version": VERSION, "readings": {p.key: p.to_json() for p in
                                             sorted(pending, key=lambda p: p.key)}}
    if report is not None:  # the check's HTML page: review opens each one's section
        data["report"] = Path(report).absolute().as_uri()
    path = directory / READINGS
    raw = (json.dumps(data, indent=2, sort_keys=True) + "\n").encode()
    write_bytes_atomic(path, raw, code="output-failed")
    from .origin import sign

    write_bytes_atomic(directory / SEAL, sign(raw).encode() + b"\n", code="output-failed")
    return path


class Source:
    """Where pending readings are read from: a folder (``.nanoframes/pending``, an
    artifacts folder, or one with ``pending/`` inside) or a zip of one."""

    def __init__(self, path: Path, own: bool = False) -> None:
        self.path = Path(path)
        self.own = own  # the project's own readings: written by a check on this machine
        self._zip: zipfile.ZipFile | None = None
        self.report: str | None = None  # the page of the check that read them
        self._prefix = ""
        if self.path.is_file():
            try:
                self._zip = zipfile.ZipFile(self.path)
            except (zipfile.BadZipFile, OSError) as exc:
                raise NanoframesError("pending-unreadable", f"not a folder or a zip of CI "
                                      f"artifacts ({exc})", self.path) from None
            names = sorted((n for n in self._zip.namelist()
                            if PurePosixPath(n).name == READINGS), key=len)
            if not names:
                raise self._none()
            self._prefix = names[0][: -len(READINGS)]
        elif self.path.is_dir():
            for folder in (self.path, self.path / "pending"):
                if os.path.lexists(folder / READINGS):  # read (and refused) if not a file
                    self.path = folder
                    break
            else:
                raise self._none()
        else:
            raise NanoframesError("pending-unreadable", "no such folder or zip", self.path)

    def _none(self) -> NanoframesError:
        return NanoframesError("pending-none", f"no pending readings ({READINGS}) here: run "
                               "a check first (with --artifacts DIR in CI)", self.path)

    def read(self, name: str, limit: int) -> bytes | None:
        """The bytes of ``name`` here; None where there is no such file. One
        ``pending-unreadable`` line where there is one that cannot be read whole
        within ``limit``: past it, not a regular file (a FIFO is never opened for
        a read that would wait), an encrypted or corrupt zip member."""
        try:
            if self._zip is not None:
                try:
                    info = self._zip.getinfo(self._prefix + name)
                except KeyError:
                    return None
                if info.file_size > limit:
                    raise TooLarge(name, limit)
                with self._zip.open(info) as member:  # the declared size may lie
                    data = member.read(limit + 1)
                if len(data) > limit:
                    raise TooLarge(name, limit)
                return data
            path = self.path / name
            return read_limited(path, limit) if os.path.lexists(path) else None
        except (OSError, EOFError, RuntimeError, NotImplementedError, zipfile.BadZipFile,
                zlib.error, lzma.LZMAError) as exc:  # RuntimeError: encrypted
            reason = exc.strerror if isinstance(exc, OSError) and exc.strerror else exc
            raise NanoframesError("pending-unreadable", f"{name} cannot be read ({reason})",
                                  self.path) from None

    def readings(self) -> dict[str, Pending]:
        raw = self.read(READINGS, MAX_READINGS)
        if raw is None:
            raise self._none()
        if self.own:
            from .origin import verify

            verify(raw, self.read(SEAL, 1024), self.path / READINGS)
        try:
            data = loads_limited(raw, MAX_DEPTH)
            if data.get("version") != VERSION:
                raise ValueError(f"version {data.get('version')!r}, expected {VERSION}")
            self.report = data.get("report") if self._zip is None else None
            return {canonical_key(key, self.path): _pending(key, item, self.path)
                    for key, item in data["readings"].items()}
        except NanoframesError:
            raise
        except (ValueError, KeyError, TypeError, AttributeError, RecursionError) as exc:
            raise NanoframesError("pending-unreadable", f"{READINGS} cannot be read ({exc})",
                                  self.path) from None

    def frame(self, digest: str) -> bytes | None:
        return self.read(f"{FRAMES}/{digest}.png", MAX_FRAME)

    def scene(self, digest: str) -> bytes | None:
        return self.read(f"{SCENES}/{digest}.z", MAX_FRAME)


def _pending(key: str, item: Any, path: Path) -> Pending:
    """One reading as a person would have typed it: its verdict a known kind, its
    platform a valid tag (platforms.valid_tag), its digests 64 hex digits."""
    from .platforms import valid_tag

    verdict = item["verdict"]
    if not isinstance(verdict, dict) or verdict.get("verdict") not in {k.value for k in Kind}:
        raise ValueError(f"{key!r}: 'verdict' must be an object naming a known verdict")
    platform = item["platform"]
    try:
        valid_tag(platform, f"{key!r}: platform tag")
    except NanoframesError as exc:
        raise NanoframesError(exc.code, exc.message, path) from None
    return Pending(key, Entry.from_json(key, item["entry"], path), verdict, platform,
                   _digests(item["frames"]), _digests(item.get("scenes", ())))


def _digests(values) -> tuple[str, ...]:
    """Full digests as a readings file lists them: each one names a file here, so
    nothing but 64 hex digits may (never a path out of the folder)."""
    from ..frames.store import is_digest

    if not isinstance(values, list) or not all(isinstance(d, str) and is_digest(d)
                                               for d in values):
        raise ValueError("frames and scenes must list 64-hex digests")
    return tuple(values)


def load(root: Path, source: Path | None = None) -> tuple[Source, dict[str, Pending]]:
    """The pending readings of ``source`` (default: the project's own)."""
    found = Source(source if source is not None else local_dir(root), own=source is None)
    return found, found.readings()


def forget(root: Path, keys: Iterable[str]) -> None:
    """Drop ``keys`` from the project's own pending readings (accepted or rejected)."""
    keys = set(keys)
    try:
        found, pending = load(root)
    except NanoframesError:
        return
    kept = [p for k, p in pending.items() if k not in keys]
    save(found.path, kept, report=_path_of(found.report))


def _path_of(uri: str | None) -> Path | None:
    from urllib.parse import unquote, urlparse

    return Path(unquote(urlparse(uri).path)) if uri else None


def keep(verdicts: Iterable[Verdict], readings: Mapping[str, Reading], root: Path,
         store_root: Path | None, artifacts: Path | None = None,
         report: Path | None = None) -> list[Pending]:
    """After a check: replace the project's pending readings (and, with ``artifacts``,
    write them with their frames into ``artifacts/pending``)."""
    from .platforms import reader_tag

    return keep_all(pending_of(verdicts, readings, reader_tag()), root, store_root, artifacts,
                    report)


def keep_all(pending: list[Pending], root: Path, store_root: Path | None,
             artifacts: Path | None = None, report: Path | None = None) -> list[Pending]:
    """``keep`` for readings already made pending (the plugin's, gathered from items)."""
    state_dir(root, create=True, code="output-failed")  # with its .gitignore
    save(local_dir(root), pending, report=report)
    if artifacts is not None:
        save(Path(artifacts) / "pending", pending, store_root, with_frames=True)
    return pending
