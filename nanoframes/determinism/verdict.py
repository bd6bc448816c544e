"""Verdicts: a fresh reading of a composition judged against its ledger entry.

The verdict table of the README ("Verdicts"). The one distinction that matters most is
between ``changed`` (the digest moved and a recorded input moved with it) and
``regression`` (the digest moved and every declared input is identical), so
the reasons are computed from the recorded identity, never guessed.
"""

from __future__ import annotations

import dataclasses
import os
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from enum import Enum
from pathlib import Path, PurePosixPath
from typing import TYPE_CHECKING, TypeVar

from ..config import Config, ExcuseBounds, relative_key
from ..errors import NanoframesError
from ..frames.digest import SHORT
from ..frames.drill import ENV as DRILL_ENV
from ..frames.drill import FRAME as DRILL_FRAME
from ..frames.timeaxis import TimeAxis, time_axis
from ..model.svg import composition_stem
from .identity import part_names
from .ledger import Entry
from .scenes import SceneEvidence, classify

if TYPE_CHECKING:  # NumPy: loaded where frames are compared, not to judge digests
    from ..frames.compare import FilmEvidence
    from .second_opinion import Opinion

T = TypeVar("T")
EXCUSED_ENV = "EXCUSED_COMPOSITIONS"
REMOVE_EXEMPTION = "it matches: remove the exemption"
MAX_LISTED_FRAMES = 10


class Kind(str, Enum):
    MATCH = "match"
    CHANGED = "changed"
    REGRESSION = "regression"
    ABSENT = "absent"
    STALE = "stale"
    ERROR = "error"


@dataclass(frozen=True)
class Verdict:
    key: str
    kind: Kind
    reasons: tuple[str, ...] = ()
    excused: str | None = None
    digest: str | None = None
    differing_frames: tuple[int, ...] = ()
    compared_frames: int = 0
    error: str | None = None
    note: str | None = None
    # the platform entry the reading was judged against (or matched), if not the primary
    platform: str | None = None
    # platform entries taken under an older source than the primary's
    outdated: tuple[str, ...] = ()
    # a bounded excuse's bounds and what was measured against them (tolerance.py)
    bounds: Mapping[str, object] | None = field(default=None, compare=False)
    # pixel evidence for the differing frames, attached after judging (evidence/pixels.py)
    evidence: FilmEvidence | None = field(default=None, compare=False)
    # when the film moved, from frame digests alone (frames/timeaxis.py); full films only
    time_axis: TimeAxis | None = field(default=None, compare=False)
    # what a match says of its excuse, on this platform (excuses.py); None: remove it
    excuse_advice: str | None = field(default=None, compare=False)
    # a regression's differing frames drawn again in fresh processes (second_opinion.py)
    opinion: Opinion | None = field(default=None, compare=False)
    # each differing frame's scene: the same document drawn otherwise, or another
    # document, and what changed in it (scenes.py; the diff: evidence/scenediff.py)
    scenes: SceneEvidence | None = field(default=None, compare=False)
    # drawn under a fire drill (frames/drill.py): never recorded nor accepted
    drill: bool = field(default=False, compare=False)

    def __eq__(self, other: object) -> bool:
        """A verdict equals its kind (``verdict == "match"``, ``verdict == Kind.MATCH``),
        and another verdict field by field (the dataclass's comparison)."""
        if isinstance(other, (str, Kind)):
            return self.kind == other
        if other.__class__ is not self.__class__:
            return NotImplemented
        return self._fields() == other._fields()

    def _fields(self) -> tuple[object, ...]:
        return tuple(getattr(self, f.name) for f in dataclasses.fields(self) if f.compare)

    @property
    def exemption_outlived(self) -> bool:
        """An excused match whose excuse nothing known needs any more (excuses.py)."""
        return (self.excused is not None and self.kind is Kind.MATCH
                and self.excuse_advice in (None, REMOVE_EXEMPTION))

    @property
    def ok(self) -> bool:
        """A match, or any verdict of an excused composition (exit status 0)."""
        return self.kind is Kind.MATCH or self.excused is not None

    def summary(self, record_hint: str = "--record") -> str:
        """One human line; ``record_hint`` is the flag that records (CLI vs plugin)."""
        text = self._body(record_hint)
        if self.note:
            text += f"; {self.note}"
        if self.drill:
            text += (f"; a fire drill ({DRILL_ENV}) nudged one pixel of frame {DRILL_FRAME} "
                     f"after drawing")
        if self.outdated:
            tags = ", ".join(self.outdated)
            one = len(self.outdated) == 1
            text += (f"; platform entr{'y' if one else 'ies'} {tags} "
                     f"{'is' if one else 'are'} outdated (taken under an older source): "
                     f"refresh with `{platform_command(record_hint)}` on {tags}")
        return text

    def _body(self, record_hint: str) -> str:
        kind = self.kind
        against = f"platform entry {self.platform}" if self.platform else ""
        if kind is Kind.MATCH:
            if self.reasons:
                # Inputs moved yet every compared frame is the same: worth re-recording.
                moved = f"recorded inputs moved: {', '.join(self.reasons)}"
                return f"match ({against + '; ' if against else ''}{moved})"
            return f"match ({against})" if against else "match"
        if kind is Kind.CHANGED:
            text = f"changed, {', '.join(self.reasons)}"
            if self.differing_frames:
                text += f" ({self._frames_differ()})"
            return text
        if kind is Kind.REGRESSION:
            head = f"regression against the {against}" if against else "regression"
            if not self.differing_frames:
                return f"{head}, the film digest differs but no recorded frame digest does"
            return f"{head}, {self._frames_differ()}"
        if kind is Kind.ABSENT:
            return f"absent, no ledger entry; record it with {record_hint}"
        if kind is Kind.STALE:
            return f"stale, the ledger has an entry but the file is gone; {record_hint} drops it"
        return f"error, {self.error}"

    @property
    def pixels_line(self) -> str | None:
        """The pixel evidence in one line (printed under the verdict line), if any."""
        return None if self.evidence is None else f"pixels: {self.evidence.summary}"

    @property
    def time_line(self) -> str | None:
        """When the film moved (printed under the verdict line), if it was compared in full."""
        return None if self.time_axis is None else f"time: {self.time_axis.summary}"

    @property
    def opinion_line(self) -> str | None:
        """The second opinion on a regression (printed under the verdict line), if any."""
        return None if self.opinion is None else f"opinion: {self.opinion.summary}"

    @property
    def scene_lines(self) -> list[str]:
        """Why the pixels moved, per frame's scene (printed under the verdict line)."""
        return [] if self.scenes is None else self.scenes.lines()

    def _frames_differ(self) -> str:
        frames = self.differing_frames
        listed = ", ".join(str(i) for i in frames[:MAX_LISTED_FRAMES])
        if len(frames) > MAX_LISTED_FRAMES:
            listed += ", …"
        return f"{len(frames)} of {self.compared_frames} frames differ: {listed}"

    def line(self, record_hint: str = "--record") -> str:
        """The fixed one-line form the CLI and the plugin both print."""
        if self.excused is None:
            return f"{self.kind.value.upper()} {self.key}: {self.summary(record_hint)}"
        # Reported on every run, a match loudest, so an exemption cannot outlive its cause.
        tail = f"; {self.excuse_advice or REMOVE_EXEMPTION}" if self.kind is Kind.MATCH else ""
        within = f"; {self.bounds['text']}" if self.bounds and self.bounds.get("text") else ""
        return (f"EXCUSED {self.key}: {self.summary(record_hint)} "
                f"(excused: {self.excused}{within}{tail})")


def platform_command(record_hint: str = "--record") -> str:
    """The command that records a platform entry, in the front end's own words."""
    if record_hint.startswith("--nf-"):
        return f"pytest {record_hint} --nf-platform"
    return f"nanoframes digest {record_hint} --platform"


@dataclass(frozen=True)
class Reading:
    """What a fresh render produced. ``frame_digests`` are full hex, one per index."""

    key: str
    identity: Mapping[str, str]
    toolchain_parts: Mapping[str, str]
    frames: int
    indices: tuple[int, ...]
    frame_digests: tuple[str, ...]
    digest: str
    sampled: bool = field(init=False)
    # drawn under a fire drill (frames/drill.py): its verdict says so
    drilled: bool = field(default=False, compare=False)
    # Lets an exemption name a composition by its id; not part of the comparison.
    composition_id: str | None = field(default=None, compare=False)
    # the SHA-256 of each document handed to ThorVG (frames/scenes.py), one per index;
    # empty where they were not taken (a reading rebuilt from an entry before them)
    scene_digests: tuple[str, ...] = field(default=(), compare=False)

    def __post_init__(self) -> None:
        if len(self.indices) != len(self.frame_digests):
            raise ValueError("a reading needs one frame digest per rendered index")
        if self.scene_digests and len(self.scene_digests) != len(self.indices):
            raise ValueError("a reading needs one scene digest per rendered index")
        object.__setattr__(self, "sampled", self.indices != tuple(range(self.frames)))


def _reasons(reading: Reading, entry: Entry) -> tuple[str, ...]:
    """Which recorded inputs moved, in the fixed order of the verdict table."""
    reasons = [
        f"{name} changed"
        for name in ("source", "media", "fonts")
        if reading.identity.get(name) != entry.identity.get(name)
    ]
    parts = [
        name for name in part_names(reading.toolchain_parts, entry.toolchain_parts)
        if reading.toolchain_parts.get(name) != entry.toolchain_parts.get(name)
    ]
    if parts:
        reasons.append(f"toolchain changed ({', '.join(parts)})")
    elif reading.identity.get("toolchain") != entry.identity.get("toolchain"):
        reasons.append("toolchain changed")
    if reading.frames != entry.frames:
        reasons.append(f"frame count {entry.frames} → {reading.frames}")
    return tuple(reasons)


def draws_the_primary(platform: Entry, primary: Entry) -> bool:
    """A platform entry (or a fresh reading as one) that says nothing the primary does
    not: the same inputs, the same frames drawn alike."""
    return (platform.inputs() == primary.inputs() and platform.frames == primary.frames
            and platform.indices == primary.indices and platform.digest == primary.digest
            and platform.frame_digests == primary.frame_digests)


def redundant_platforms(entry: Entry) -> tuple[str, ...]:
    """Platform entries that draw exactly their primary: nothing to keep them for."""
    return tuple(sorted(tag for tag, p in entry.platforms.items()
                        if draws_the_primary(p, entry)))


def outdated_platforms(entry: Entry) -> tuple[str, ...]:
    """Platform entries taken under other inputs (source, media, fonts) than the primary."""
    return tuple(sorted(tag for tag, p in entry.platforms.items() if p.inputs() != entry.inputs()))


def judge(reading: Reading, entry: Entry | None, excused: str | None = None) -> Verdict:
    """The verdict for ``reading`` against its ledger ``entry`` (None: not recorded).

    With platform entries: a film that equals the primary is a match on every
    platform (a platform entry records only where a machine draws otherwise).
    Else, where the running toolchain is a platform entry's (and the inputs are
    the same), the reading is judged against that entry, so a regression on that
    platform is a regression; otherwise against the primary, and a film equal to
    a platform entry of the same inputs is a match.
    """
    verdict = _judge(reading, entry, excused)
    return dataclasses.replace(verdict, drill=True) if reading.drilled else verdict


def _judge(reading: Reading, entry: Entry | None, excused: str | None) -> Verdict:
    if entry is None:
        return Verdict(reading.key, Kind.ABSENT, excused=excused, digest=reading.digest)
    if not entry.platforms:
        return _judge_one(reading, entry, excused)
    outdated = outdated_platforms(entry)
    verdict = _judge_one(reading, entry.primary, excused)
    if verdict.kind is Kind.MATCH:
        return dataclasses.replace(verdict, outdated=outdated)
    inputs = (reading.identity.get("source"), reading.identity.get("media"),
              reading.identity.get("fonts"))
    same_inputs = sorted((tag, p) for tag, p in entry.platforms.items() if p.inputs() == inputs)
    toolchain = reading.identity.get("toolchain")
    if toolchain != entry.identity.get("toolchain"):
        for tag, platform in same_inputs:
            if platform.identity.get("toolchain") == toolchain:
                return dataclasses.replace(_judge_one(reading, platform, excused),
                                           platform=tag, outdated=outdated)
    for tag, platform in same_inputs:
        against = _judge_one(reading, platform, excused)
        if against.kind is Kind.MATCH:
            return dataclasses.replace(against, platform=tag, outdated=outdated)
    return dataclasses.replace(verdict, outdated=outdated)


def _judge_one(reading: Reading, entry: Entry, excused: str | None) -> Verdict:
    key = reading.key

    reasons = _reasons(reading, entry)
    note = None
    compared: list[int] = []
    differing: list[int] = []
    if reading.frames == entry.frames:  # a film of another length cannot match
        recorded = dict(zip(entry.indices, entry.frame_digests, strict=True))
        for index, digest in zip(reading.indices, reading.frame_digests, strict=True):
            if index in recorded:
                compared.append(index)
                if digest[:SHORT] != recorded[index]:
                    differing.append(index)
        if not compared and not reasons:
            # Same inputs, disjoint samples: neither a match nor a regression can be shown.
            return error(
                key,
                f"nothing to compare: the entry was sampled at {len(entry.indices)} frames "
                f"and this reading rendered none of them; check in full or with the "
                f"recorded sample count", excused)
        if not compared:
            matches = False
        elif reading.sampled or entry.sampled:
            if entry.sampled:
                note = (f"the entry was sampled ({len(entry.indices)} of {entry.frames} frames); "
                        f"this check compared {len(compared)} frames only")
            else:
                note = f"a sampled check: compared {len(compared)} of {entry.frames} frames"
            matches = not differing
        else:
            matches = reading.digest == entry.digest
    else:
        matches = False

    if matches:
        kind = Kind.MATCH
    elif reasons:
        kind = Kind.CHANGED
    else:
        kind = Kind.REGRESSION
    axis = None
    if kind is not Kind.MATCH and not reading.sampled and not entry.sampled:
        axis = time_axis(entry.frame_digests, [d[:SHORT] for d in reading.frame_digests])
        axis = axis if axis.first_difference is not None else None
    scenes = None if kind is Kind.MATCH else classify(
        entry.indices, entry.scene_digests, reading.indices, reading.scene_digests, differing)
    return Verdict(key, kind, reasons=reasons, excused=excused, digest=reading.digest,
                   differing_frames=tuple(differing), compared_frames=len(compared), note=note,
                   time_axis=axis, scenes=scenes)


def stale(key: str, entry: Entry, excused: str | None = None) -> Verdict:
    """A ledger entry whose composition file no longer exists."""
    return Verdict(key, Kind.STALE, excused=excused, digest=entry.digest)


def error(key: str, message: str, excused: str | None = None) -> Verdict:
    """A composition that could not be read or rendered; ``message`` is one line."""
    return Verdict(key, Kind.ERROR, excused=excused, error=message)


def _normalise(name: str, root: Path) -> str:
    name = name.strip().replace("\\", "/")
    if PurePosixPath(name).is_absolute() or Path(name).is_absolute():
        try:
            return relative_key(name, root)
        except NanoframesError:  # outside the project: it excuses nothing
            return Path(name).as_posix()
    return PurePosixPath(name).as_posix()  # drops "./" and doubled slashes


def excused_list(config: Config, environ: Mapping[str, str] = os.environ) -> dict[str, str]:
    """Excused names -> reason: ``[tool.nanoframes.excused]`` plus $EXCUSED_COMPOSITIONS.

    Names are relative POSIX paths, file names or composition ids/stems. When
    both sources name a composition, the configured reason (written by a human) wins.
    An excuse limited to some ``platforms`` excuses nothing on another machine.
    """
    from .platforms import platform_tag

    here: str | None = None
    result = {}
    for name, reason in config.excused.items():
        limited = config.excuse_bounds.get(name)
        if limited is not None and limited.platforms is not None:
            here = here or platform_tag(environ)
            if here not in limited.platforms:
                continue
        result[_normalise(name, config.root)] = reason
    for name in environ.get(EXCUSED_ENV, "").split():
        result.setdefault(_normalise(name, config.root), EXCUSED_ENV)
    return result


def excuse_bounds_for(key: str, config: Config,
                      composition_id: str | None = None) -> ExcuseBounds | None:
    """The bounds of ``key``'s configured excuse, if it was written with any."""
    if not config.excuse_bounds:
        return None
    bounds = {_normalise(name, config.root): b for name, b in config.excuse_bounds.items()}
    return excuse_for(key, bounds, composition_id)


def excuse_for(key: str, excused: Mapping[str, T],
               composition_id: str | None = None) -> T | None:
    """The reason ``key`` is excused: listed by path, file name, stem or composition id."""
    name = PurePosixPath(key).name
    stem = composition_stem(name)
    for candidate in (key, name, stem, composition_id):
        if candidate and candidate in excused:
            return excused[candidate]
    return None


def exit_status(verdicts: Iterable[Verdict]) -> int:
    """0 when every verdict is ok; 2 when any un-excused one is an error (bad input,
    as for a single-file command); else 1 when any is not ok."""
    status = 0
    for verdict in verdicts:
        if verdict.ok:
            continue
        if verdict.kind is Kind.ERROR:
            return 2
        status = 1
    return status
