"""A second opinion on a regression: its differing frames drawn again, in fresh
processes, before the regression is reported.

A ``regression`` says the same declared inputs drew other pixels. Whether those
pixels come back every time (a real change below the inputs: the rasterizer,
what it calls, the machine) or move between renders (nondeterminism, or
something in the environment the identity does not cover) decides what a
person does next, so the check asks again. Each re-render is a fresh
interpreter (the self-test's worker, :mod:`.selftest_worker`) drawing only the
differing frames: the first one plain, each later one under one self-test
variation, in the fixed order of :data:`ORDER` (those that mean something for
drawing a few frames in one process). The result is either

- ``reproducible: the same new pixels in every render``, or
- ``unstable: frame 31 drew 2 different ways in 4 renders, it moves with locale``
  (the check's own drawing counts as a render).

A long regression is redrawn at :data:`MAX_FRAMES` of its differing frames,
evenly spaced, first and last included (said in the line). A re-render that
crashes, times out or fails is named in the opinion; it never ends the check.
The verdict's kind is never changed: the opinion is evidence (decision 0075).
"""

from __future__ import annotations

import base64
import dataclasses
import os
from collections.abc import Mapping, Sequence
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ..config import DEFAULT_SECOND_OPINION, MAX_SECOND_OPINION
from ..frames.digest import SHORT
from ..model.numbers import evenly_spaced
from .variations import Target, jobs_for
from .verdict import Kind, Reading, Verdict

if TYPE_CHECKING:
    from ..config import Config
    from ..model.composition import Composition
    from .ledger import Entry

DEFAULT_RENDERS = DEFAULT_SECOND_OPINION
# Variations that can move a few frames drawn in one fresh process, in the order
# re-renders take them (the thread counts other than the one in effect).
ORDER = ("locale", "tz", "hash-seed", "threads-0", "threads-1", "threads-2", "dedup-off",
         "pipeline-off")
MAX_RENDERS = MAX_SECOND_OPINION  # plain + every applicable variation
assert MAX_RENDERS == len(ORDER)  # one thread count of ORDER is the one in effect
MAX_FRAMES = 12
TIMEOUT_S = 300.0
CHECK = "check"  # the name of the check's own drawing among the renders
PLAIN = "plain"
THREADS_ENV = "NANOFRAMES_THORVG_THREADS"


@dataclass(frozen=True)
class Render:
    """One drawing of the redrawn frames: ``digests`` (short, aligned with
    :attr:`Opinion.frames`) or, where it failed, ``error``."""

    name: str                       # "check", "plain" or a variation's name
    digests: tuple[str, ...] = ()
    note: str = ""                  # e.g. "LC_ALL=C.UTF-8"
    error: str | None = None        # e.g. "crashed (SIGSEGV)", "failed: …"


@dataclass(frozen=True)
class Opinion:
    frames: tuple[int, ...]         # the frames redrawn
    differing: int                  # how many frames the regression names
    recorded: tuple[str, ...]       # their recorded digests (short)
    renders: tuple[Render, ...]     # the check's own first, then the re-renders
    # Set by a check's budget (opinions.py): what groups it with other regressions, and,
    # where it was not redrawn, the opinion of its cause it shares or why none was asked.
    cause: str = ""                 # e.g. "toolchain 1a2b…, same scene, different pixels"
    shared: tuple[str, ...] = ()    # not redrawn: the films of its cause that were
    shared_kind: str = ""           # their opinion in short (:attr:`gist`)
    unasked: str = ""               # not redrawn, with no opinion to share: why

    @property
    def drawn(self) -> tuple[Render, ...]:
        """The renders that drew the frames (the check's, and re-renders that did not fail)."""
        return tuple(r for r in self.renders if r.error is None)

    @property
    def unstable_frames(self) -> tuple[int, ...]:
        """Positions (in :attr:`frames`) of frames drawn more than one way."""
        drawn = self.drawn
        return tuple(j for j in range(len(self.frames))
                     if len({r.digests[j] for r in drawn}) > 1)

    @property
    def redrawn(self) -> bool:
        """Whether fresh processes drew its frames (not shared, not unasked)."""
        return not self.shared and not self.unasked

    @property
    def gist(self) -> str:
        """The opinion in short, what regressions of one cause must agree on to share it:
        ``reproducible``, or ``unstable, it moves with locale`` (the renders that drew
        any redrawn frame otherwise than the check)."""
        if not self.redrawn:
            return self.shared_kind
        kind = self.kind
        if kind != "unstable":
            return kind
        check = self.renders[0].digests
        movers = [r.name for r in self.drawn if r.digests != check]
        if PLAIN in movers:
            return "unstable, it moves between fresh processes with nothing varied"
        return f"unstable, it moves with {' and '.join(movers)}"

    @property
    def kind(self) -> str:
        if self.unasked:
            return "unasked"
        if self.shared:
            return self.shared_kind.split(",")[0]
        if len(self.drawn) < 2:
            return "inconclusive"
        return "unstable" if self.unstable_frames else "reproducible"

    @property
    def summary(self) -> str:
        """One line (printed as ``opinion: …`` under the verdict)."""
        kind = self.kind
        drawn = self.drawn
        if self.unasked:
            return f"not redrawn: {self.unasked}"
        if self.shared:
            n = len(self.shared)
            return (f"{self.shared_kind}, as the {n} film{'s' if n > 1 else ''} of its cause "
                    f"redrawn said ({', '.join(self.shared)}); not redrawn (the cause, once, "
                    "under the verdicts)")
        if kind == "inconclusive":
            text = "inconclusive: no re-render drew the frames"
        elif kind == "reproducible":
            names = ", ".join("the check's" if r.name == CHECK else r.name for r in drawn)
            capped = (f"; {len(self.frames)} of the {self.differing} differing frames redrawn, "
                      f"evenly spaced" if len(self.frames) < self.differing else "")
            text = (f"reproducible: the same new pixels in every render "
                    f"({len(drawn)} renders: {names}{capped})")
        else:
            text = self._unstable(drawn)
        failed = [r for r in self.renders if r.error is not None]
        text += "".join(f"; the {r.name} re-render {r.error}" for r in failed)
        return text

    def _unstable(self, drawn: tuple[Render, ...]) -> str:
        unstable = self.unstable_frames
        j = unstable[0]
        ways = len({r.digests[j] for r in drawn})
        check = self.renders[0].digests[j]
        movers = [r.name for r in drawn if r.digests[j] != check]
        varied = [m for m in movers if m != PLAIN]
        if PLAIN in movers:
            moves = "it moves between fresh processes with nothing varied"
        else:
            moves = f"it moves with {' and '.join(varied)}"
        text = f"unstable: frame {self.frames[j]} drew {ways} different ways in {len(drawn)} " \
               f"renders, {moves}"
        as_recorded = [r.name for r in drawn if r.digests[j] == self.recorded[j]]
        if as_recorded:
            text += f" (under {' and '.join(as_recorded)} it drew the recorded pixels)"
        if len(self.frames) > 1:
            text += f"; {len(unstable)} of the {len(self.frames)} frames redrawn are unstable"
            if len(self.frames) < self.differing:
                text += f" ({self.differing} differ: evenly spaced ones redrawn)"
        return text

    def as_dict(self) -> dict[str, Any]:
        return {"kind": self.kind, "summary": self.summary, "frames": list(self.frames),
                "differing": self.differing, "recorded": list(self.recorded),
                "unstable_frames": [self.frames[j] for j in self.unstable_frames],
                "renders": [{"name": r.name, "note": r.note, "digests": list(r.digests),
                             "error": r.error} for r in self.renders],
                "cause": self.cause, "gist": self.gist, "shared": list(self.shared),
                "unasked": self.unasked}

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> Opinion:
        """The inverse of :meth:`as_dict` (xdist workers send verdicts as JSON)."""
        return cls(tuple(data["frames"]), int(data["differing"]), tuple(data["recorded"]),
                   tuple(Render(r["name"], tuple(r["digests"]), r.get("note") or "",
                                r.get("error")) for r in data["renders"]),
                   data.get("cause") or "", tuple(data.get("shared") or ()),
                   data.get("gist") or "" if data.get("shared") else "",
                   data.get("unasked") or "")


def wanted(verdict: Verdict, reading: Reading | None, renders: int) -> bool:
    """Whether ``verdict`` gets a second opinion: a regression that fails (an excused
    one fails nothing and is not redrawn: decision 0075) with frames to redraw."""
    return (renders > 0 and reading is not None and verdict.kind is Kind.REGRESSION
            and verdict.excused is None and bool(verdict.differing_frames))


def variations_for(renders: int, environ: Mapping[str, str] = os.environ) -> tuple[str, ...]:
    """The variations of re-renders 2..``renders``, in :data:`ORDER`; the thread count
    already in effect is no variation."""
    current = environ.get(THREADS_ENV, "0").strip() or "0"
    usable = [name for name in ORDER if name != f"threads-{current}"]
    return tuple(usable[:max(0, renders - 1)])


def redrawn(differing: Sequence[int]) -> tuple[int, ...]:
    """The differing frames a second opinion redraws: all, or :data:`MAX_FRAMES` of
    them evenly spaced (the first and the last included)."""
    return tuple(differing[k] for k in evenly_spaced(len(differing), MAX_FRAMES))


def consult(verdict: Verdict, entry: Entry | None, reading: Reading | None, config: Config,
            renders: int = DEFAULT_RENDERS, comp: Composition | None = None, *,
            environ: Mapping[str, str] | None = None, timeout: float = TIMEOUT_S,
            setup: str | None = None) -> Verdict:
    """``verdict`` with a second opinion attached, where it is :func:`wanted`.

    ``entry``: what the reading was judged against (the platform entry, if any).
    ``comp``: the composition judged when it is not the file under its key (built
    in a test; text travels as bytes). ``environ``: what the re-renders start
    from (default: this process's). ``setup``: the self-test worker's hook.
    """
    if not wanted(verdict, reading, renders) or entry is None:
        return verdict
    return consult_together([(verdict, entry, reading, comp)], config, renders,
                            environ=environ, timeout=timeout, setup=setup)[0]


def consult_together(regressions: Sequence[tuple[Verdict, Entry, Reading, Composition | None]],
                     config: Config, renders: int = DEFAULT_RENDERS, *,
                     environ: Mapping[str, str] | None = None, timeout: float = TIMEOUT_S,
                     setup: str | None = None) -> list[Verdict]:
    """:func:`consult` for several regressions (each :func:`wanted`) at once: each
    re-render is one fresh process that draws every film's frames, film after film,
    so the processes start once (a check's budget: opinions.py)."""
    renders = min(renders, MAX_RENDERS)
    base = dict(os.environ if environ is None else environ)
    names = variations_for(renders, base)
    targets, compared, texts = [], [], []
    for verdict, entry, reading, comp in regressions:
        compared.append(_compared(verdict, entry, reading))
        path = comp.path if comp is not None else config.root / verdict.key
        lottie = getattr(comp, "kind", "composition") == "lottie"
        targets.append(Target(verdict.key, Path(path), reading.frames, compared[-1][0], lottie))
        texts.append(base64.b64encode(comp.text).decode("ascii")
                     if comp is not None and comp.text is not None else None)
    if any(target.pinned_threads for target in targets):  # 0 engine threads only (0120)
        names = tuple(n for n in names if n not in ("threads-1", "threads-2"))
    jobs, notes = jobs_for(targets, 0, base, names, seed=1)
    outs = _run(jobs, targets, config.root, setup, timeout,
                texts if any(t is not None for t in texts) else None)
    judged = []
    for n, (verdict, _, reading, _) in enumerate(regressions):
        frames, check, recorded = compared[n]
        drawn = [check]
        for job, out in zip(jobs, outs):
            name = PLAIN if job.variation == "baseline" else job.variation
            drawn.append(_render(name, notes.get(job.variation, ""), _one(out, n), frames,
                                 reading))
        opinion = Opinion(frames, len(verdict.differing_frames), recorded, tuple(drawn))
        judged.append(dataclasses.replace(verdict, opinion=opinion))
    return judged


def _one(out: Mapping[str, Any], n: int) -> Mapping[str, Any]:
    """A re-render's result for its ``n``-th film alone (a failed process: for all)."""
    if "error" in out:
        return out
    films, segments = out.get("films") or [], out.get("segments") or []
    return {"films": films[n:n + 1], "segments": segments[n:n + 1]}


def not_redrawn(verdict: Verdict, entry: Entry, reading: Reading, **said: Any) -> Verdict:
    """``verdict`` with an opinion drawn by no fresh process: ``said`` is the
    :class:`Opinion`'s ``cause`` and ``shared``/``shared_kind`` or ``unasked``
    (a check's budget decides: opinions.py). The frames and digests are as
    :func:`consult` would redraw them."""
    frames, check, recorded = _compared(verdict, entry, reading)
    opinion = Opinion(frames, len(verdict.differing_frames), recorded, (check,), **said)
    return dataclasses.replace(verdict, opinion=opinion)


def _compared(verdict: Verdict, entry: Entry, reading: Reading
              ) -> tuple[tuple[int, ...], Render, tuple[str, ...]]:
    """The frames an opinion redraws, the check's own render of them and their
    recorded digests (from the platform entry the reading was judged against)."""
    if verdict.platform in entry.platforms:  # what the reading was judged against
        entry = entry.platforms[verdict.platform]
    frames = redrawn(verdict.differing_frames)
    fresh = dict(zip(reading.indices, reading.frame_digests))
    recorded = dict(zip(entry.indices, entry.frame_digests))
    return (frames, Render(CHECK, tuple(fresh[i][:SHORT] for i in frames)),
            tuple(recorded[i] for i in frames))


def _run(jobs: Sequence, targets: Sequence[Target], root: Path, setup: str | None,
         timeout: float, texts: Sequence[str | None] | None) -> list[dict[str, Any]]:
    """Every job at once, at most one per CPU: each is its own process."""
    from .selftest import run_job

    parallel = max(1, min(len(jobs), os.cpu_count() or 1))
    with ThreadPoolExecutor(max_workers=parallel) as pool:
        return list(pool.map(lambda job: run_job(job, targets, root, setup, timeout, texts),
                             jobs))


def _render(name: str, note: str, out: Mapping[str, Any], frames: tuple[int, ...],
            reading: Reading) -> Render:
    """One re-render's result: its digests, or what went wrong, in one line."""
    if "error" in out:  # the process: "worker crashed (SIGSEGV)", "timed out after …"
        return Render(name, note=note, error=out["error"].removeprefix("worker "))
    film = (out.get("films") or [None])[0] or {}
    if film.get("error"):
        return Render(name, note=note, error=f"failed: {film['error']}")
    identity = film.get("identity") or {}
    moved = [k for k in sorted(reading.identity) if identity.get(k) != reading.identity[k]]
    if moved:
        return Render(name, note=note, error=f"failed: {', '.join(moved)} differs from the "
                      "check's (were files edited meanwhile?)")
    digests = (out.get("segments") or [[]])[0]
    if len(digests) != len(frames):
        return Render(name, note=note, error=f"failed: drew {len(digests)} of {len(frames)} "
                      "frames")
    return Render(name, tuple(d[:SHORT] for d in digests), note)
