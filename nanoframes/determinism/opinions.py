"""Second opinions over a whole check: regressions grouped by cause, and a budget.

A bad day (a runner's library changed) makes every film regress at once, for
one cause. Redrawing each in fresh processes would cost the check fifty times
its own time, and say the same thing a thousand times. So a check hands every
regression to one :class:`Budget`, which

- groups regressions by **cause**: the same toolchain, the same entry kind
  (primary or one platform's) and the same scene classification (``same scene,
  different pixels``, ``different scene``, ``mixed``);
- redraws the first :data:`PER_CAUSE` films of a cause (:func:`.second_opinion.consult`);
  once they agree (the same :attr:`~.second_opinion.Opinion.gist`, not
  ``inconclusive``), the cause's later films **share** that opinion, said once
  with the list of films (:func:`cause_lines`); where they disagree, every film
  of the cause is redrawn;
- stops starting re-renders once :data:`BUDGET_S` seconds of them are spent
  (``[tool.nanoframes] second_opinion_budget``): a later regression says it was
  not redrawn, and how to ask for it alone.

Nothing else is dropped: every regression keeps its verdict, exit status, pixel
evidence and pictures (decision 0115).
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Iterable, Mapping
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from ..config import DEFAULT_OPINION_BUDGET
from ..frames.digest import SHORT
from .second_opinion import consult_together, not_redrawn, wanted

if TYPE_CHECKING:
    from ..config import Config
    from ..model.composition import Composition
    from .ledger import Entry
    from .verdict import Reading, Verdict

PER_CAUSE = 2      # films of one cause redrawn before the others share their opinion
BUDGET_S = DEFAULT_OPINION_BUDGET  # seconds of re-renders a check starts new ones within
SCENES = {"same scene": "same scene, different pixels", "different scene": "different scene",
          "mixed": "same and different scenes", "unclassified": "scenes unclassified"}


def cause_of(verdict: Verdict, reading: Reading) -> str:
    """What a regression's cause is, in words: the toolchain, the entry, the scenes."""
    toolchain = reading.identity.get("toolchain", "")[:SHORT] or "unknown"
    words = [f"toolchain {toolchain}"]
    if verdict.platform:
        words.append(f"platform entry {verdict.platform}")
    if verdict.scenes is not None:
        words.append(SCENES.get(verdict.scenes.classification, verdict.scenes.classification))
    return ", ".join(words)


@dataclass
class _Cause:
    redrawn: list[tuple[str, str]] = field(default_factory=list)  # (key, gist)

    @property
    def settled(self) -> str | None:
        """The opinion the cause's later films share, once its first films agree."""
        gists = {gist for _, gist in self.redrawn}
        if len(self.redrawn) >= PER_CAUSE and len(gists) == 1 and "inconclusive" not in gists:
            return gists.pop()
        return None


@dataclass
class Budget:
    """One check's second opinions (the CLI's sweep; one pytest process's items)."""

    seconds: float = BUDGET_S
    spent: float = 0.0
    causes: dict[str, _Cause] = field(default_factory=dict)
    # regressions still to come, by cause (plan): redrawn beside the first of their cause
    planned: dict[str, list[tuple[Verdict, Entry, Reading]]] = field(default_factory=dict)
    ready: dict[str, Verdict] = field(default_factory=dict)  # redrawn early, by key

    def plan(self, verdicts: Iterable[Verdict], entries: Mapping[str, Entry],
             readings: Mapping[str, Reading], renders: int) -> None:
        """The regressions a whole check will ask about, known before the first is:
        a cause's first :data:`PER_CAUSE` films are then redrawn in the same processes."""
        for verdict in verdicts:
            entry, reading = entries.get(verdict.key), readings.get(verdict.key)
            if wanted(verdict, reading, renders) and entry is not None:
                assert reading is not None
                self.planned.setdefault(cause_of(verdict, reading), []).append(
                    (verdict, entry, reading))

    def consult(self, verdict: Verdict, entry: Entry | None, reading: Reading | None,
                config: Config, renders: int, comp: Composition | None = None) -> Verdict:
        """``verdict`` with its opinion: redrawn, shared with its cause's or unasked."""
        if not wanted(verdict, reading, renders) or entry is None:
            return verdict
        assert reading is not None
        cause = cause_of(verdict, reading)
        group = self.causes.setdefault(cause, _Cause())
        early = self.ready.pop(verdict.key, None)
        if early is not None and early.opinion is not None:
            return dataclasses.replace(verdict, opinion=early.opinion)
        settled = group.settled
        if settled is not None:
            return not_redrawn(verdict, entry, reading, cause=cause, shared_kind=settled,
                               shared=tuple(key for key, _ in group.redrawn))
        if self.spent > 0 and self.spent >= self.seconds:  # the first is always asked
            return not_redrawn(verdict, entry, reading, cause=cause, unasked=(
                f"this check's second opinions took their budget ({self.seconds:g} s of "
                f"re-renders); `nanoframes digest --check {verdict.key}` asks for this "
                "one alone"))
        batch: list[tuple[Verdict, Entry, Reading, Composition | None]] = \
            [(verdict, entry, reading, comp)]
        room = PER_CAUSE - len(group.redrawn) - 1
        for other in self.planned.get(cause, ()):
            if room <= 0:
                break
            if other[0].key != verdict.key and other[0].key not in self.ready \
                    and not any(key == other[0].key for key, _ in group.redrawn):
                batch.append((*other, None))
                room -= 1
        start = time.monotonic()
        judged = consult_together(batch, config, renders)
        self.spent += time.monotonic() - start
        out = []
        for one in judged:
            opinion = dataclasses.replace(one.opinion, cause=cause)
            group.redrawn.append((one.key, opinion.gist))
            out.append(dataclasses.replace(one, opinion=opinion))
        for one in out[1:]:
            self.ready[one.key] = one
        return out[0]


def cause_lines(opinions: Iterable[tuple[str, Mapping[str, Any] | None]]) -> list[str]:
    """One line per cause that two or more regressions share, with its films:
    ``opinions`` is (key, an opinion's :meth:`~.second_opinion.Opinion.as_dict`)."""
    causes: dict[str, dict[str, dict[str, list[str]]]] = {}
    for key, opinion in opinions:
        if not opinion or not opinion.get("cause"):
            continue
        gist = "" if opinion.get("unasked") else \
            opinion.get("gist") or opinion.get("kind") or "?"
        films = causes.setdefault(opinion["cause"], {}).setdefault(
            gist, {"redrawn": [], "shared": []})
        films["shared" if opinion.get("shared") or not gist else "redrawn"].append(key)
    lines = []
    for cause, said in causes.items():
        n = sum(len(f["redrawn"]) + len(f["shared"]) for f in said.values())
        if n < 2:
            continue
        parts = []
        for gist, films in said.items():
            if not gist:
                continue
            text = f"{gist} (redrawn: {', '.join(films['redrawn'])}"
            if films["shared"]:
                text += f"; the same, not redrawn: {', '.join(films['shared'])}"
            parts.append(text + ")")
        if "" in said:
            parts.append(f"not redrawn, past the budget: {', '.join(said['']['shared'])}")
        lines.append(f"opinions: {n} regressions, one cause ({cause}): {'; '.join(parts)}")
    return lines
