"""The time axis of a film's difference, read from frame digests alone.

Given the recorded frame digests and a fresh reading's, say *when* the film
moved: the first differing frame; runs of frames that equal recorded frames
shifted by k ("frames 31–120 are recorded frames 30–119: one frame late from
frame 30"); frames that hold or repeat a recorded frame; recorded frames
skipped (dropped); frames that equal no recorded frame; frames added or
removed at the end. No pixel is read, so it works without the frame store.

Linear in the number of frames: one pass with a hash map from digest to its
recorded indices (a digest shared by many frames, a still, is searched by
bisection for the recorded frame nearest in time, so at worst n log n).
"""

from __future__ import annotations

from bisect import bisect_left
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

MAX_LISTED = 6  # segments named in the summary line; the JSON carries all of them

SAME, SHIFTED, HELD, NEW = "same", "shifted", "held", "new"


@dataclass(frozen=True)
class Segment:
    """Fresh frames ``start``–``end`` (inclusive) and what they are in the recording.

    ``kind``: ``same`` (the recorded frames at the same indices), ``shifted`` (recorded
    frames ``recorded_start``–``recorded_end``, ``offset`` = fresh − recorded), ``held``
    (each repeats recorded frame ``recorded_start``) or ``new`` (equal to no recorded
    frame; ``recorded_*`` are None).
    """

    kind: str
    start: int
    end: int
    recorded_start: int | None = None
    recorded_end: int | None = None

    @property
    def offset(self) -> int | None:
        return None if self.recorded_start is None else self.start - self.recorded_start

    def as_dict(self) -> dict[str, Any]:
        recorded = (None if self.recorded_start is None
                    else [self.recorded_start, self.recorded_end])
        return {"kind": self.kind, "frames": [self.start, self.end], "recorded": recorded,
                "offset": self.offset}


@dataclass(frozen=True)
class TimeAxis:
    """What :func:`time_axis` found. Ranges are inclusive ``(first, last)`` pairs."""

    recorded_frames: int
    frames: int
    first_difference: int | None
    segments: tuple[Segment, ...]
    dropped: tuple[tuple[int, int], ...]  # recorded frames skipped between two fresh ones
    added_at_end: tuple[int, int] | None  # fresh frames past the recorded length
    removed_at_end: tuple[int, int] | None  # recorded frames past the fresh length, unused

    @property
    def moved_in_time(self) -> bool:
        """Whether any frame is a recorded frame from another time, or the length moved."""
        return bool(self.dropped or self.added_at_end or self.removed_at_end
                    or any(s.kind in (SHIFTED, HELD) for s in self.segments))

    @property
    def summary(self) -> str:
        """One line, e.g. ``first difference at frame 30; frame 30 holds recorded
        frame 29; frames 31–120 are recorded frames 30–119: one frame late from frame 30``."""
        if self.first_difference is None:
            return "every frame equals its recorded frame"
        notes = [_describe(s) for s in self.segments if s.kind != SAME
                 and not (s.kind == NEW and s.start >= self.recorded_frames)]
        notes += [f"recorded {_frames(a, b)} dropped" for a, b in self.dropped]
        if len(notes) > MAX_LISTED:
            notes = notes[:MAX_LISTED] + [f"… {len(notes) - MAX_LISTED} more"]
        if self.added_at_end:
            notes.append(f"{_count(self.added_at_end)} added at the end "
                         f"({_frames(*self.added_at_end)})")
        if self.removed_at_end:
            notes.append(f"recorded {_frames(*self.removed_at_end)} removed from the end")
        if not self.moved_in_time:
            notes.append("no frame moved in time")
        return "; ".join([f"first difference at frame {self.first_difference}", *notes])

    def as_dict(self) -> dict[str, Any]:
        return {
            "recorded_frames": self.recorded_frames,
            "frames": self.frames,
            "first_difference": self.first_difference,
            "moved_in_time": self.moved_in_time,
            "segments": [s.as_dict() for s in self.segments],
            "dropped": [list(r) for r in self.dropped],
            "added_at_end": None if self.added_at_end is None else list(self.added_at_end),
            "removed_at_end": None if self.removed_at_end is None else list(self.removed_at_end),
            "summary": self.summary,
        }

    @classmethod
    def from_json(cls, data: Any) -> TimeAxis:
        """The inverse of :meth:`as_dict` (xdist workers send verdicts as JSON)."""
        def pair(value: Any) -> tuple[int, int] | None:
            return None if value is None else (int(value[0]), int(value[1]))

        segments = tuple(Segment(s["kind"], s["frames"][0], s["frames"][1],
                                 *(s["recorded"] or (None, None))) for s in data["segments"])
        return cls(data["recorded_frames"], data["frames"], data["first_difference"], segments,
                   tuple((a, b) for a, b in data["dropped"]), pair(data["added_at_end"]),
                   pair(data["removed_at_end"]))


def _frames(a: int, b: int) -> str:
    return f"frame {a}" if a == b else f"frames {a}–{b}"


def _count(r: tuple[int, int]) -> str:
    n = r[1] - r[0] + 1
    return "1 frame" if n == 1 else f"{n} frames"


def _late(offset: int) -> str:
    n = abs(offset)
    amount = "one frame" if n == 1 else f"{n} frames"
    return f"{amount} {'late' if offset > 0 else 'early'}"


def _describe(s: Segment) -> str:
    if s.kind == NEW:
        one = s.start == s.end
        return f"{_frames(s.start, s.end)} match{'es' if one else ''} no recorded frame"
    if s.kind == HELD:
        verb = "holds" if s.start == s.end else "hold"
        return f"{_frames(s.start, s.end)} {verb} recorded frame {s.recorded_start}"
    assert s.recorded_start is not None and s.recorded_end is not None and s.offset
    return (f"{_frames(s.start, s.end)} {'is' if s.start == s.end else 'are'} recorded "
            f"{_frames(s.recorded_start, s.recorded_end)}: {_late(s.offset)} "
            f"from frame {s.recorded_start}")


def _nearest(positions: list[int], j: int) -> int:
    """The recorded index nearest ``j`` among sorted ``positions`` (earlier on a tie)."""
    i = bisect_left(positions, j)
    if i == 0:
        return positions[0]
    if i == len(positions):
        return positions[-1]
    before, after = positions[i - 1], positions[i]
    return before if j - before <= after - j else after


def _sources(recorded: Sequence[str], fresh: Sequence[str]) -> list[int | None]:
    """For each fresh frame, the recorded frame it equals (None: none does).

    Preference, so that the story told is the simplest: the recorded frame at the
    same index; the one after the previous frame's source (a run goes on); the
    previous frame's source again (a held frame); else the nearest in time.
    """
    positions: dict[str, list[int]] = {}
    for i, digest in enumerate(recorded):
        positions.setdefault(digest, []).append(i)
    n = len(recorded)
    sources: list[int | None] = []
    prev: int | None = None
    for j, digest in enumerate(fresh):
        if j < n and recorded[j] == digest:
            source: int | None = j
        elif prev is not None and prev + 1 < n and recorded[prev + 1] == digest:
            source = prev + 1
        elif prev is not None and recorded[prev] == digest:
            source = prev
        elif digest in positions:
            source = _nearest(positions[digest], j)
        else:
            source = None
        sources.append(source)
        if source is not None:
            prev = source
    return sources


def _kind(j: int, source: int | None, previous: int | None) -> str:
    if source is None:
        return NEW
    if previous is not None and source == previous:
        return HELD
    return SAME if source == j else SHIFTED


def _segments(sources: list[int | None]) -> list[Segment]:
    segments: list[Segment] = []
    for j, source in enumerate(sources):
        previous = sources[j - 1] if j else None
        kind = _kind(j, source, previous)
        if segments:
            last = segments[-1]
            continues = last.kind == kind and last.end == j - 1 and (
                kind in (SAME, NEW)
                or (kind == HELD and source == last.recorded_start)
                or (kind == SHIFTED and source == (last.recorded_end or 0) + 1))
            if continues:
                segments[-1] = Segment(kind, last.start, j, last.recorded_start,
                                       None if kind == NEW else source)
                continue
        segments.append(Segment(kind, j, j, source, source))
    return segments


def _ranges(indices: list[int]) -> list[tuple[int, int]]:
    ranges: list[tuple[int, int]] = []
    for i in indices:
        if ranges and ranges[-1][1] == i - 1:
            ranges[-1] = (ranges[-1][0], i)
        else:
            ranges.append((i, i))
    return ranges


def time_axis(recorded: Sequence[str], fresh: Sequence[str]) -> TimeAxis:
    """Compare two films' frame digest lists (equal-length digest strings; compare
    like with like: truncate full digests to the recorded length first)."""
    n, m = len(recorded), len(fresh)
    first = next((j for j in range(min(n, m)) if recorded[j] != fresh[j]), None)
    if first is None and n != m:
        first = min(n, m)
    sources = _sources(recorded, fresh)
    # A recorded frame whose picture appears anywhere in the fresh film was not lost
    # (a still shown at another index is still shown).
    shown = set(fresh)
    used = [digest in shown for digest in recorded]
    # Recorded frames jumped over between two consecutive fresh frames and used by
    # none: the gaps are merged first, so each recorded index is visited once.
    gaps = sorted((a + 1, b - 1) for a, b in zip([-1, *sources], sources)
                  if a is not None and b is not None and b > a + 1)
    dropped: list[int] = []
    reached = -1
    for lo, hi in gaps:
        for i in range(max(lo, reached + 1), hi + 1):
            if not used[i]:
                dropped.append(i)
        reached = max(reached, hi)
    last_used = max((s for s in sources if s is not None), default=-1)
    # The recording's tail that no fresh frame reaches: cut from the end when the
    # fresh film ends on a recorded frame or is shorter (else new frames replaced it).
    ends_recorded = m > 0 and sources[-1] is not None
    tail = range(last_used + 1 if ends_recorded else max(last_used + 1, m), n)
    removed = [i for i in tail if not used[i]]
    return TimeAxis(
        recorded_frames=n, frames=m, first_difference=first,
        segments=tuple(_segments(sources)),
        dropped=tuple(_ranges(dropped)),
        added_at_end=(n, m - 1) if m > n else None,
        removed_at_end=(removed[0], removed[-1]) if removed else None,
    )
