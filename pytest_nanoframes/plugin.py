"""pytest hooks for nanoframes: hooks only (DESIGN.md, module map).

Items live in items.py, session state in session.py, what is printed and
written in report.py, the worker → controller wiring in xdist.py. Without
--nf-check/--nf-record (or ``nf_check = true``) every hook returns at once:
nothing is collected or rendered and plain pytest is unaffected.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from pytest_nanoframes import cpus, hookspecs, selftest, xdist
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
    group.addoption("--nf-force", action="store_true", dest="nf_force",
                    help="with --nf-record: record regressions too")
    group.addoption("--nf-samples", type=int, dest="nf_samples", metavar="N", default=None,
                    help="digest N evenly spaced frames instead of every frame "
                         "(ini: nf_samples)")
    group.addoption("--nf-ledger", dest="nf_ledger", metavar="PATH", default=None,
                    help="the ledger file (default: [tool.nanoframes] ledger, else "
                         "tests/digests.json; ini: nf_ledger, relative to rootdir)")
    group.addoption("--nf-report", dest="nf_report", metavar="PATH", default=None,
                    help="write every verdict as JSON to PATH (ini: nf_report)")
    selftest.addoption(group)  # --nf-selftest
    parser.addini("nf_check", "check *.nf.svg compositions on every run", type="bool",
                  default=False)
    parser.addini("nf_strict", "changed compositions fail instead of xfailing", type="bool",
                  default=False)
    parser.addini("nf_samples", "frames digested per composition (default: all)",
                  type="string", default="")
    parser.addini("nf_ledger", "the ledger file, relative to rootdir", type="string",
                  default="")
    parser.addini("nf_report", "write every verdict as JSON to this path", type="string",
                  default="")


def pytest_configure(config: pytest.Config) -> None:
    state = install(config)
    selftest.configure(config)  # --nf-selftest: self-test items of their own
    config.addinivalue_line(
        "markers", "nanoframes: a composition or ledger item of the nanoframes plugin")
    if state.options.active:
        state.nf_config  # noqa: B018 - a bad [tool.nanoframes] is a usage error, now
        cpus.share_with_siblings(config)  # an xdist worker draws with its share of CPUs
        if not state.worker:
            config.pluginmanager.register(_Receiver(state), "nanoframes-receiver")


@pytest.hookimpl(tryfirst=True, optionalhook=True)  # xdist may be absent
def pytest_xdist_auto_num_workers(config: pytest.Config) -> int | None:
    return cpus.auto_workers(config)  # -n auto: one worker per CPU this process may use


def pytest_report_header(config: pytest.Config) -> str | None:
    state = get_state(config)
    if state is None or not state.options.active:
        return None
    from pytest_nanoframes.report import header

    return header(state)


def pytest_collect_file(file_path: Path, parent: pytest.Collector) -> pytest.Collector | None:
    state = get_state(parent.config)
    if state is None or not state.options.active:
        return None
    from pytest_nanoframes.items import SUFFIX, CompositionFile, LedgerFile

    if file_path.name.endswith(SUFFIX):
        return CompositionFile.from_parent(parent, path=file_path)
    if file_path.resolve() == state.ledger_path:
        return LedgerFile.from_parent(parent, path=file_path)
    return None


@pytest.hookimpl(tryfirst=True)
def pytest_collection_modifyitems(config: pytest.Config, items: list[pytest.Item]) -> None:
    # Before -k/-m deselect: the ledger item checks every *collected* composition.
    state = get_state(config)
    if state is None or not state.options.active:
        return
    from pytest_nanoframes.items import CompositionItem

    state.collected = sorted(state.ledger_key(item.path) for item in items
                             if isinstance(item, CompositionItem))


@pytest.hookimpl(wrapper=True)
def pytest_runtest_makereport(item: pytest.Item, call: pytest.CallInfo[None]):
    report = yield
    payload = getattr(item, "nf_payload", None)
    if call.when == "call" and payload is not None:
        xdist.attach(report, payload)
    return report


class _Receiver:
    """The controller's ear (or the only process's): a hook object bound to the state,
    since ``pytest_runtest_logreport`` is not given the config."""

    def __init__(self, state: State) -> None:
        self.state = state

    def pytest_runtest_logreport(self, report: pytest.TestReport) -> None:
        # Every worker's reports arrive here on the controller, and every report in a serial run.
        payload = xdist.payload_of(report)
        if payload is None or report.when != "call":
            return
        state = self.state
        state.receive(report.nodeid, payload)
        if payload.get("kind") == "composition":
            from pytest_nanoframes.items import verdict_from_json

            state.config.hook.pytest_nanoframes_verdict(
                config=state.config, verdict=verdict_from_json(payload), nodeid=report.nodeid)


def pytest_report_teststatus(report: pytest.TestReport, config: pytest.Config) -> Any:
    payload = xdist.payload_of(report)
    if payload is None:
        return None
    from pytest_nanoframes.report import teststatus

    return teststatus(report, payload)


@pytest.hookimpl(tryfirst=True)  # before the terminal reporter prints its summary
def pytest_sessionfinish(session: pytest.Session) -> None:
    state = get_state(session.config)
    if state is None or not state.options.active or state.worker:
        return
    if state.options.recording:
        state.record()
    if state.options.report is not None:
        from pytest_nanoframes.report import write_json_report

        write_json_report(state, state.options.report)


def pytest_terminal_summary(terminalreporter: Any, config: pytest.Config) -> None:
    state = get_state(config)
    if state is None or not state.options.active or state.worker:
        return
    from pytest_nanoframes.report import terminal_summary

    terminal_summary(state, terminalreporter)
