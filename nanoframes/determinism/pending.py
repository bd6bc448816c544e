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
import shutil
import zipfile
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from ..config import state_dir
from ..errors import NanoframesError
from ..files import write_bytes_atomic
from .ledger import Entry
from .verdict import Kind, Reading, Verdict

READINGS = "readings.json"
FRAMES = "frames"
SCENES = "scenes"  # beside frames/: <scene digest>.z, one self-contained file each
VERSION = 1
MAX_READINGS = 64 << 20  # a readings file is text: a larger one is not one
MAX_FRAME = 256 << 20


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
                source = store.path_for(digest)
                if source.is_file():
                    write_bytes_atomic(frames / f"{digest}.png", source.read_bytes(),
                                       code="output-failed", durable=False)
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
    write_bytes_atomic(path, (json.dumps(data, indent=2, sort_keys=True) + "\n").encode(),
                       code="output-failed")
    return path


class Source:
    """Where pending readings are read from: a folder (``.nanoframes/pending``, an
    artifacts folder, or one with ``pending/`` inside) or a zip of one."""

    def __init__(self, path: Path) -> None:
        self.path = Path(path)
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
                if (folder / READINGS).is_file():
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
        try:
            if self._zip is not None:
                info = self._zip.getinfo(self._prefix + name)
                if info.file_size > limit:
                    return None
                with self._zip.open(info) as member:  # the declared size may lie
                    data = member.read(limit + 1)
                return data if len(data) <= limit else None
            path = self.path / name
            if not path.is_file() or path.stat().st_size > limit:
                return None
            return path.read_bytes()
        except (KeyError, OSError, zipfile.BadZipFile):
            return None

    def readings(self) -> dict[str, Pending]:
        raw = self.read(READINGS, MAX_READINGS)
        if raw is None:
            raise self._none()
        try:
            data = json.loads(raw)
            if data.get("version") != VERSION:
                raise ValueError(f"version {data.get('version')!r}, expected {VERSION}")
            self.report = data.get("report") if self._zip is None else None
            return {key: Pending(key, Entry.from_json(key, item["entry"], self.path),
                                 item["verdict"], str(item["platform"]),
                                 _digests(item["frames"]), _digests(item.get("scenes", ())))
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
    found = Source(source if source is not None else local_dir(root))
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
