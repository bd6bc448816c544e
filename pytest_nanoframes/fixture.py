"""The ``nf`` fixture, and the ``nanoframes`` marker on test functions.

``nf.check`` judges a composition built in a test exactly as a collected
``*.nf.svg`` item is judged (the library's ``check_composition`` against the
same ledger, the same ``decide``), under the ledger key of the test's node id.
Its verdict travels to the controller on the test's report, like an item's, so
``--nf-record`` records it once at the end of the session, under xdist too.
"""

from __future__ import annotations

import hashlib
import os
import re
from collections.abc import Iterable, Sequence
from typing import TYPE_CHECKING, Any

import pytest

from nanoframes.shown import shown
from pytest_nanoframes import evidence
from pytest_nanoframes.items import decide, junit_properties, verdict_json
from pytest_nanoframes.session import RECORD_HINT, State, get_state
from pytest_nanoframes.tests_ledger import entry_key

if TYPE_CHECKING:  # the library loads ThorVG: imported when a test first uses nf
    from nanoframes.api import Composition
    from nanoframes.determinism.selftest import CompositionSelftest
    from nanoframes.determinism.verdict import Verdict

CHECKS = "nf_checks"  # the item attribute holding each check's payload, in order


class NfFixture:
    """What the ``nf`` fixture gives a test: judge, self-test and compare films."""

    def __init__(self, item: pytest.Item) -> None:
        self._item = item

    def check(self, comp_or_text: Any, key: str | None = None, *,
              samples: int | None = None) -> Verdict:
        """Judge ``comp_or_text`` (a composition, its text, or a file path) against the
        ledger entry of this test (its node id, ``::key`` appended when given).

        Passes on a match, xfails with the reasons when an input moved, fails
        naming the frames on a regression or an absent entry; records under
        ``--nf-record``. Text resolves relative references against the test
        file's directory. Returns the verdict when the test goes on.
        """
        __tracebackhide__ = True
        return check(self._item, comp_or_text, key=key, samples=samples)

    def assert_deterministic(self, comp_or_text: Any, variations: Sequence[str] | None = None,
                             *, samples: int | None = None) -> CompositionSelftest:
        """Render under the self-test's variations (all of them by default, see
        ``nanoframes digest --selftest``) and fail naming each that changed a frame."""
        __tracebackhide__ = True
        return assert_deterministic(self._item, comp_or_text, variations, samples=samples)

    def assert_frames_equal(self, a: Any, b: Any) -> None:
        """Two frames (RGBA arrays) or two films (compositions, texts, paths or
        sequences of frames) are equal pixel for pixel; else fail with the numbers."""
        __tracebackhide__ = True
        assert_frames_equal(a, b)


@pytest.fixture
def nf(request: pytest.FixtureRequest) -> NfFixture:
    """Determinism assertions: ``nf.check``, ``nf.assert_deterministic``,
    ``nf.assert_frames_equal`` (docs/pytest-plugin.md)."""
    return NfFixture(request.node)


def _state(item: pytest.Item) -> State:
    state = get_state(item.config)
    assert state is not None  # installed in pytest_configure
    return state


def load_for(item: pytest.Item, comp_or_text: Any) -> Composition:
    from nanoframes.api import FILMS, load

    if isinstance(comp_or_text, FILMS):  # a composition or a Lottie film
        return comp_or_text
    if isinstance(comp_or_text, (str, bytes)) and _looks_like_text(comp_or_text):
        return load(comp_or_text, base=item.path.parent)
    if isinstance(comp_or_text, (str, os.PathLike)):
        return load(comp_or_text)
    raise TypeError(f"expected a film (a composition or Lottie), its text or a path, got "
                    f"{type(comp_or_text).__name__}")


def _looks_like_text(value: str | bytes) -> bool:
    return isinstance(value, bytes) or value.lstrip("\ufeff \t\r\n").startswith(("<", "{"))


def check(item: pytest.Item, comp_or_text: Any, *, key: str | None = None,
          samples: int | None = None) -> Verdict:
    __tracebackhide__ = True
    from nanoframes.determinism.reading import check_composition, entry_from_reading

    state = _state(item)
    options = state.options
    ekey = entry_key(item.nodeid, key)
    checks: list[dict[str, Any]] = item.__dict__.setdefault(CHECKS, [])
    if any(c["key"] == ekey for c in checks):
        pytest.fail(shown(f"nf.check: {ekey} is checked twice in one test; give each check its "
                          f"own key="), pytrace=False)
    try:
        comp = load_for(item, comp_or_text)
    except Exception as exc:  # a NanoframesError: the one-line error, judged as an item's
        from nanoframes.determinism.verdict import error
        from nanoframes.errors import NanoframesError

        if not isinstance(exc, NanoframesError):
            raise
        comp, verdict, reading = None, error(ekey, str(exc)), None
    else:
        from nanoframes.errors import NanoframesError

        try:
            ledger = state.ledger()
        except NanoframesError as exc:  # a broken ledger: one line, as for collected items
            pytest.fail(shown(exc), pytrace=False)
        verdict, reading = check_composition(
            comp, ekey, config=state.nf_config, ledger=ledger,
            samples=samples or options.samples, excused=state.excused(),
            store=evidence.reading_store(state), measure=True,
            keep_scenes=options.recording,  # a recording keeps its scenes (frames/scenes.py)
            # drawn by this process's drawing worker, as collected items are: a crash
            # in ThorVG fails this test, never the session (decision 0030)
            pool=state.drawing_pool())
    # pixel evidence, artifacts, the page's record: as for a collected file
    verdict, record = evidence.for_item(item, state, verdict, reading, comp=comp)
    outcome = decide(verdict, recording=options.recording, strict=options.strictness,
                     force=options.force)
    record = evidence.finished_record(record, item, outcome.status)
    payload = verdict_json(verdict)
    payload.update(kind="composition", outcome=outcome.status, entry=None, nf_record=record,
                   store_warning=evidence.store_warning(state, reading))
    payload.update(evidence.pending_payload(verdict, reading))
    if outcome.record and reading is not None:
        payload["entry"] = entry_from_reading(reading).to_json()
    checks.append(payload)
    item.user_properties.extend(junit_properties(verdict))
    if outcome.status == "failed":
        pytest.fail(shown(failure_text(item, comp, verdict, outcome.text, record)), pytrace=False)
    if outcome.status == "xfailed":
        pytest.xfail(shown(evidence.with_evidence(outcome.text, record, state)))
    return verdict


def failure_text(item: pytest.Item, comp: Composition | None, verdict: Verdict,
                 decided: str, record: dict | None = None) -> str:
    """The verdict line, what moved, and how to see it and accept it: the text a
    collected item prints, with commands that name this test."""
    from nanoframes.determinism.verdict import Kind

    kind = verdict.kind
    if kind is Kind.ERROR or comp is None or kind is Kind.MATCH:
        return evidence.with_evidence(decided, record, _state(item))
    lines = []
    if decided.startswith("refusing to record"):
        lines.append(decided.splitlines()[0])
    lines.append(verdict.line(RECORD_HINT))
    lines += [line for line in decided.splitlines() if line.startswith("  fails under ")]
    if kind is Kind.REGRESSION:
        lines.append("  every recorded input is identical (source, media, fonts, toolchain): "
                     "the same inputs drew different pixels")
    if verdict.differing_frames:
        lines.append(f"  inspect: {inspect_hint(item, comp, verdict.differing_frames[0])}")
    from nanoframes.determinism.accept import accept_command

    # This test alone, unless the toolchain moved (then the whole project, in one pass).
    command = accept_command(verdict, RECORD_HINT, f'"{item.nodeid}"', quote=False)
    lines.append(f"  if intended: {command}")
    return evidence.with_evidence("\n".join(lines), record, _state(item))


def inspect_hint(item: pytest.Item, comp: Composition, frame: int) -> str:
    """The command that draws ``frame`` of a file; for text, the frame drawn now,
    written as a PNG under pytest's base temporary directory."""
    stem = re.sub(r"[^A-Za-z0-9_.-]+", "-", item.name).strip("-") or "frame"
    if comp.text is None:
        from nanoframes.config import relative_key

        shown = relative_key(comp.path, _state(item).nf_config.root)
        return f"nanoframes render {shown} --frame {frame} -o .nanoframes/{stem}-{frame}.png"
    factory = getattr(item.config, "_tmp_path_factory", None)
    if factory is None:
        return f"nanoframes.render_frame(comp, {frame})"
    from nanoframes.api import render_frame
    from nanoframes.frames.output import write_png

    directory = factory.getbasetemp() / "nanoframes"
    directory.mkdir(parents=True, exist_ok=True)
    path = directory / f"{stem}-{frame}.png"
    write_png(render_frame(comp, frame), path)
    return f"{path} (frame {frame} as drawn now)"


def assert_deterministic(item: pytest.Item, comp_or_text: Any,
                         variations: Sequence[str] | None = None, *,
                         samples: int | None = None) -> CompositionSelftest:
    __tracebackhide__ = True
    from nanoframes.config import load_config
    from nanoframes.determinism.selftest import VARIATIONS, run_one
    from nanoframes.files import write_bytes_atomic

    comp = load_for(item, comp_or_text)
    config = load_config(comp.project_root)
    chosen = tuple(VARIATIONS if variations is None else variations)
    if comp.text is None:
        result = run_one(comp.path, config, variations=chosen, samples=samples)
    else:
        # The self-test's workers read files: the text goes beside its base for the
        # run (relative references must resolve as they do for the text), then away.
        name = f".nf-selftest-{hashlib.sha256(comp.text).hexdigest()[:12]}-{os.getpid()}"
        path = comp.directory / f"{name}.nf.svg"
        write_bytes_atomic(path, comp.text)
        try:
            result = run_one(path, config, variations=chosen, samples=samples)
        finally:
            path.unlink(missing_ok=True)
    if result.error is not None:
        pytest.fail(shown(f"nf.assert_deterministic: {result.error}"), pytrace=False)
    if not result.ok:
        names = ", ".join(v.name for v in result.failures)
        lines = [f"nf.assert_deterministic: {names} changed a frame (the same inputs must "
                 f"draw the same pixels under every variation)"]
        lines += ["  " + v.line() for v in result.variations]
        pytest.fail(shown("\n".join(lines)), pytrace=False)
    return result


def assert_frames_equal(a: Any, b: Any) -> None:
    __tracebackhide__ = True
    import numpy as np

    from pytest_nanoframes.compare import describe_films, frame_difference

    if isinstance(a, np.ndarray) and isinstance(b, np.ndarray) and a.ndim == b.ndim == 3:
        diff = frame_difference(a, b)
        if diff is not None:
            raise AssertionError(f"frames differ: {diff.numbers()}")
        return
    message = describe_films(_film_frames(a), _film_frames(b))
    if message is not None:
        raise AssertionError(f"films differ: {message}")


def _film_frames(value: Any) -> Iterable[Any]:
    import numpy as np

    from nanoframes.api import FILMS, frames, load

    if isinstance(value, np.ndarray):
        return [value] if value.ndim == 3 else list(value)
    if isinstance(value, FILMS):
        return frames(value)
    if isinstance(value, (str, bytes, os.PathLike)):
        return frames(load(value))
    return value


# --- the marker: @pytest.mark.nanoframes on a test that returns a composition ----------

def judge_returned(item: pytest.Item, marker: pytest.Mark, returned: Any) -> None:
    """Judge what a marked test returned, as ``nf.check`` would (pytest-mpl style)."""
    __tracebackhide__ = True
    if returned is None:
        pytest.fail("@pytest.mark.nanoframes: the test returned nothing; return the "
                    "composition (or its text) to judge", pytrace=False)
    unknown = sorted(set(marker.kwargs) - {"key", "samples"})
    if unknown or marker.args:
        pytest.fail(f"@pytest.mark.nanoframes takes key= and samples= only, got "
                    f"{', '.join(unknown) or marker.args!r}", pytrace=False)
    check(item, returned, key=marker.kwargs.get("key"), samples=marker.kwargs.get("samples"))


def checks_status(report: pytest.TestReport, checks: list[dict[str, Any]]) -> tuple | None:
    """A passing test whose checks include an excused one reports ``excused``."""
    if report.when == "call" and report.passed and any(
            c.get("outcome") == "excused" for c in checks):
        return "excused", "e", ("EXCUSED", {"yellow": True})
    return None
