"""Why the pixels moved: each differing frame's scene, recorded and fresh.

A frame's scene digest is the SHA-256 of the document handed to ThorVG for it
(frames/scenes.py). Judging compares the recorded and fresh scene digests of
each differing frame, from the ledger alone:

- *same scene, different pixels*: ThorVG was handed the very document it was
  handed when the entry was recorded and drew it otherwise: the rasterizer (its
  build, the libraries it runs with, the platform) or nondeterminism moved the
  pixels, not the composition and not nanoframes' baking or layout;
- *different scene*: the document itself moved. The evidence step
  (evidence/scenediff.py) reads the recorded scene from the store, bakes the
  current one again and names what changed, element by element.

An entry recorded before scene digests classifies nothing: it says so, and a
re-record adds them.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..frames.digest import SHORT

MAX_GROUPS = 4  # runs named in the summary line; the JSON carries all of them
MAX_FRAMES_SHOWN = 3  # frame diffs printed under the verdict; the JSON and report hold more
PREDATES = ("the entry predates scene digests, so its frames cannot be classified; "
            "a re-record adds them")


@dataclass(frozen=True)
class FrameDiff:
    """What changed in one frame's scene: ``changes`` in words (capped), ``more``
    beyond the cap, ``keys`` every (element, attribute) that changed, for grouping."""

    frame: int
    changes: tuple[str, ...]
    more: int = 0
    keys: tuple[str, ...] = ()

    @property
    def line(self) -> str:
        tail = f"; … {self.more} more" if self.more else ""
        said = "; ".join(self.changes) or "no element, attribute or text differs"
        return f"frame {self.frame}: {said}{tail}"

    def as_dict(self) -> dict[str, Any]:
        return {"frame": self.frame, "changes": list(self.changes), "more": self.more,
                "keys": list(self.keys)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> FrameDiff:
        return cls(data["frame"], tuple(data["changes"]), data.get("more", 0),
                   tuple(data.get("keys", ())))


@dataclass(frozen=True)
class Group:
    """Frames ``start``–``end`` (consecutive) whose scenes differ in the same ``keys``."""

    start: int
    end: int
    keys: tuple[str, ...]

    @property
    def text(self) -> str:
        frames = f"frame {self.start}" if self.start == self.end else \
            f"frames {self.start}–{self.end}"
        words = [_possessive(k) for k in self.keys]
        if not words:
            return (f"in {frames} the documents differ in their bytes only (whitespace, "
                    "attribute order): no element, attribute or text")
        if len(words) <= 3:
            verb = "differs" if len(words) == 1 else "differ"
            return f"in {frames} only {' and '.join(words)} {verb}"
        return f"in {frames} {len(words)} attributes differ ({', '.join(words[:3])}, …)"

    def as_dict(self) -> dict[str, Any]:
        return {"frames": [self.start, self.end], "keys": list(self.keys), "text": self.text}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Group:
        start, end = data["frames"]
        return cls(start, end, tuple(data["keys"]))


def _possessive(key: str) -> str:
    """``#title opacity`` -> ``#title's opacity``; ``#x added`` stays."""
    element, _, what = key.rpartition(" ")
    if what in ("added", "removed") or not element:
        return key
    return f"{element}'s {what}"


@dataclass(frozen=True)
class SceneEvidence:
    """The classification of a verdict's differing frames, and the scene diffs."""

    same: tuple[int, ...] = ()       # same scene, different pixels
    different: tuple[int, ...] = ()  # a different scene
    predates: bool = False           # the entry has no scene digests to compare
    diffs: tuple[FrameDiff, ...] = ()    # structural diffs (evidence/scenediff.py)
    groups: tuple[Group, ...] = ()       # runs of frames with the same changes
    missing: tuple[int, ...] = ()    # different scenes whose recorded scene is not kept
    hint: str = ""                   # how to get the missing ones
    notes: tuple[str, ...] = field(default=())  # anything else the diff must say

    @property
    def classification(self) -> str:
        if self.predates:
            return "unclassified"
        if self.same and self.different:
            return "mixed"
        return "same scene" if self.same else "different scene"

    @property
    def summary(self) -> str:
        if self.predates:
            return PREDATES
        n = len(self.same) + len(self.different)
        parts = []
        if self.same:
            where = "every differing frame" if not self.different else \
                f"{len(self.same)} of {n} differing frames ({_listed(self.same)})"
            parts.append(f"same scene, different pixels in {where}: ThorVG was handed the "
                         "recorded document and drew it otherwise (the rasterizer's build, "
                         "its libraries, the platform, or nondeterminism), not the "
                         "composition nor nanoframes' baking")
        if self.different:
            where = "every differing frame" if not self.same else \
                f"{len(self.different)} of {n} ({_listed(self.different)})"
            text = f"different scene in {where}"
            groups = [g.text for g in self.groups[:MAX_GROUPS]]
            if len(self.groups) > MAX_GROUPS:
                groups.append(f"{len(self.groups) - MAX_GROUPS} more run(s)")
            if groups:
                text += ": " + "; ".join(groups)
            parts.append(text)
        if self.missing:
            parts.append(f"the recorded scene of {len(self.missing)} frame(s) "
                         f"({_listed(self.missing)}) is not in the store: {self.hint}")
        parts += list(self.notes)
        return "; ".join(parts)

    def lines(self, limit: int = MAX_FRAMES_SHOWN) -> list[str]:
        """``scene:`` and up to ``limit`` frame diffs under it (each to be indented)."""
        out = [f"scene: {self.summary}"]
        out += [f"  {d.line}" for d in self.diffs[:limit]]
        if len(self.diffs) > limit:
            out.append(f"  … {len(self.diffs) - limit} more frame(s) diffed (--json and "
                       "the --html report list them)")
        return out

    def as_dict(self) -> dict[str, Any]:
        return {"classification": self.classification, "summary": self.summary,
                "same_scene": list(self.same), "different_scene": list(self.different),
                "predates": self.predates, "diffs": [d.as_dict() for d in self.diffs],
                "groups": [g.as_dict() for g in self.groups], "missing": list(self.missing),
                "hint": self.hint, "notes": list(self.notes)}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> SceneEvidence:
        return cls(tuple(data["same_scene"]), tuple(data["different_scene"]),
                   bool(data.get("predates")),
                   tuple(FrameDiff.from_json(d) for d in data.get("diffs", ())),
                   tuple(Group.from_json(g) for g in data.get("groups", ())),
                   tuple(data.get("missing", ())), data.get("hint", ""),
                   tuple(data.get("notes", ())))


def _listed(frames: Sequence[int], limit: int = 6) -> str:
    """``3, 4, 5, 9`` as ``3–5, 9``; at most ``limit`` ranges."""
    runs: list[list[int]] = []
    for f in frames:
        if runs and f == runs[-1][1] + 1:
            runs[-1][1] = f
        else:
            runs.append([f, f])
    text = [str(a) if a == b else f"{a}–{b}" for a, b in runs[:limit]]
    return ", ".join(text) + (", …" if len(runs) > limit else "")


def classify(recorded_indices: Sequence[int], recorded: Sequence[str] | None,
             fresh_indices: Sequence[int], fresh: Sequence[str],
             differing: Sequence[int]) -> SceneEvidence | None:
    """Each differing frame as same scene or different scene, from scene digests
    alone (``recorded``: the entry's, None where it predates them; ``fresh``: the
    reading's). None where the reading took none (a reading rebuilt from an old entry)."""
    if not differing:
        return None
    if recorded is None:
        return SceneEvidence(predates=True)
    if not fresh:
        return None
    then = dict(zip(recorded_indices, recorded, strict=True))
    now = dict(zip(fresh_indices, fresh, strict=True))
    same = tuple(i for i in differing if now[i][:SHORT] == then[i][:SHORT])
    kept = set(same)
    return SceneEvidence(same=same, different=tuple(i for i in differing if i not in kept))


def grouped(diffs: Sequence[FrameDiff]) -> tuple[Group, ...]:
    """Runs of consecutive frames whose scenes differ in the same (element, attribute)s."""
    groups: list[Group] = []
    for d in sorted(diffs, key=lambda d: d.frame):
        last = groups[-1] if groups else None
        if last is not None and last.end == d.frame - 1 and last.keys == d.keys:
            groups[-1] = Group(last.start, d.frame, last.keys)
        else:
            groups.append(Group(d.frame, d.frame, d.keys))
    return tuple(groups)
