"""``tests/digests.json``: read, validate, merge, and write atomically.

The ledger is the record a check compares against, so it is read strictly (a
hand-edit or a bad merge is an error naming the key and field, never a silent
guess) and written so that a crash leaves either the old or the new file.
"""

from __future__ import annotations

import dataclasses
import hashlib
import json
import os
import re
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from itertools import pairwise
from pathlib import Path
from typing import Any

from ..errors import NanoframesError
from ..files import write_bytes_atomic
from ..frames.digest import SHORT
from ..keys import canonical_key
from .identity import TOOLCHAIN_PARTS, VIDEO_PARTS, is_linked_part
from .ledger_text import (  # noqa: F401  (conflict_line re-exported)
    check_depth,
    conflict_line,
    decode,
    duplicate_at,
    read_bytes,
    recovery_hint,
)

# Version 2 adds platform entries ("platforms" inside an entry). A ledger without
# any is still written as version 1, byte for byte as before, so older
# nanoframes keep reading it; both versions are read.
LEDGER_VERSION = 2
PLAIN_VERSION = 1
READ_VERSIONS = (PLAIN_VERSION, LEDGER_VERSION)

IDENTITY_KEYS = ("source", "media", "fonts", "toolchain")


def is_test_key(key: str) -> bool:
    """An entry recorded by a test (pytest's ``nf.check``), keyed by its node id
    (``tests/test_charts.py::test_bar[de]``), not by a composition file: the
    plugin, which sees the tests, decides when it is stale."""
    return "::" in key


_ENTRY_KEYS = {"digest", "frames", "sampled", "samples", "identity", "toolchain_parts",
               "frame_digests", "scene_digests", "platforms", "seal"}
# The end of the message of an entry whose parts disagree with its seal.
SEAL_BROKEN = ("do not match its seal (hand-edited?); re-record it with `nanoframes digest "
               "--record --force`, or `pytest --nf-record --nf-force`")


def seal(digest: str, frames: int, samples: tuple[int, ...] | None,
         frame_digests: tuple[str, ...], scene_digests: tuple[str, ...] | None = None) -> str:
    """What ties an entry's frame list to its film digest. The film digest hashes
    full frame digests and the ledger keeps prefixes, so it cannot be recomputed
    from them: the seal hashes the film digest, the frame count, the sample indices
    and the frame digest prefixes together, and an entry that disagrees with its
    seal (a frame digest or the ``frames`` count edited by hand) is corrupt. Scene
    digests, where an entry has them, are sealed after a line ``scenes``; an entry
    without them seals as it always did."""
    scenes = ["scenes", *scene_digests] if scene_digests is not None else []
    text = "\n".join([digest, str(frames), ",".join(map(str, samples or ())),
                      *frame_digests, *scenes])
    return hashlib.sha256(text.encode("ascii")).hexdigest()
_TAG = re.compile(r"[a-z0-9][a-z0-9._-]{0,63}")  # as platforms.valid_tag
_HEX = frozenset("0123456789abcdef")


def _is_hex(value: object, length: int) -> bool:
    return isinstance(value, str) and len(value) == length and set(value) <= _HEX


def _all_hex(values: list, length: int) -> bool:
    """``_is_hex`` of every value, the alphabet checked once over their joined text
    (a ledger holds one prefix per frame: thousands, read by every process that judges)."""
    return all(isinstance(v, str) and len(v) == length for v in values) \
        and set("".join(values)) <= _HEX


def _is_int(value: object) -> bool:
    return isinstance(value, int) and not isinstance(value, bool)


@dataclass(frozen=True)
class Entry:
    """One composition's record. ``frame_digests`` holds the first ``SHORT`` hex
    of each frame digest: every frame, or one per sampled index."""

    digest: str
    frames: int
    sampled: bool
    samples: tuple[int, ...] | None
    identity: dict[str, str]
    toolchain_parts: dict[str, str]
    frame_digests: tuple[str, ...]
    # Platform entries by tag (``linux-x86_64``): another machine's reading of the
    # same film, beside this primary one (platform entries have none of their own).
    platforms: Mapping[str, Entry] = field(default_factory=dict)
    # The first ``SHORT`` hex of each frame's scene digest (frames/scenes.py), one per
    # index; None in an entry recorded before scene digests were.
    scene_digests: tuple[str, ...] | None = None

    @property
    def primary(self) -> Entry:
        """This entry without its platform entries."""
        return dataclasses.replace(self, platforms={}) if self.platforms else self

    def inputs(self) -> tuple[str, str, str]:
        """Source, media and fonts: what a platform entry must share with a reading."""
        return (self.identity["source"], self.identity["media"], self.identity["fonts"])

    @property
    def indices(self) -> tuple[int, ...]:
        """The frame indices ``frame_digests`` describe."""
        return self.samples if self.samples is not None else tuple(range(self.frames))

    def to_json(self) -> dict[str, Any]:
        data: dict[str, Any] = {
            "digest": self.digest,
            "frames": self.frames,
            "sampled": self.sampled,
            "identity": dict(self.identity),
            "toolchain_parts": dict(self.toolchain_parts),
            "frame_digests": list(self.frame_digests),
            "seal": seal(self.digest, self.frames, self.samples, self.frame_digests,
                         self.scene_digests),
        }
        if self.scene_digests is not None:
            data["scene_digests"] = list(self.scene_digests)
        if self.samples is not None:
            data["samples"] = list(self.samples)
        if self.platforms:
            data["platforms"] = {tag: entry.to_json()
                                 for tag, entry in sorted(self.platforms.items())}
        return data

    @classmethod
    def from_json(cls, key: str, data: object, file: str | Path | None = None,
                  *, platform: str | None = None) -> Entry:
        """Validate one entry strictly; 'ledger-invalid' names the key and the field
        (and the platform, for a platform entry)."""
        where = f"entry {key!r}" + (f" platform {platform!r}" if platform else "")

        def bad(what: str) -> NanoframesError:
            return NanoframesError("ledger-invalid", f"{where}: {what}", file)

        if not isinstance(data, dict):
            raise bad("must be an object")
        unknown = sorted(set(data) - _ENTRY_KEYS)
        if unknown:
            raise bad(f"unknown field {unknown[0]!r}")
        for name in _ENTRY_KEYS - {"samples", "platforms", "seal", "scene_digests"}:
            if name not in data:
                raise bad(f"missing field {name!r}")

        digest = data["digest"]
        if not _is_hex(digest, 64):
            raise bad("field 'digest' must be 64 lowercase hex characters")
        frames = data["frames"]
        if not _is_int(frames) or frames < 1:
            raise bad("field 'frames' must be a positive integer")
        sampled = data["sampled"]
        if not isinstance(sampled, bool):
            raise bad("field 'sampled' must be true or false")

        raw_samples = data.get("samples")
        samples: tuple[int, ...] | None = None
        if sampled:
            if not isinstance(raw_samples, list) or not raw_samples:
                raise bad("field 'samples' must list the sampled frame indices")
            if not all(_is_int(i) and 0 <= i < frames for i in raw_samples):
                raise bad(f"field 'samples' must hold frame indices in 0..{frames - 1}")
            if any(a >= b for a, b in pairwise(raw_samples)):
                raise bad("field 'samples' must be strictly increasing")
            samples = tuple(raw_samples)
        elif raw_samples is not None:
            raise bad("field 'samples' is only allowed when 'sampled' is true")

        identity = data["identity"]
        if not isinstance(identity, dict) or sorted(identity) != sorted(IDENTITY_KEYS):
            raise bad(f"field 'identity' must have exactly {', '.join(IDENTITY_KEYS)}")
        for name in IDENTITY_KEYS:
            value = identity[name]
            if not (_is_hex(value, 64) or (name in ("media", "fonts") and value == "none")):
                raise bad(f"field 'identity.{name}' must be a SHA-256 hex digest"
                          + (' or "none"' if name in ("media", "fonts") else ""))

        parts = data["toolchain_parts"]
        names = TOOLCHAIN_PARTS + (VIDEO_PARTS if isinstance(parts, dict)
                                   and any(p in parts for p in VIDEO_PARTS) else ())
        # ... then one part per shared library the rasterizer ran with (engine/linked.py)
        names += tuple(sorted(n for n in parts if isinstance(n, str) and is_linked_part(n))
                       if isinstance(parts, dict) else ())
        if not isinstance(parts, dict) or sorted(parts) != sorted(names):
            raise bad(f"field 'toolchain_parts' must have exactly {', '.join(TOOLCHAIN_PARTS)}"
                      f" (and {', '.join(VIDEO_PARTS)} for a film that draws video,"
                      f" and shared libraries by soname)")
        for name in names:
            if not isinstance(parts[name], str) or not parts[name]:
                raise bad(f"field 'toolchain_parts.{name}' must be a non-empty string")

        expected = len(samples) if samples is not None else frames

        def prefixes(name: str, what: str) -> list[str]:
            values = data[name]
            if not isinstance(values, list) or not _all_hex(values, SHORT):
                raise bad(f"field '{name}' must list {SHORT}-hex {what} digest prefixes")
            if len(values) != expected:
                raise bad(f"field '{name}' has {len(values)} digests, expected {expected} "
                          f"(one per {'sample' if sampled else 'frame'})")
            return values

        frame_digests = prefixes("frame_digests", "frame")
        scene_digests = None  # absent in entries recorded before them
        if data.get("scene_digests") is not None:
            scene_digests = tuple(prefixes("scene_digests", "scene"))

        stored_seal = data.get("seal")  # absent in entries written before it existed
        if stored_seal is not None and stored_seal != seal(digest, frames, samples,
                                                           tuple(frame_digests), scene_digests):
            raise bad(f"its frame digests, frame count or samples {SEAL_BROKEN}")

        platforms: dict[str, Entry] = {}
        raw_platforms = data.get("platforms")
        if raw_platforms is not None:
            if platform is not None:
                raise bad("a platform entry cannot hold platform entries")
            if not isinstance(raw_platforms, dict) or not raw_platforms:
                raise bad("field 'platforms' must map platform tags to entries")
            for tag, sub in sorted(raw_platforms.items()):
                if not isinstance(tag, str) or not _TAG.fullmatch(tag):
                    raise bad(f"platform tag {tag!r} must be lowercase letters, digits, "
                              "'.', '_' or '-'")
                platforms[tag] = cls.from_json(key, sub, file, platform=tag)

        return cls(
            digest=digest,
            frames=frames,
            sampled=sampled,
            samples=samples,
            identity={name: identity[name] for name in IDENTITY_KEYS},
            toolchain_parts={name: parts[name] for name in names},
            frame_digests=tuple(frame_digests),
            platforms=platforms,
            scene_digests=scene_digests,
        )


@dataclass
class Ledger:
    path: Path
    entries: dict[str, Entry] = field(default_factory=dict)
    corrupt: list[str] = field(default_factory=list)  # read with skip_corrupt: left out
    recovered: str = ""  # what recording --force made of an unreadable file


@dataclass(frozen=True)
class RecordSummary:
    """What a merge did, each a sorted list of keys."""

    added: list[str]
    updated: list[str]
    unchanged: list[str]
    removed: list[str]

    @property
    def changed(self) -> bool:
        return bool(self.added or self.updated or self.removed)


def _no_duplicates(pairs: list[tuple[str, Any]]) -> dict[str, Any]:
    # json.loads keeps the last of two equal keys; in a ledger that is a bad merge.
    out: dict[str, Any] = {}
    for key, value in pairs:
        if key in out:
            raise NanoframesError("ledger-invalid", f"duplicate key {key!r}")
        out[key] = value
    return out


def _line_of(text: str, key: str) -> int | None:
    """The line where ``"key":`` first appears, to point an error at its entry."""
    at = text.find(json.dumps(key, ensure_ascii=False) + ":")
    return text.count("\n", 0, at) + 1 if at >= 0 else None


def read_ledger(path: Path, *, empty_ok: bool = False, skip_corrupt: bool = False) -> Ledger:
    """The ledger at ``path``; an empty one when the file does not exist (or, with
    ``empty_ok``, when it is ``/dev/null``: a merge base). Read through the one
    bounded reader (``ledger_text.read_text``). With ``skip_corrupt``, entries whose
    seal does not match are left out and named in ``Ledger.corrupt``."""
    path = Path(path)
    if empty_ok and str(path) == os.devnull:
        return Ledger(path, {})
    try:
        raw = read_bytes(path)
    except FileNotFoundError:
        return Ledger(path, {})
    except IsADirectoryError:
        raise NanoframesError("ledger-unreadable", "cannot read the ledger: it is a directory",
                              path) from None
    except OSError as exc:
        raise NanoframesError("ledger-unreadable", f"cannot read the ledger: {exc.strerror}",
                              path) from None
    if empty_ok and not raw.strip():
        return Ledger(path, {})
    text = decode(raw, path)
    check_depth(text, path)
    conflict = conflict_line(text)
    if conflict is not None:
        # Checked before the JSON: "Expecting property name" would hide what happened.
        raise NanoframesError("ledger-conflict", f"unresolved merge conflict at line {conflict}: "
                              f"{recovery_hint(path)}", path, conflict)
    return parse_ledger(text, path, skip_corrupt=skip_corrupt)


def parse_ledger(text: str, path: Path, *, skip_corrupt: bool = False) -> Ledger:
    """A ledger from its text (bounded and depth-checked by the caller)."""
    try:
        doc = json.loads(text, object_pairs_hook=_no_duplicates)
    except json.JSONDecodeError as exc:
        raise NanoframesError("ledger-corrupt", f"not valid JSON: {exc.msg}", path,
                              exc.lineno, exc.colno) from None
    except NanoframesError as exc:  # a duplicate key
        line, column = duplicate_at(text) or (None, None)
        raise NanoframesError(exc.code, exc.message, path, line, column) from None

    if not isinstance(doc, dict):
        raise NanoframesError("ledger-invalid", "the ledger must be a JSON object", path)
    version = doc.get("version")
    if not _is_int(version):
        raise NanoframesError("ledger-invalid", "missing or non-integer 'version'", path)
    if version not in READ_VERSIONS:
        raise NanoframesError(
            "ledger-invalid",
            f"ledger version {version} is not supported (this nanoframes reads versions "
            f"{', '.join(map(str, READ_VERSIONS))})", path)
    unknown = sorted(set(doc) - {"version", "compositions"})
    if unknown:
        raise NanoframesError("ledger-invalid", f"unknown top-level field {unknown[0]!r}", path)
    compositions = doc.get("compositions")
    if not isinstance(compositions, dict):
        raise NanoframesError("ledger-invalid", "'compositions' must be an object", path)

    entries: dict[str, Entry] = {}
    corrupt: list[str] = []
    for key, data in compositions.items():
        try:
            canonical_key(key)  # as if typed by hand: inside the project, one way only
            entries[key] = Entry.from_json(key, data, path)
        except NanoframesError as exc:
            if skip_corrupt and (exc.message.endswith(SEAL_BROKEN) or exc.code == "key-invalid"):
                corrupt.append(key)
                continue
            raise NanoframesError(exc.code, exc.message, path, _line_of(text, key)) from None
    return Ledger(path, entries, sorted(corrupt))


def dumps(ledger: Ledger) -> str:
    """The exact text ``write_ledger`` writes: sorted keys, 2-space indent, newline-ended."""
    plain = not any(entry.platforms for entry in ledger.entries.values())
    doc = {
        "version": PLAIN_VERSION if plain else LEDGER_VERSION,
        "compositions": {key: entry.to_json() for key, entry in ledger.entries.items()},
    }
    return json.dumps(doc, indent=2, sort_keys=True, ensure_ascii=False) + "\n"


def write_ledger(ledger: Ledger) -> None:
    """Write atomically (``files.atomic_target``): a crash at any moment leaves the
    old ledger or the new one, never a torn file; a failed write is one line."""
    write_bytes_atomic(ledger.path, dumps(ledger).encode("utf-8"), code="ledger-write")


def merge(
    old: Ledger, updates: Mapping[str, Entry], remove: Iterable[str] = ()
) -> tuple[Ledger, RecordSummary]:
    """A new ledger with ``updates`` applied and ``remove`` dropped; ``old`` is untouched."""
    remove = set(remove)
    both = remove & set(updates)
    if both:
        raise ValueError(f"both updated and removed: {sorted(both)}")
    entries = dict(old.entries)
    added: list[str] = []
    updated: list[str] = []
    unchanged: list[str] = []
    removed = sorted(key for key in remove if key in entries)
    for key in removed:
        del entries[key]
    for key, entry in updates.items():
        previous = entries.get(key)
        if previous is None:
            added.append(key)
        elif previous == entry:
            unchanged.append(key)
        else:
            updated.append(key)
        entries[key] = entry
    summary = RecordSummary(sorted(added), sorted(updated), sorted(unchanged), removed)
    return Ledger(old.path, dict(sorted(entries.items()))), summary
