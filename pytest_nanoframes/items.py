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

from pytest_nanoframes.session import RECORD_HINT, State, get_state
from pytest_nanoframes.tests_ledger import is_test_key, stale_problem, stale_test_keys

if TYPE_CHECKING:  # the library loads ThorVG: imported at run time only when active
    from nanoframes.determinism.ledger import Ledger
    from nanoframes.determinism.verdict import Verdict

SUFFIX = ".nf.svg"


class NanoframesFailure(Exception):
    """A verdict that fails its test; ``str()`` is the whole report."""


@dataclass(frozen=True)
class Outcome:
    status: str  # "passed", "xfailed", "failed" or "excused"
    text: str = ""
    record: bool = False  # recording: send this reading's entry to the ledger


def item_name(path: Path) -> str:
    """``title-card`` for ``title-card.nf.svg``: stable, known without parsing the file."""
    name = path.name
    return name[: -len(SUFFIX)] if name.endswith(SUFFIX) else path.stem


def decide(verdict: Verdict, *, recording: bool, strict: bool, force: bool) -> Outcome:
    """The test outcome of a verdict (DESIGN.md, "Verdicts", pytest column)."""
    from nanoframes.determinism.verdict import Kind

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
        # like a strict xfail that passes, so an exemption cannot outlive its cause.
        if kind is Kind.MATCH and strict:
            return Outcome("failed", line)
        return Outcome("excused", line)
    if kind is Kind.MATCH:
        return Outcome("passed", line)
    if kind is Kind.CHANGED:
        if strict:
            return Outcome("failed", line)
        return Outcome("xfailed", verdict.summary(RECORD_HINT))
    if kind is Kind.REGRESSION:
        return Outcome("failed", regression_text(verdict))
    return Outcome("failed", line)  # absent, error (stale belongs to the ledger item)


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
                     f"-o {item_name(Path(key))}-{first}.png")
    lines.append(f"  if intended: pytest {key} --nf-record --nf-force")
    return "\n".join(lines)


def verdict_json(verdict: Verdict) -> dict[str, Any]:
    """Plain types only: the payload travels through execnet under xdist."""
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
        "line": verdict.line(RECORD_HINT),
    }


def verdict_from_json(data: dict[str, Any]) -> Verdict:
    from nanoframes.determinism.verdict import Kind, Verdict

    return Verdict(
        key=data["key"], kind=Kind(data["verdict"]), reasons=tuple(data["reasons"]),
        excused=data["excused"], digest=data["digest"],
        differing_frames=tuple(data["differing_frames"]),
        compared_frames=data["compared_frames"], error=data["error"], note=data["note"],
    )


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
            return str(excinfo.value)
        return super().repr_failure(excinfo)  # a bug in nanoframes: show it whole


class CompositionItem(_Item):
    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, self.state.ledger_key(self.path)

    def runtest(self) -> None:
        from nanoframes.determinism.reading import check_one, entry_from_reading

        state = self.state
        options = state.options
        verdict, reading = check_one(
            self.path, config=state.nf_config, ledger=state.ledger(), samples=options.samples,
            jobs=1,  # xdist spreads items over processes; one process per item is enough
            excused=state.excused(),
        )
        outcome = decide(verdict, recording=options.recording, strict=options.strict,
                         force=options.force)
        payload = verdict_json(verdict)
        payload.update(kind="composition", outcome=outcome.status, entry=None)
        if outcome.record and reading is not None:
            payload["entry"] = entry_from_reading(reading).to_json()
        self.nf_payload = payload
        self.user_properties.extend(junit_properties(verdict))
        if outcome.status == "failed":
            raise NanoframesFailure(outcome.text)
        if outcome.status == "xfailed":
            pytest.xfail(outcome.text)


def junit_properties(verdict: Verdict) -> list[tuple[str, str]]:
    props = [("nf_verdict", verdict.kind.value), ("nf_digest", verdict.digest or ""),
             ("nf_reasons", "; ".join(verdict.reasons))]
    if verdict.excused is not None:
        props.append(("nf_excused", verdict.excused))
    if verdict.error:
        props.append(("nf_error", verdict.error))
    return props


class CompositionFile(pytest.File):
    def collect(self) -> Iterator[CompositionItem]:
        item = CompositionItem.from_parent(self, name=item_name(self.path))
        item.add_marker("nanoframes")  # `-m nanoframes` selects the plugin's items
        yield item


def ledger_problems(ledger: Ledger, collected: Iterable[str], root: Path) -> list[str]:
    """What is wrong with the ledger's shape, without rendering anything."""
    problems = []
    entries = ledger.entries
    missing = sorted(set(collected) - set(entries))
    if missing:
        problems.append(f"{len(missing)} collected composition(s) without an entry "
                        f"(record with {RECORD_HINT}): {', '.join(missing)}")
    # Entries keyed by a test (nf.check) are judged by stale_test_keys, not as files.
    stale = sorted(key for key in entries if not is_test_key(key) and not (root / key).is_file())
    for key in stale:
        problems.append(f"STALE {key}: the ledger has an entry but the file is gone; "
                        f"{RECORD_HINT} drops it")
    # read_ledger already refuses an entry without its four inputs; say so if one slips by.
    from nanoframes.determinism.ledger import IDENTITY_KEYS

    for key, entry in entries.items():
        lacking = [name for name in IDENTITY_KEYS if not entry.identity.get(name)]
        if lacking:
            problems.append(f"{key}: no recorded {', '.join(lacking)}")
    toolchains = sorted({entry.identity.get("toolchain", "") for entry in entries.values()})
    if len(toolchains) > 1:
        by = {t: sorted(k for k, e in entries.items() if e.identity.get("toolchain") == t)
              for t in toolchains}
        listed = "; ".join(f"{t[:12]}: {', '.join(keys)}" for t, keys in by.items())
        problems.append(f"entries recorded with {len(toolchains)} toolchains, expected one "
                        f"recording pass ({RECORD_HINT} re-records them): {listed}")
    return problems


class LedgerItem(_Item):
    """The ledger file itself: complete, not stale, one toolchain. Renders nothing."""

    def reportinfo(self) -> tuple[Path, int | None, str]:
        return self.path, None, f"ledger {self.state.ledger_key(self.path)}"

    def runtest(self) -> None:
        from nanoframes.errors import NanoframesError

        state = self.state
        try:
            stale_tests = stale_test_keys(self.config, state.ledger().entries)
        except NanoframesError:
            if not state.options.recording:
                raise
            stale_tests = []  # recording reports a broken ledger once, at the end
        self.nf_payload = {"kind": "ledger", "problems": [], "stale_tests": stale_tests}
        if state.options.recording:
            # The controller rewrites the ledger after every item ran; this item's
            # presence in the run is what lets it drop entries whose file is gone.
            return
        problems = ledger_problems(state.ledger(), state.collected, state.nf_config.root)
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
