"""Test items: one per composition, and one for the ledger's own shape.

A composition item calls the library's ``check_one``, the same function
``nanoframes digest --check`` calls, and maps its verdict to an outcome with
``decide``. Failures carry a short text (``repr_failure``), never a traceback:
the verdict is the message.
"""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from nanoframes.model.svg import composition_stem
from nanoframes.shown import shown
from pytest_nanoframes import evidence
from pytest_nanoframes.session import RECORD_HINT, State, get_state
from pytest_nanoframes.tests_ledger import stale_problem, stale_test_keys

if TYPE_CHECKING:  # the library loads ThorVG: imported at run time only when active
    from nanoframes.determinism.ledger import Ledger
    from nanoframes.determinism.verdict import Verdict



class NanoframesFailure(Exception):
    """A verdict that fails its test; ``str()`` is the whole report."""


@dataclass(frozen=True)
class Outcome:
    status: str  # "passed", "xfailed", "failed" or "excused"
    text: str = ""
    record: bool = False  # recording: send this reading's entry to the ledger


def item_name(path: Path) -> str:
    """``title-card`` for ``title-card.nf.svg``, ``spinner`` for ``spinner.json``,
    ``button#press`` for marker ``press`` of ``button.json``: stable, known without
    parsing the file."""
    name, mark, marker = path.name.partition("#")
    return composition_stem(name) + mark + marker


def decide(verdict: Verdict, *, recording: bool, strict: bool | str | None,
           force: bool) -> Outcome:
    """The test outcome of a verdict (README, "Verdicts", pytest column); ``strict``:
    ``all`` (or True), ``edits``, ``pixels`` or None (``accept.strict_fails`` says what
    fails)."""
    from nanoframes.determinism.accept import strict_fails
    from nanoframes.determinism.verdict import Kind

    strict = "all" if strict is True else strict or None
    kind = verdict.kind
    line = verdict.line(RECORD_HINT)
    if recording:
        if kind is Kind.ERROR:
            return Outcome("excused" if verdict.excused else "failed", line)
        if kind is Kind.REGRESSION and not force:
            # Re-recording must not launder the one verdict the ledger exists for.
            text = (f"refusing to record a regression (--nf-force records it anyway)\n"
                    f"{regression_text(verdict)}")
            return Outcome("excused" if verdict.excused else "failed", text)
        return Outcome("passed", line, record=True)
    if verdict.excused is not None:
        # Never silent; a match is the loudest excused line, and fails under --nf-strict
        # like a strict xfail that passes, so an exemption cannot outlive its cause
        # (unless another platform still needs it: determinism/excuses.py).
        if strict == "all" and verdict.exemption_outlived:
            return Outcome("failed", line)
        return Outcome("excused", line)
    if kind is Kind.MATCH:
        return Outcome("passed", line)
    if kind is Kind.CHANGED:
        if strict_fails(verdict, strict):
            return Outcome("failed", strict_text(verdict, strict))
        return Outcome("xfailed", verdict.summary(RECORD_HINT))
    if kind is Kind.REGRESSION:
        return Outcome("failed", regression_text(verdict))
    return Outcome("failed", line)  # absent, error (stale belongs to the ledger item)


def strict_text(verdict: Verdict, strict: str) -> str:
    """A changed verdict that fails under ``strict``: why, and the command that accepts
    it (the whole project when the toolchain moved: accept.accept_command)."""
    from nanoframes.determinism.accept import strict_lines

    return "\n".join([verdict.line(RECORD_HINT),
                      *(f"  {line}" for line in strict_lines(verdict, strict, RECORD_HINT))])


def regression_text(verdict: Verdict) -> str:
    key = verdict.key
    lines = [
        verdict.line(RECORD_HINT),
        "  every recorded input is identical (source, media, fonts, toolchain): "
        "the same inputs drew different pixels",
    ]
    if verdict.differing_frames:
        first = verdict.differing_frames[0]
        lines.append(f"  inspect: nanoframes render {key} --frame {first} "
                     f"-o .nanoframes/{item_name(Path(key))}-{first}.png")
    from nanoframes.determinism.accept import accept_command

    lines.append(f"  if intended: {accept_command(verdict, RECORD_HINT)}")
    return "\n".join(lines)


def verdict_json(verdict: Verdict) -> dict[str, Any]:
    """Plain types only: the payload travels through execnet under xdist."""
    from nanoframes.determinism.policy import verdict_to_json

    return verdict_to_json(verdict, RECORD_HINT)


def verdict_from_json(data: dict[str, Any]) -> Verdict:
    from nanoframes.determinism.policy import verdict_from_json as from_json

    return from_json(data)


class _Item(pytest.Item):
    """Shared plumbing: the payload for the controller and the short failure text."""

    nf_payload: dict[str, Any] | None = None

    @property
    def state(self) -> State:
        state = get_state(self.config)
        assert state is not None  # the plugin only collects items when it is installed
        return state

    def repr_failure(self, excinfo: pytest.ExceptionInfo[BaseException], style=None):  # type: ignore[override]
        from nanoframes.errors import NanoframesError

        if isinstance(excinfo.value, (NanoframesFailure, NanoframesError)):
            return shown(excinfo.value)
        if isinstance(excinfo.value, pytest.xfail.Exception):  # changed: the verdict, no trace
            return shown(excinfo.value.msg)
        return super().repr_failure(excinfo)  # a bug in nanoframes: show it whole


class CompositionItem(_Item):
    """One film: a composition, a Lottie file, or one marker's range of it (``film``:
    its address, ``dir/button.json#press``; the file is ``path``)."""

    film: Path
    nf_next: CompositionItem | None = None  # the film item this process runs next, if any

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, shown(self.state.ledger_key(self.film), lines=False)

    def runtest(self) -> None:
        from nanoframes.determinism.reading import check_one, entry_from_reading
        from nanoframes.determinism.verdict import Kind

        state = self.state
        options = state.options
        verdict, reading = check_one(
            self.film, config=state.nf_config, ledger=state.ledger(), samples=options.samples,
            # xdist spreads items over processes; one worker per process is enough, and
            # a crash in ThorVG there is this item's error, not the session's end
            pool=state.drawing_pool(),
            excused=state.excused(), store=evidence.reading_store(state),
            keep_scenes=options.recording,  # a recording keeps its scenes (frames/scenes.py)
            # the next film is opened and queued while the worker draws this one
            ahead=state.drawn_ahead, then=self.nf_next.film if self.nf_next else None,
        )
        verdict, record = evidence.for_item(self, state, verdict, reading)  # pixel evidence
        outcome = decide(verdict, recording=options.recording, strict=options.strictness,
                         force=options.force)
        record = evidence.finished_record(record, self, outcome.status)
        payload = verdict_json(verdict)
        payload.update(kind="composition", outcome=outcome.status, entry=None, nf_record=record,
                       store_warning=evidence.store_warning(state, reading))
        payload.update(evidence.pending_payload(verdict, reading))
        if options.recording and reading is not None and verdict.kind is not Kind.ERROR:
            # Every reading goes to the controller: policy.plan_record, the CLI's rules,
            # decides there (under the ledger's lock) what is recorded and what refused.
            payload["entry"] = entry_from_reading(reading).to_json()
        self.nf_payload = payload
        self.user_properties.extend(junit_properties(verdict))
        text = evidence.with_evidence(outcome.text, record, state)
        text += f"\n  {verdict.time_line}" if verdict.time_line else ""
        if outcome.status == "failed":
            raise NanoframesFailure(text)
        if outcome.status == "xfailed":
            pytest.xfail(shown(text))


def junit_properties(verdict: Verdict) -> list[tuple[str, str]]:
    props = [("nf_verdict", verdict.kind.value), ("nf_digest", verdict.digest or ""),
             ("nf_reasons", "; ".join(verdict.reasons))]
    if verdict.excused is not None:
        props.append(("nf_excused", verdict.excused))
    if verdict.error:
        props.append(("nf_error", verdict.error))
    return props


class CompositionFile(pytest.File):
    films: list[Path] | None = None  # a Lottie file's films, as the globs name them

    def collect(self) -> Iterator[CompositionItem]:
        for film in self.films or [self.path]:
            item = CompositionItem.from_parent(self, name=item_name(film))
            item.film = film
            item.add_marker("nanoframes")  # `-m nanoframes` selects the plugin's items
            yield item


def ledger_problems(ledger: Ledger, collected: Iterable[str], root: Path,
                    running: Iterable[str] = ()) -> list[str]:
    """What is wrong with the ledger's shape, without rendering anything (the rules
    are the library's, as ``nanoframes digest --check`` applies them). A collected
    composition without an entry whose own item runs (``running``) fails there, as
    ``absent``: one failure per new composition, not two."""
    from nanoframes.determinism.policy import mixed_toolchains, stale_keys

    problems = []
    entries = ledger.entries
    missing = sorted(set(collected) - set(entries) - set(running))
    if missing:
        problems.append(f"{len(missing)} collected composition(s) without an entry "
                        f"(record with {RECORD_HINT}): {', '.join(missing)}")
    for key in stale_keys(ledger, root, ()):  # test-keyed entries: stale_test_keys
        problems.append(f"STALE {key}: the ledger has an entry but the file is gone; "
                        f"{RECORD_HINT} drops it")
    mixed = mixed_toolchains(entries, RECORD_HINT)
    if mixed:
        problems.append(mixed)
    return problems


class LedgerItem(_Item):
    """The ledger file itself: complete, not stale, one toolchain. Renders nothing."""

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, shown(f"ledger {self.state.ledger_key(self.path)}", lines=False)

    def runtest(self) -> None:

        state = self.state
        self.nf_payload = {"kind": "ledger", "problems": []}
        ledger = state.ledger()  # unreadable or conflicted: this item fails with that line
        # Entries keyed by a test (nf.check) are stale when their test is gone.
        stale_tests = stale_test_keys(self.config, ledger.entries)
        self.nf_payload["stale_tests"] = stale_tests
        if state.options.recording:
            # The controller rewrites the ledger after every item ran; this item's
            # presence in the run is what lets it drop entries whose file is gone.
            return
        problems = ledger_problems(ledger, state.collected, state.nf_config.root,
                                   state.selected)
        problems += [stale_problem(key, RECORD_HINT) for key in stale_tests]
        self.nf_payload["problems"] = problems
        if problems:
            raise NanoframesFailure(
                f"ledger {state.ledger_key(self.path)}: {len(problems)} problem(s)\n  "
                + "\n  ".join(problems))


class LedgerFile(pytest.File):
    def collect(self) -> Iterator[LedgerItem]:
        item = LedgerItem.from_parent(self, name="ledger")
        item.add_marker("nanoframes")
        yield item
