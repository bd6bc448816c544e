"""What a change means for a gate, and the command that accepts it: written once,
for the CLI, the pytest plugin and the CI recipe.

- An **edit** is a changed verdict one of whose moved inputs a person edits
  (source, media, fonts; the frame count moves only with them). A toolchain move
  (a code edit of nanoframes, an upgrade) moves every entry alike and is nobody's
  edit of a composition, so ``--nf-strict=edits`` fails edits and lets a
  toolchain-only move stay an xfail. ``--nf-strict=pixels`` (the CI recipe's) fails
  every film whose pixels differ from its entry, whatever input moved, so a runner
  that draws otherwise fails until a person decides (a code edit whose pixels did
  not move is a match, and passes).
- The command that **accepts** a verdict records its key, unless the toolchain
  moved: then every entry moved with it, and recording one would leave the ledger
  recorded with two toolchains, so the whole project is recorded in one pass.
"""

from __future__ import annotations

import shlex
from collections import Counter
from collections.abc import Iterable

from ..errors import NanoframesError
from .verdict import Kind, Verdict

# The inputs a person edits; a toolchain move (a code edit of nanoframes, an upgrade)
# moves every entry alike and is nobody's edit of a composition.
EDIT_INPUTS = ("source", "media", "fonts")
STRICTNESS = ("all", "edits", "pixels")


def moved_inputs(verdict: Verdict) -> tuple[str, ...]:
    """What the reasons say moved: ``source``, ``media``, ``fonts``, ``toolchain``,
    ``frames`` (the frame count), in the reasons' order."""
    names = []
    for reason in verdict.reasons:
        word = reason.split(" ", 1)[0]
        names.append("frames" if word == "frame" else word)
    return tuple(names)


def is_edit(verdict: Verdict) -> bool:
    """A changed verdict one of whose moved inputs somebody edited (source, media,
    fonts, or the frame count, which only they change), whatever else moved with it."""
    return verdict.kind is Kind.CHANGED and any(
        name in (*EDIT_INPUTS, "frames") for name in moved_inputs(verdict))


def toolchain_moved(verdict: Verdict) -> bool:
    return "toolchain" in moved_inputs(verdict)


def strictness(value: object) -> str | None:
    """A strictness setting: ``all`` (true, yes, 1), ``edits``, ``pixels``, or None
    (false, no, 0, empty); anything else is a ``config-invalid`` error."""
    text = str(value if value is not None else "").strip().lower()
    if text in ("", "false", "no", "0", "off"):
        return None
    if text in ("true", "yes", "1", "all"):
        return "all"
    if text in ("edits", "pixels"):
        return text
    raise NanoframesError("config-invalid", f"nf_strict must be true, false, all, edits or "
                          f"pixels, got {value!r}")


def strict_fails(verdict: Verdict, strict: str | None) -> bool:
    """Whether a (non-excused) changed verdict fails under ``strict``: every one under
    ``all`` and ``pixels`` (a changed verdict's pixels differ from its entry: a code
    edit whose pixels did not move is a match); under ``edits`` those that moved an
    edited input, so an unrecorded edit fails while a toolchain-only move (which
    every code change makes) stays an xfail."""
    if verdict.kind is not Kind.CHANGED:
        return False
    return strict in ("all", "pixels") or (strict == "edits" and is_edit(verdict))


def strict_lines(verdict: Verdict, strict: str, record_hint: str = "--record") -> list[str]:
    """Why a changed verdict fails under ``strict``, and the ways out: re-record an
    edit; for pixels that moved with the machine alone (its toolchain), accept this
    machine's reading as its platform entry, or bound an excuse."""
    why = {"edits": "--nf-strict=edits: an edit that was not re-recorded",
           "pixels": "--nf-strict=pixels: its pixels differ from its entry"}.get(
        strict, "--nf-strict: a change that was not re-recorded")
    lines = [f"fails under {why}"]
    if strict == "pixels" and not is_edit(verdict):
        lines += [f"this machine draws it otherwise: accept its reading as this runner's "
                  f"platform entry (`nanoframes accept --from REPORT {_quoted(verdict.key)}`, "
                  f"REPORT: the folder of the check's --nf-artifacts, or its zip), or bound an "
                  f"excuse (max-delta, max-pixels, platforms: docs/digest.md)"]
    lines.append(f"if intended: {accept_command(verdict, record_hint)}")
    return lines


def record_command(record_hint: str = "--record", targets: Iterable[str] = (),
                   force: bool = False, quote: bool = True) -> str:
    """The command that records ``targets`` (none: the whole project in one pass), in
    the front end's own words (``--nf-record``: pytest; else ``nanoframes digest``);
    ``quote``: shell-quote each target (else it is given quoted as it should be)."""
    named = " ".join(_quoted(t) if quote else t for t in targets)
    if record_hint.startswith("--nf-"):
        return " ".join(p for p in ("pytest", named, record_hint,
                                    "--nf-force" if force else "") if p)
    return " ".join(p for p in ("nanoframes digest", record_hint, "--force" if force else "",
                                named or "--all") if p)


def accept_command(verdict: Verdict, record_hint: str = "--record",
                   target: str | None = None, quote: bool = True) -> str:
    """The command that records this verdict's reading as intended: its own key (or
    ``target``), unless the toolchain moved. Then every entry moved with it, and
    recording one would leave the ledger recorded with two toolchains: the whole
    project is recorded in one pass."""
    if toolchain_moved(verdict):
        return record_command(record_hint)
    return record_command(record_hint, [target or verdict.key],
                          force=verdict.kind is Kind.REGRESSION, quote=quote)


def _quoted(text: str) -> str:
    return shlex.quote(text)


KIND_ORDER = ("match", "changed", "regression", "absent", "stale", "error", "excused")
# Failures worst first: what a report lists first (the page, the job summary).
SEVERITY = ("regression", "error", "changed", "absent", "stale", "excused", "match")


def failure_order(verdict: Verdict) -> tuple[int, str]:
    """Sort key: regressions first, then errors, edits..., matches last; by key within."""
    kind = "excused" if verdict.excused is not None else verdict.kind.value
    return SEVERITY.index(kind), verdict.key


def tally(kinds: Iterable[str]) -> str:
    """``4 compositions: 2 match, 1 changed, 1 excused``: counts per verdict (an
    excused composition counted as ``excused``), in the verdict table's order."""
    kinds = list(kinds)
    counts = Counter(kinds)
    parts = [f"{counts[k]} {k}" for k in KIND_ORDER if counts[k]]
    n = len(kinds)
    return f"{n} composition{'s' if n != 1 else ''}: {', '.join(parts) or 'nothing to check'}"


def closing_lines(verdicts: Iterable[Verdict], record_hint: str = "--record",
                  problems: Iterable[str] = ()) -> list[str]:
    """What closes a check that was not all plain matches: the counts per verdict and
    the one command that accepts the changes (a regression is never accepted by it:
    it says so, with the command for one). None when every verdict is a plain match."""
    verdicts = list(verdicts)
    problems = list(problems)
    if not problems and all(v.kind is Kind.MATCH and not v.reasons and v.excused is None
                            for v in verdicts):
        return []
    lines = [tally("excused" if v.excused else v.kind.value for v in verdicts)]
    if problems:
        lines[0] += f"; the ledger: {len(problems)} problem{'s' if len(problems) != 1 else ''}"
    moved = [v for v in verdicts if v.kind in (Kind.CHANGED, Kind.ABSENT, Kind.STALE)
             or (v.kind is Kind.MATCH and v.reasons)]
    if moved or problems:
        lines.append(f"accept the changes: {record_command(record_hint)}")
    regressions = [v for v in verdicts if v.kind is Kind.REGRESSION and v.excused is None]
    if regressions:
        n = len(regressions)
        lines.append(f"  {'it refuses ' if moved or problems else ''}{n} regression"
                     f"{'s' if n != 1 else ''} (the same inputs drew other pixels): "
                     f"{', '.join(v.key for v in regressions)}; if intended: "
                     f"{accept_command(regressions[0], record_hint)}")
    return lines


def next_step(verdicts: Iterable[Verdict], record_hint: str = "--record") -> str | None:
    """The command a check that did not plainly match ends with (``digest --check``):
    review the readings it kept pending, or accept the changes at once; drop stale
    entries. None when nothing is left to do, or nothing a command does (an error)."""
    verdicts = [v for v in verdicts if v.excused is None]
    kept = [v for v in verdicts if v.kind in (Kind.CHANGED, Kind.ABSENT, Kind.REGRESSION)
            or (v.kind is Kind.MATCH and v.reasons)]
    if kept:
        changes = any(v.kind is not Kind.REGRESSION for v in kept)
        return ("next: nanoframes review (each reading: accept, reject or skip)"
                + ("; or all the changes at once: nanoframes accept --all-changed"
                   if changes else "; a regression is accepted only with --force"))
    if any(v.kind is Kind.STALE for v in verdicts):
        return f"next: {record_command(record_hint)} drops the stale entries"
    return None
