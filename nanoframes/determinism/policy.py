"""The ledger's rules, once: what a recording writes, what is stale, what is suspect.

``nanoframes digest`` and the pytest plugin both call these functions, so a
recording means the same whichever front end made it:

- a reading judged a regression is refused (re-recording must not launder the
  one verdict the ledger exists for) unless forced;
- a reading that matches its entry under the same inputs keeps the entry, unless
  it covers more frames (a full reading upgrades a sampled entry; a sampled
  reading never replaces a full entry of the same identity);
- anything else (absent, changed, forced) records the fresh reading;
- stale entries (a recorded file that is gone) are removed only by a recording
  that looked at everything;
- a platform recording (``--platform``) writes the reading as a platform entry
  beside the primary, never touching the primary, by the same rules judged
  against that platform's entry; a film that draws exactly the primary records
  nothing (the primary is that machine's entry too) and says so;
- a recording, primary or platform, drops the platform entries that draw
  exactly their primary; a primary re-recorded drops the platform entries
  taken under other inputs (or under its own toolchain), and one re-recorded
  under another toolchain says so and names ``--platform``;
- recording where ``CI`` is set must be asked for explicitly.
"""

from __future__ import annotations

import dataclasses
import importlib
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from ..errors import NanoframesError
from ..keys import canonical_key
from .ledger import Entry, Ledger, is_test_key
from .verdict import (
    Kind,
    Reading,
    Verdict,
    draws_the_primary,
    judge,
    outdated_platforms,
    platform_command,
    redundant_platforms,
)

RECORD_IN_CI_ENV = "NANOFRAMES_RECORD_IN_CI"


@dataclass(frozen=True)
class RecordPlan:
    """What a recording does to a ledger: ``updates`` by key, ``removed`` keys, and
    the regressions it ``refused`` (as judged against that same ledger)."""

    updates: dict[str, Entry]
    removed: list[str]
    refused: list[Verdict] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)  # one line each, printed by the front end


def reading_of(key: str, entry: Entry) -> Reading:
    """A fresh reading as its ledger entry records it (the frame digests shortened,
    which is all ``judge`` compares), so a recording can be re-judged under the lock."""
    return Reading(key=key, identity=dict(entry.identity),
                   toolchain_parts=dict(entry.toolchain_parts), frames=entry.frames,
                   indices=entry.indices, frame_digests=entry.frame_digests,
                   digest=entry.digest, scene_digests=entry.scene_digests or ())


def keeps_entry(fresh: Entry, recorded: Entry) -> bool:
    """A matching reading keeps the recorded entry unless it covers more frames, or
    adds the scene digests an entry recorded before them lacks."""
    if len(fresh.indices) > len(recorded.indices):
        return False
    return not (recorded.scene_digests is None and fresh.scene_digests is not None
                and fresh.indices == recorded.indices)


def stale_keys(ledger: Ledger, root: Path, seen: Iterable[str]) -> list[str]:
    """Entries not looked at whose composition file is gone (entries merely outside
    the configured globs stay: their file is still there)."""
    seen = set(seen)
    return sorted(key for key in ledger.entries  # a test's entry: the plugin judges it
                  if key not in seen and not is_test_key(key) and not _inside(root, key))


def _inside(root: Path, key: str) -> bool:
    """The film file a (canonical) key names exists inside the project (a link out
    of it names nothing the ledger may keep); ``film.lottie#on`` names ``film.lottie``."""
    from ..frames.source import file_of

    try:
        path = file_of(Path(root) / canonical_key(key))
        return path.is_file() and path.resolve().is_relative_to(Path(root).resolve())
    except (OSError, ValueError, RuntimeError):
        return False


def plan_record(ledger: Ledger, fresh: Mapping[str, Entry], *, force: bool = False,
                root: Path | None = None, seen: Iterable[str] | None = None,
                gone_tests: Iterable[str] = (), platform: str | None = None,
                record_hint: str = "--record") -> RecordPlan:
    """The recording of ``fresh`` readings (as entries, by key) into ``ledger``.

    ``seen`` (with ``root``) is given only when the recording covered everything:
    then the entries it did not see whose file is gone are removed, and so are
    ``gone_tests``: test-keyed entries whose test the plugin no longer collects.
    With ``platform`` (a tag) each reading is recorded as that platform's entry.
    """
    if platform is not None:
        return _plan_platform(ledger, fresh, platform, force, record_hint)
    updates: dict[str, Entry] = {}
    refused: list[Verdict] = []
    notes: list[str] = []
    for key in sorted(fresh):
        entry = fresh[key]
        recorded = ledger.entries.get(key)
        verdict = judge(reading_of(key, entry), recorded)
        if verdict.kind is Kind.ERROR:
            continue  # same inputs, disjoint samples: nothing to judge by; left as it is
        if verdict.kind is Kind.REGRESSION and not force:
            refused.append(verdict)
        elif (recorded is not None and verdict.kind is Kind.MATCH and not verdict.reasons
              and (verdict.platform is not None or keeps_entry(entry, recorded))):
            updates[key] = _without_outdated(key, recorded, notes)
        else:
            updates[key] = _new_primary(key, entry, recorded, notes, record_hint)
    removed: list[str] = []
    if seen is not None and root is not None:
        removed = stale_keys(ledger, root, set(seen) | set(fresh))
        removed += sorted(k for k in gone_tests if k in ledger.entries and k not in fresh)
    return RecordPlan(updates, removed, refused, notes)


def _new_primary(key: str, entry: Entry, recorded: Entry | None, notes: list[str],
                 record_hint: str) -> Entry:
    """``entry`` as the new primary: the platform entries still true of it kept."""
    if recorded is None:
        return entry
    toolchain = entry.identity["toolchain"]
    if other_renderer(entry, recorded):
        notes.append(f"{key}: recorded under another toolchain than the primary's: this "
                     f"replaces the primary entry; `{platform_command(record_hint)}` records "
                     f"this machine's reading beside it instead")
    kept = {tag: p for tag, p in recorded.platforms.items()
            if p.inputs() == entry.inputs() and p.identity["toolchain"] != toolchain}
    dropped = sorted(set(recorded.platforms) - set(kept))
    if dropped:
        notes.append(f"{key}: dropped platform entr{'y' if len(dropped) == 1 else 'ies'} "
                     f"{', '.join(dropped)} (taken under other inputs or this toolchain)")
    return _without_redundant(key, dataclasses.replace(entry, platforms=kept), notes)


def _without_redundant(key: str, entry: Entry, notes: list[str]) -> Entry:
    """``entry`` less its platform entries that draw exactly the primary."""
    same = redundant_platforms(entry)
    if not same:
        return entry
    notes.append(f"{key}: dropped platform entr{'y' if len(same) == 1 else 'ies'} "
                 f"{', '.join(same)} (draw{'s' if len(same) == 1 else ''} exactly the primary)")
    return dataclasses.replace(entry, platforms={
        tag: p for tag, p in entry.platforms.items() if tag not in same})


def _renderer_parts(entry: Entry, like: Entry | None = None) -> tuple[str, ...]:
    """What differs from machine to machine: the renderer's build and the shared
    libraries it runs with, preloads included. (An edit of nanoframes moves
    ``modules`` on every machine alike: re-recording then is routine.) The
    libraries count only where ``like`` (default: ``entry``) names any: an entry
    recorded before they were parts is re-recorded without a note; where it does,
    a library either one names counts (a preload only the reading has, too)."""
    from .identity import is_linked_part

    parts = entry.toolchain_parts or {}
    named = (like or entry).toolchain_parts or {}
    libraries = sorted({n for n in (*named, *parts) if is_linked_part(n)}) \
        if any(is_linked_part(n) for n in named) else []
    return tuple(str(parts.get(p, "")) for p in ("thorvg-python", "libthorvg", *libraries))


def other_renderer(entry: Entry, recorded: Entry) -> bool:
    """Was ``entry`` drawn by another renderer build than the primary ``recorded``
    (another machine's libthorvg or libraries, not merely an edit of nanoframes)?"""
    return _renderer_parts(recorded) != _renderer_parts(entry, like=recorded)


def _without_outdated(key: str, recorded: Entry, notes: list[str]) -> Entry:
    """The primary kept as it is, less platform entries taken under an older source."""
    outdated = outdated_platforms(recorded)
    if not outdated:
        return _without_redundant(key, recorded, notes)
    notes.append(f"{key}: dropped outdated platform entr{'y' if len(outdated) == 1 else 'ies'} "
                 f"{', '.join(outdated)} (taken under an older source)")
    return _without_redundant(key, dataclasses.replace(recorded, platforms={
        tag: p for tag, p in recorded.platforms.items() if tag not in outdated}), notes)


def _plan_platform(ledger: Ledger, fresh: Mapping[str, Entry], tag: str, force: bool,
                   record_hint: str) -> RecordPlan:
    """Each reading as ``tag``'s platform entry; the primary never touched."""
    updates: dict[str, Entry] = {}
    refused: list[Verdict] = []
    notes: list[str] = []
    for key in sorted(fresh):
        entry = fresh[key]
        recorded = ledger.entries.get(key)
        if recorded is None:
            refused.append(Verdict(key, Kind.ABSENT, digest=entry.digest, note=(
                f"a platform entry sits beside a primary entry: record that first with "
                f"{record_hint}")))
            continue
        if entry.inputs() != recorded.inputs():
            primary = judge(reading_of(key, entry), recorded.primary)
            refused.append(dataclasses.replace(primary, note=(
                f"a platform entry is taken under the primary's source, media and fonts: "
                f"record the primary first with {record_hint}")))
            continue
        if entry.identity["toolchain"] == recorded.identity["toolchain"]:
            notes.append(f"{key}: this is the primary entry's toolchain: no platform entry "
                         f"{tag} recorded (the primary is this machine's entry)")
            updates[key] = _without_redundant(key, recorded, notes)
            continue
        if draws_the_primary(entry, recorded.primary):
            notes.append(f"{key}: draws exactly the primary: no platform entry {tag} recorded "
                         f"(the primary is this machine's entry)")
            if tag in recorded.platforms:  # what this machine drew before: no longer true
                notes.append(f"{key}: dropped platform entry {tag} (this machine now draws "
                             f"the primary)")
                recorded = dataclasses.replace(recorded, platforms={
                    t: p for t, p in recorded.platforms.items() if t != tag})
            updates[key] = _without_redundant(key, recorded, notes)
            continue
        recorded = _without_redundant(key, recorded, notes)
        current = recorded.platforms.get(tag)
        verdict = judge(reading_of(key, entry), current)
        verdict = dataclasses.replace(verdict, platform=tag if current is not None else None)
        if verdict.kind is Kind.ERROR:
            updates[key] = recorded
            continue
        if verdict.kind is Kind.REGRESSION and not force:
            refused.append(verdict)
            continue
        if (current is not None and verdict.kind is Kind.MATCH and not verdict.reasons
                and keeps_entry(entry, current)):
            updates[key] = recorded
            continue
        updates[key] = dataclasses.replace(
            recorded, platforms=dict(sorted({**recorded.platforms, tag: entry}.items())))
    return RecordPlan(updates, [], refused, notes)


def mixed_toolchains(entries: Mapping[str, Entry], record_hint: str = "--record") -> str | None:
    """One line when the entries were recorded by more than one toolchain (a ledger
    is one recording pass: a mix means part of it was never re-checked)."""
    # A film that draws video adds decoder parts, so its toolchain digest differs
    # from its neighbours' within one pass: it joins the pass whose base parts it shares.
    from .identity import TOOLCHAIN_PARTS, VIDEO_PARTS

    def base(entry: Entry) -> tuple[str, ...]:
        parts = entry.toolchain_parts or {}
        return tuple(str(parts.get(p, "")) for p in TOOLCHAIN_PARTS)

    def has_video(entry: Entry) -> bool:
        return any(p in (entry.toolchain_parts or {}) for p in VIDEO_PARTS)

    plain = {base(e): e.identity.get("toolchain", "") for e in entries.values()
             if not has_video(e)}

    def group(entry: Entry) -> str:
        if has_video(entry) and base(entry) in plain:
            return plain[base(entry)]
        return entry.identity.get("toolchain", "")

    toolchains = sorted({group(entry) for entry in entries.values()})
    if len(toolchains) <= 1:
        return None
    by = {t: sorted(k for k, e in entries.items() if group(e) == t) for t in toolchains}
    listed = "; ".join(f"{t[:12]}: {', '.join(keys)}" for t, keys in by.items())
    from .accept import record_command

    # The whole project in one pass; `nanoframes digest` cannot draw what tests build.
    command = f"`{record_command(record_hint)}` re-records them"
    if not record_hint.startswith("--nf-") and any(is_test_key(k) for k in entries):
        command += f", and `{record_command('--nf-record')}` the entries of tests"
    return (f"entries recorded with {len(toolchains)} toolchains, expected one recording pass "
            f"({command}): {listed}")


def verdict_to_json(verdict: Verdict, record_hint: str = "--record") -> dict[str, Any]:
    """Plain types only (``--json``, ``--nf-report``, and xdist's wire)."""
    return {
        "key": verdict.key,
        "verdict": verdict.kind.value,
        "reasons": list(verdict.reasons),
        "excused": verdict.excused,
        "digest": verdict.digest,
        "differing_frames": list(verdict.differing_frames),
        "compared_frames": verdict.compared_frames,
        "error": verdict.error,
        "note": verdict.note,
        "platform": verdict.platform,
        "outdated_platforms": list(verdict.outdated),
        "bounds": dict(verdict.bounds) if verdict.bounds is not None else None,
        "line": verdict.line(record_hint),
        "evidence": verdict.evidence.to_json() if verdict.evidence is not None else None,
        "time_axis": verdict.time_axis.as_dict() if verdict.time_axis is not None else None,
        "opinion": verdict.opinion.as_dict() if verdict.opinion is not None else None,
        "scenes": verdict.scenes.as_dict() if verdict.scenes is not None else None,
        "drill": verdict.drill,
    }


# A verdict's optional parts, each read by its own module's class, imported only
# where that part travels: a matching verdict carries none, and the xdist
# controller reading a worker's verdicts then never imports NumPy for them.
_PARTS = {"evidence": ("..frames.compare", "FilmEvidence"),
          "time_axis": ("..frames.timeaxis", "TimeAxis"),
          "opinion": (".second_opinion", "Opinion"),
          "scenes": (".scenes", "SceneEvidence")}


def _part(data: Mapping[str, Any], name: str) -> Any:
    if not data.get(name):
        return None
    module, reader = _PARTS[name]
    return getattr(importlib.import_module(module, __package__), reader).from_json(data[name])


def verdict_from_json(data: Mapping[str, Any]) -> Verdict:
    return Verdict(
        key=data["key"], kind=Kind(data["verdict"]), reasons=tuple(data["reasons"]),
        excused=data["excused"], digest=data["digest"],
        differing_frames=tuple(data["differing_frames"]),
        compared_frames=data["compared_frames"], error=data["error"], note=data["note"],
        platform=data.get("platform"), outdated=tuple(data.get("outdated_platforms", ())),
        bounds=data.get("bounds"), evidence=_part(data, "evidence"),
        time_axis=_part(data, "time_axis"), opinion=_part(data, "opinion"),
        scenes=_part(data, "scenes"), drill=bool(data.get("drill")),
    )


def ci_is_set(environ: Mapping[str, str] = os.environ) -> bool:
    """``CI`` as CI services set it: any value but empty, ``false`` or ``0``."""
    value = environ.get("CI", "").strip().lower()
    return value not in ("", "false", "0", "no")


def allow_recording(asked: bool, flag: str, environ: Mapping[str, str] = os.environ) -> None:
    """Refuse to record where ``CI`` is set unless ``flag`` (or the environment) asked:
    a ledger a CI job recorded is one nobody reviewed. Never under a fire drill."""
    from ..frames.drill import refuse

    refuse("record", environ)
    if asked or not ci_is_set(environ) or environ.get(RECORD_IN_CI_ENV, "") == "1":
        return
    raise NanoframesError(
        "record-in-ci", f"refusing to record where CI is set (CI={environ.get('CI')!r}): "
        f"pass {flag} or set {RECORD_IN_CI_ENV}=1 if this recording is intended")
