"""The plugin's side of the frame store and of pixel evidence.

--nf-store / --nf-no-store (where recording keeps frames, and where a check
finds its references), --nf-artifacts DIR / --nf-artifacts-frames N and
--nf-html PATH. Each item gathers its own evidence and writes its own images
(under xdist, on its worker: keys never collide); the controller writes the
manifest and the page once, from the items' records, sorted by key, so the
files are the same serial or with ``-n``. Where pytest-html is active each
item's expected/actual/diff images are attached to its report as extras.
"""

from __future__ import annotations

import base64
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from nanoframes.shown import shown

if TYPE_CHECKING:
    from nanoframes.determinism.opinions import Budget
    from nanoframes.determinism.verdict import Reading, Verdict
    from nanoframes.evidence.check import EvidenceOptions
    from nanoframes.model.composition import Composition
    from pytest_nanoframes.session import State

_OPTIONS = pytest.StashKey["EvidenceOptions"]()
_BUDGET = pytest.StashKey["Budget"]()  # this process's second opinions (opinions.py)


def addoption(group: Any) -> None:
    group.addoption("--nf-store", dest="nf_store", metavar="PATH", default=None,
                    help="the reference frame store (default: $NANOFRAMES_STORE, else "
                         "[tool.nanoframes] store, else .nanoframes/store)")
    group.addoption("--nf-no-store", action="store_true", dest="nf_no_store",
                    help="do not keep recorded frames in the store")
    group.addoption("--nf-artifacts", dest="nf_artifacts", metavar="DIR", default=None,
                    help="write expected/actual/diff PNGs of differing frames and "
                         "DIR/manifest.json")
    group.addoption("--nf-artifacts-frames", dest="nf_artifacts_frames", type=int, default=5,
                    metavar="N", help="differing frames written per composition (default 5)")
    group.addoption("--nf-html", dest="nf_html", metavar="PATH", default=None,
                    help="write an HTML report of every verdict with its pixel evidence")
    group.addoption("--nf-second-opinion", dest="nf_second_opinion", type=_renders, default=None,
                    metavar="N", help="draw a regression's differing frames again N times in "
                    "fresh processes before failing it (default: [tool.nanoframes] "
                    "second_opinion, else 3; 0: off)")
    group.addoption("--nf-no-second-opinion", action="store_true",
                    dest="nf_no_second_opinion", help="no second opinion on a regression")


def options(state: State) -> EvidenceOptions:
    stash = state.config.stash
    if _OPTIONS not in stash:
        from nanoframes.evidence.check import EvidenceOptions
        from nanoframes.frames.store import store_location

        get = state.config.getoption
        cfg = state.nf_config

        def path(name: str) -> Path | None:
            value = get(name)
            return (Path.cwd() / value).resolve() if value else None

        stash[_OPTIONS] = EvidenceOptions(
            store=store_location(cfg.root, cfg.store, path("nf_store"), bool(get("nf_no_store"))),
            artifacts=path("nf_artifacts"), frames=max(0, get("nf_artifacts_frames")),
            html=path("nf_html"), second_opinion=second_opinion(state))
    return stash[_OPTIONS]


def second_opinion(state: State) -> int:
    """Re-renders of a regression: --nf-no-second-opinion, --nf-second-opinion N, else
    ``[tool.nanoframes] second_opinion``."""
    get = state.config.getoption
    if get("nf_no_second_opinion"):
        return 0
    value = get("nf_second_opinion")
    return state.nf_config.second_opinion if value is None else value


def _renders(text: str) -> int:
    import argparse

    from nanoframes.config import second_opinion_count

    try:
        return second_opinion_count(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def record_store(state: State) -> Path | None:
    """Where recording keeps frames (None: not recording, or the store is off)."""
    return options(state).store if state.options.recording else None


def reading_store(state: State) -> Path | None:
    """Where a check or a recording keeps the frames it draws: a pending reading's
    frames are there for ``nanoframes accept`` (None: the store is off)."""
    return options(state).store


def pending_payload(verdict: Verdict, reading: Reading | None) -> dict:
    """What the controller needs to keep this item's reading as pending."""
    from nanoframes.determinism.pending import frames_of, is_pending
    from nanoframes.determinism.reading import entry_from_reading

    if reading is None or not is_pending(verdict):
        return {}
    return {"pending_entry": entry_from_reading(reading).to_json(),
            "pending_frames": list(frames_of(reading))}


def keep_pending(state: State) -> None:
    """(controller, after a check) The pending readings of every item, kept."""
    from nanoframes.determinism.ledger import Entry
    from nanoframes.determinism.pending import Pending, keep_all
    from nanoframes.determinism.platforms import reader_tag
    from nanoframes.errors import NanoframesError

    opts = options(state)
    try:
        tag = reader_tag()
        pending = [Pending(key, Entry.from_json(key, r["pending_entry"]),
                           {k: v for k, v in r.items() if k not in _NOT_VERDICT}, tag,
                           tuple(r["pending_frames"]))
                   for key, r in sorted(state.results.items()) if r.get("pending_entry")]
        keep_all(pending, state.nf_config.root, opts.store, opts.artifacts, opts.html)
    except NanoframesError as exc:
        state.session_errors.append(str(exc))


_NOT_VERDICT = ("pending_entry", "pending_frames", "entry", "nf_record", "store_warning",
                "kind", "outcome", "nodeid")


def store_warning(state: State, reading: Reading | None) -> str | None:
    store = record_store(state)
    if store is None or reading is None:
        return None
    from nanoframes.frames.store import unkept_warning

    return unkept_warning(store, reading.frame_digests)


def for_item(item: pytest.Item, state: State, verdict: Verdict, reading: Reading | None,
             comp: Composition | None = None) -> tuple[Verdict, dict | None]:
    """The verdict with its pixel evidence (checking only), its record for the
    manifest and page, and pytest-html extras kept on the item. ``comp``: a
    composition built in a test (``nf.check``), judged under the test's key."""
    if state.options.recording:
        return verdict, None
    from nanoframes.evidence.artifacts import diff_command, record_of, write_artifacts
    from nanoframes.evidence.pixels import gather

    opts = options(state)
    html_plugin = item.config.pluginmanager.hasplugin("html")
    keep = opts.frames if (opts.directory is not None or html_plugin) else 0
    gathered = gather(verdict, state.ledger().entries.get(verdict.key), reading,
                      state.nf_config, opts.store, keep=keep, comp=comp,
                      second_opinion=opts.second_opinion, budget=_budget(state))
    if html_plugin:
        extras = _extras(gathered.images, verdict.key if comp is not None else "")
        item.nf_extras = [*getattr(item, "nf_extras", []), *extras]  # type: ignore[attr-defined]
    if opts.directory is not None:
        gathered = write_artifacts(opts.directory, gathered, state.nf_config,
                                   sheet=opts.html is not None, comp=comp)
    from pytest_nanoframes.session import RECORD_HINT

    command = diff_command(verdict.key)
    if comp is not None:  # a test's composition: a file can be drawn by diff, text cannot
        command = None if comp.text is not None else \
            diff_command(verdict.key, state.ledger_key(comp.path))
    elif "::" in verdict.key:  # a test's composition that could not be loaded
        command = None
    return gathered.verdict, record_of(gathered.verdict, gathered.moved, gathered.sheet,
                                       RECORD_HINT, command)


def _budget(state: State) -> Budget:
    """This process's second-opinion budget: its items' regressions grouped by cause."""
    stash = state.config.stash
    if _BUDGET not in stash:
        from nanoframes.determinism.opinions import Budget

        stash[_BUDGET] = Budget(state.nf_config.second_opinion_budget)
    return stash[_BUDGET]


def finished_record(record: dict | None, item: pytest.Item, outcome: str) -> dict | None:
    """The record with the test that judged it and the outcome decided (the page puts
    what failed first: under --nf-strict a change fails)."""
    if record is None:
        return None
    return dict(record, nodeid=item.nodeid, outcome=outcome)


def with_evidence(text: str, record: dict | None, state: State | None = None) -> str:
    """A failure's or an xfail's text, then the pixel line, what moved in words and
    the command that shows expected, actual and diff (as ``digest --check`` prints)."""
    if record is None:
        return text
    from nanoframes.evidence.words import evidence_lines

    lines = evidence_lines(record)
    if not record.get("diff_command") and (record.get("evidence") or {}).get("frames"):
        page = options(state).html if state is not None else None  # text: no file to draw
        lines.append(f"see: {page.as_uri()}  (expected, actual and diff)" if page else
                     f'see: pytest "{record.get("nodeid")}" --nf-check '
                     "--nf-html=.nanoframes/report.html  (expected, actual and diff on the page)")
    return "\n".join([text, *("  " + line for line in lines)])


def _extras(images: dict, label: str = "") -> list[dict]:
    if not images:  # a matching item: nothing to show, and no NumPy to import for it
        return []
    from pytest_html import extras

    from nanoframes.frames.compare import amplify_diff
    from nanoframes.frames.store import encode_png

    out = []
    for index, (expected, actual) in sorted(images.items()):
        pictures = [("expected", expected), ("actual", actual)]
        if expected.shape == actual.shape:
            pictures.append(("diff", amplify_diff(expected, actual)))
        for role, rgba in pictures:
            data = base64.b64encode(encode_png(rgba)).decode("ascii")
            name = f"{label}: frame {index} {role}" if label else f"frame {index} {role}"
            out.append(extras.png(data, name))
    return out


def attach_extras(item: pytest.Item, report: pytest.TestReport) -> None:
    extras = getattr(item, "nf_extras", None)
    if extras:
        report.extras = [*getattr(report, "extras", []), *extras]


def finish(state: State, session: pytest.Session, exitstatus: int) -> None:
    """(controller) The manifest and the page, from every item's record; where they
    were written is kept for the terminal summary."""
    opts = options(state)
    if opts.artifacts is None and opts.html is None:
        return
    from nanoframes.errors import NanoframesError
    from nanoframes.evidence.check import finish as write

    records = [r["nf_record"] for r in state.results.values() if r.get("nf_record")]
    records += [unjudged_record(nodeid, line) for nodeid, line in state.unjudged.items()]
    try:
        write(records, opts, title="nanoframes: pytest --nf-check",
              partial=partial_note(state, session, exitstatus),
              frames_option="--nf-artifacts-frames")
    except NanoframesError as exc:
        state.session_errors.append(str(exc))
        return
    state.written = [("report", opts.html.as_uri())] if opts.html is not None else []
    if opts.artifacts is not None:
        state.written.append(("artifacts", f"{opts.artifacts} (manifest.json lists every file)"))


def partial_note(state: State, session: pytest.Session, exitstatus: int) -> str | None:
    """What a page from a run that stopped early says at its top (None: it did not)."""
    missing = max(0, state.items_total - len(state.ran))
    reason = session.shouldfail or session.shouldstop
    if state.collection_errors:
        reason = f"{state.collection_errors} error(s) during collection"
    elif not reason and exitstatus == pytest.ExitCode.INTERRUPTED:
        reason = "interrupted"
    if not missing and not reason:
        return None
    why = f" ({reason})" if isinstance(reason, str) and reason else ""
    return (f"Partial report: the run stopped early{why}; {missing} of {state.items_total} "
            f"collected test items did not run, so their verdicts are not on this page.")


def unjudged_record(nodeid: str, line: str) -> dict:
    """A nanoframes test that failed before any verdict (its composition never judged):
    on the page with the failures, so the page never reads greener than the terminal."""
    return {"composition": nodeid, "nodeid": nodeid, "verdict": "error", "outcome": "failed",
            "excused": None, "reasons": [], "line": f"FAILED {nodeid}: {line}", "moved": [],
            "evidence": None, "sheet": None, "diff_command": None}


def say_what_is_accepted(state: State, fresh: dict) -> None:
    """Before the ledger is written: for each entry a recording replaces, the
    verdict against it, the moved inputs in words and the pixel line."""
    from nanoframes.determinism.policy import reading_of, verdict_from_json
    from nanoframes.evidence.words import accepted, accepting_lines
    from pytest_nanoframes.session import RECORD_HINT

    reporter = state.config.pluginmanager.get_plugin("terminalreporter")
    lines: list[str] = []
    for key, entry in fresh.items():
        verdict = verdict_from_json(state.results[key])
        recorded = state.ledger().entries.get(key)
        if recorded is None or not accepted(verdict, state.options.force):
            continue
        lines += accepting_lines(verdict, recorded, reading_of(key, entry), state.nf_config,
                                 options(state).store, RECORD_HINT)
    if lines and reporter is not None:
        # pytest leaves its progress line ("[100%]") open until its own summary; under
        # -q it does not know that line is open (ensure_newline does nothing there)
        reporter.ensure_newline()
        if getattr(reporter, "_tw", None) is not None and reporter._tw.width_of_current_line:
            reporter.write("\n")
        reporter.write_sep("-", "nanoframes: what --nf-record accepts")
        for line in lines:
            reporter.write_line(shown(line))


def warning_line(state: State) -> str | None:
    """The first store warning any item sent (one line however many items failed)."""
    for result in sorted(state.results.values(), key=lambda r: r["key"]):
        if result.get("store_warning"):
            return result["store_warning"]
    return None
