"""pytest hooks for nanoframes: hooks only (docs/architecture.md).

Items live in items.py, session state in session.py, what is printed and
written in report.py, the worker → controller wiring in xdist.py. Without
--nf-check/--nf-record (or ``nf_check = true``) every hook returns at once:
nothing is collected or rendered and plain pytest is unaffected.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from nanoframes.shown import is_shown, shown
from pytest_nanoframes import cpus, evidence, hookspecs, selftest, summary, tests_ledger, xdist
from pytest_nanoframes.fixture import CHECKS, nf  # noqa: F401 - the nf fixture
from pytest_nanoframes.session import State, get_state, install


def pytest_addhooks(pluginmanager: pytest.PytestPluginManager) -> None:
    pluginmanager.add_hookspecs(hookspecs)


def pytest_addoption(parser: pytest.Parser) -> None:
    group = parser.getgroup("nanoframes", "nanoframes: compositions as tests")
    group.addoption("--nf-check", action="store_true", dest="nf_check",
                    help="collect *.nf.svg files and check each against the ledger "
                         "(ini: nf_check = true)")
    group.addoption("--nf-record", action="store_true", dest="nf_record",
                    help="render every collected composition and record it in the ledger, "
                         "written once at the end of the session")
    group.addoption("--nf-strict", action="store_true", dest="nf_strict",
                    help="a changed composition fails instead of xfailing, and so does an "
                         "excused one that matches (ini: nf_strict = true)")
    # An option string with "=" in it: `--nf-strict PATH` keeps meaning what it did.
    group.addoption("--nf-strict=edits", action="store_true", dest="nf_strict_edits",
                    help="a composition whose source, media or fonts moved without being "
                         "re-recorded fails; a toolchain-only move stays an xfail (for CI; "
                         "ini: nf_strict = edits)")
    group.addoption("--nf-strict=pixels", action="store_true", dest="nf_strict_pixels",
                    help="a composition whose pixels differ from its entry fails, whatever "
                         "input moved (a runner that draws otherwise too): the CI recipe's; "
                         "ini: nf_strict = pixels")
    group.addoption("--nf-force", action="store_true", dest="nf_force",
                    help="with --nf-record: record regressions too")
    group.addoption("--nf-platform", nargs="?", const="", default=None, dest="nf_platform",
                    metavar="TAG", help="with --nf-record: record a platform entry (TAG: default "
                    "this machine's, e.g. linux-x86_64) beside each primary entry")
    group.addoption("--nf-ci", action="store_true", dest="nf_ci",
                    help="with --nf-record: record even though $CI is set (or set "
                         "NANOFRAMES_RECORD_IN_CI=1)")
    group.addoption("--nf-samples", type=int, dest="nf_samples", metavar="N", default=None,
                    help="digest N evenly spaced frames instead of every frame "
                         "(ini: nf_samples)")
    group.addoption("--nf-ledger", dest="nf_ledger", metavar="PATH", default=None,
                    help="the ledger file (default: [tool.nanoframes] ledger, else "
                         "tests/digests.json; ini: nf_ledger, relative to rootdir)")
    group.addoption("--nf-report", dest="nf_report", metavar="PATH", default=None,
                    help="write every verdict as JSON to PATH (ini: nf_report)")
    selftest.addoption(group)  # --nf-selftest
    evidence.addoption(group)  # --nf-store, --nf-artifacts, --nf-html
    summary.addoption(group)  # --nf-summary
    parser.addini("nf_check", "check *.nf.svg compositions on every run", type="bool",
                  default=False)
    parser.addini("nf_strict", "changed compositions fail instead of xfailing: true (all), "
                  "edits (unrecorded edits only) or false", type="string", default="")
    parser.addini("nf_samples", "frames digested per composition (default: all)",
                  type="string", default="")
    parser.addini("nf_ledger", "the ledger file, relative to rootdir", type="string",
                  default="")
    parser.addini("nf_report", "write every verdict as JSON to this path", type="string",
                  default="")


def pytest_configure(config: pytest.Config) -> None:
    state = install(config)
    if not state.worker:  # `--nf-summary PATH`: PATH moved the rootdir; one line each
        from pytest_nanoframes.argv import misread, warning_line

        for option, value in misread(config.invocation_params.args,
                                     config.invocation_params.dir):
            config.issue_config_time_warning(pytest.PytestConfigWarning(warning_line(
                option, value, config.rootpath, config.inipath)), stacklevel=2)
    selftest.configure(config)  # --nf-selftest: self-test items of their own
    config.addinivalue_line(
        "markers", "nanoframes(key=None, samples=None): a composition or ledger item of the "
                   "nanoframes plugin, or a test whose returned composition is judged")
    if state.options.active:
        state.nf_config  # noqa: B018 - a bad [tool.nanoframes] is a usage error, now
        cpus.share_with_siblings(config)  # an xdist worker draws with its share of CPUs
        if draws_here(config, state):  # its worker boots while pytest collects
            state.boot_drawing_pool()
        if state.options.recording and not state.worker:
            from nanoframes.determinism.policy import allow_recording
            from nanoframes.errors import NanoframesError

            try:
                allow_recording(state.options.ci, "--nf-ci")
            except NanoframesError as exc:
                raise pytest.UsageError(shown(exc)) from None
    if not state.worker:  # nf.check reports verdicts in any mode
        config.pluginmanager.register(_Receiver(state), "nanoframes-receiver")


def draws_here(config: pytest.Config, state: State) -> bool:
    """Whether this process draws the session's films: an xdist worker, or a pytest
    that hands no items to workers, unless it only collects."""
    if config.getoption("collectonly", False):
        return False
    return state.worker or config.getoption("dist", "no") == "no"


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_protocol(item: pytest.Item, nextitem: pytest.Item | None) -> None:
    state = get_state(item.config)
    if state is None or not state.options.active:
        return
    from pytest_nanoframes.items import CompositionItem

    if isinstance(item, CompositionItem) and isinstance(nextitem, CompositionItem):
        item.nf_next = nextitem  # the film run next here is queued behind this one


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # xdist may be absent
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    return cpus.auto_workers(config)  # -n auto: one worker per CPU this process may use


def pytest_report_header(config: pytest.Config) -> str | None:
    state = get_state(config)
    if state is None or not state.options.active:
        from pytest_nanoframes.report import unchecked_header

        return unchecked_header(config)  # compositions configured, nothing checks them
    from pytest_nanoframes.report import header

    return header(state)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    state = get_state(parent.config)
    if state is None or not state.options.active:
        return None
    from nanoframes.model.svg import is_composition_name
    from pytest_nanoframes.items import CompositionFile, LedgerFile

    if is_composition_name(file_path.name):
        if not is_shown(str(file_path)):  # pytest would print its name raw: refused here
            state.session_errors.append(shown(f"{file_path}: error[key-invalid]: a file name "
                                              "with control characters is not a ledger key"))
            return None
        return CompositionFile.from_parent(parent, path=file_path)
    films = state.configured_films().get(file_path.resolve()) if file_path.suffix.lower() in (
        ".json", ".lottie") else None
    if films:  # a Lottie file the project's globs name (any *.json could be data)
        node = CompositionFile.from_parent(parent, path=file_path)
        node.films = films
        return node
    if file_path.resolve() == state.ledger_path:
        return LedgerFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(session: pytest.Session, config: pytest.Config,
                                  items: list[pytest.Item]) -> None:
    # Before -k/-m deselect: the ledger item checks every *collected* composition,
    # and entries keyed by a test are stale only when every test was collected.
    tests_ledger.collected(config, items)
    if session.testsfailed:
        tests_ledger.collect_failed(config)
    state = get_state(config)
    if state is None or not state.options.active:
        return
    from pytest_nanoframes.items import CompositionItem

    state.collected = sorted(state.ledger_key(item.film) for item in items
                             if isinstance(item, CompositionItem))


def pytest_collection_finish(session: pytest.Session) -> None:
    state = get_state(session.config)
    if state is not None and state.options.active:  # after -k/-m: the items that run
        from pytest_nanoframes.items import CompositionItem

        state.selected = sorted(state.ledger_key(item.path) for item in session.items
                                if isinstance(item, CompositionItem))
    if state is not None and not state.worker:  # how many items a full page would show
        state.items_total = len(session.items)
        state.collection_errors = session.testsfailed


@pytest.hookimpl(optionalhook=True)  # xdist: the controller collects nothing itself
def pytest_xdist_node_collection_finished(node: Any, ids: list[str]) -> None:
    state = get_state(node.config)
    if state is not None:
        state.items_total = max(state.items_total, len(ids))


def pytest_deselected(items: list[pytest.Item]) -> None:
    if items:
        tests_ledger.deselected(items[0].config)


@pytest.hookimpl(wrapper=True)
def pytest_pyfunc_call(pyfuncitem: pytest.Function):
    # @pytest.mark.nanoframes on a test function: judge what it returns (pytest-mpl style).
    marker = pyfuncitem.get_closest_marker("nanoframes")
    if marker is None:
        return (yield)
    from pytest_nanoframes.fixture import judge_returned

    original, returned = pyfuncitem.obj, []

    def capture(*args, **kwargs):
        returned.append(original(*args, **kwargs))

    pyfuncitem.obj = capture
    try:
        result = yield
    finally:
        pyfuncitem.obj = original
    judge_returned(pyfuncitem, marker, returned[0] if returned else None)
    return result


def pytest_assertrepr_compare(config: pytest.Config, op: str, left: Any, right: Any
                              ) -> list[str] | None:
    if op != "==" or not any(type(v).__module__.startswith("nanoframes") for v in (left, right)):
        return None  # never import the library for someone else's comparison
    from pytest_nanoframes.explain import explain

    return explain(left, right)


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    report = yield
    if call.when != "call":
        return report
    payload = getattr(item, "nf_payload", None)
    checks = getattr(item, CHECKS, None)
    if payload is not None:
        xdist.attach(report, payload)
    elif checks:  # nf.check / the marker: every check of the test
        xdist.attach(report, {"kind": "checks", "checks": checks})
    elif report.failed and (item.get_closest_marker("nanoframes") is not None
                            or "nf" in getattr(item, "fixturenames", ())):
        # failed before any verdict: still one of the page's items, with the failures
        last = (report.longreprtext.strip().splitlines() or ["failed"])[-1]
        xdist.attach(report, {"kind": "unjudged", "line": last[:300]})
    if payload is not None or checks:
        evidence.attach_extras(item, report)  # pytest-html: expected/actual/diff images
        if getattr(report, "wasxfail", None):  # changed: the verdict's words, not a trace
            report.longrepr = report.wasxfail
    _shown_report(report)
    return report


def _shown_report(report: pytest.TestReport) -> None:
    """What pytest prints of a report whose text is a string (our items' failures,
    an xfail's reason): control characters made visible (nanoframes/shown.py)."""
    if isinstance(report.longrepr, str):
        report.longrepr = shown(report.longrepr)
    if isinstance(getattr(report, "wasxfail", None), str):
        report.wasxfail = shown(report.wasxfail)


class _Receiver:
    """The controller's ear (or the only process's): a hook object bound to the state,
    since ``pytest_runtest_logreport`` is not given the config."""

    def __init__(self, state: State) -> None:
        self.state = state

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # Every worker's reports arrive here on the controller, and every report in a serial run.
        state = self.state
        state.ran.add(report.nodeid)  # the page says how many items never started
        payload = xdist.payload_of(report)
        if payload is None or report.when != "call":
            return
        for one in payload["checks"] if payload.get("kind") == "checks" else [payload]:
            state.receive(report.nodeid, one)
            if one.get("kind") == "composition":
                from pytest_nanoframes.items import verdict_from_json

                state.config.hook.pytest_nanoframes_verdict(
                    config=state.config, verdict=verdict_from_json(one), nodeid=report.nodeid)


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    payload = xdist.payload_of(report)
    if payload is None:
        return None
    if payload.get("kind") == "checks":
        from pytest_nanoframes.fixture import checks_status

        return checks_status(report, payload["checks"])
    from pytest_nanoframes.report import teststatus

    return teststatus(report, payload)


@pytest.hookimpl(tryfirst=True)  # before the terminal reporter prints its summary
def pytest_sessionfinish(session: pytest.Session, exitstatus: int) -> None:
    state = get_state(session.config)
    if state is None or not state.options.active or state.worker:
        return
    if state.options.recording:
        state.record(before_commit=lambda fresh: evidence.say_what_is_accepted(state, fresh))
    else:  # a check: what did not match is kept for `nanoframes accept` and review
        evidence.keep_pending(state)
    evidence.finish(state, session, exitstatus)  # --nf-artifacts manifest, --nf-html page
    summary.finish(state)  # --nf-summary: the Markdown job summary
    if state.options.report is not None:
        from nanoframes.errors import NanoframesError
        from pytest_nanoframes.report import write_json_report

        try:
            write_json_report(state, state.options.report)
        except NanoframesError as exc:
            state.session_errors.append(str(exc))
    if state.session_errors:
        # As syrupy does: the run fails, whatever the items said (one line each, in
        # the terminal summary; never a traceback out of this hook).
        session.exitstatus = int(session.exitstatus) | pytest.ExitCode.TESTS_FAILED


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    state = get_state(config)
    if state is None or state.worker:
        return
    if not state.options.active and not state.results:  # nothing judged: no section
        return
    from pytest_nanoframes.report import terminal_summary

    terminal_summary(state, terminalreporter)
