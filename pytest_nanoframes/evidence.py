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

if TYPE_CHECKING:
    from nanoframes.determinism.verdict import Reading, Verdict
    from nanoframes.evidence.check import EvidenceOptions
    from pytest_nanoframes.session import State

_OPTIONS = pytest.StashKey["EvidenceOptions"]()


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
            html=path("nf_html"))
    return stash[_OPTIONS]


def record_store(state: State) -> Path | None:
    """Where recording keeps frames (None: not recording, or the store is off)."""
    return options(state).store if state.options.recording else None


def store_warning(state: State, reading: Reading | None) -> str | None:
    store = record_store(state)
    if store is None or reading is None:
        return None
    from nanoframes.frames.store import unkept_warning

    return unkept_warning(store, reading.frame_digests)


def for_item(item: pytest.Item, state: State, verdict: Verdict, reading: Reading | None
             ) -> tuple[Verdict, dict | None]:
    """The verdict with its pixel evidence (checking only), its record for the
    manifest and page, and pytest-html extras kept on the item."""
    if state.options.recording:
        return verdict, None
    from nanoframes.evidence.artifacts import record_of, write_artifacts
    from nanoframes.evidence.pixels import gather

    opts = options(state)
    html_plugin = item.config.pluginmanager.hasplugin("html")
    keep = opts.frames if (opts.directory is not None or html_plugin) else 0
    gathered = gather(verdict, state.ledger().entries.get(verdict.key), reading,
                      state.nf_config, opts.store, keep=keep)
    if html_plugin:
        item.nf_extras = _extras(gathered.images)  # type: ignore[attr-defined]
    if opts.directory is not None:
        gathered = write_artifacts(opts.directory, gathered, state.nf_config,
                                   sheet=opts.html is not None)
    from pytest_nanoframes.session import RECORD_HINT

    return gathered.verdict, record_of(gathered.verdict, gathered.moved, gathered.sheet,
                                       RECORD_HINT)


def _extras(images: dict) -> list[dict]:
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
            out.append(extras.png(data, f"frame {index} {role}"))
    return out


def attach_extras(item: pytest.Item, report: pytest.TestReport) -> None:
    extras = getattr(item, "nf_extras", None)
    if extras:
        report.extras = [*getattr(report, "extras", []), *extras]


def finish(state: State) -> None:
    """(controller) The manifest and the page, from every item's record."""
    opts = options(state)
    if opts.artifacts is None and opts.html is None:
        return
    from nanoframes.evidence.check import finish as write

    records = [r["nf_record"] for r in state.results.values() if r.get("nf_record")]
    write(records, opts, title="nanoframes: pytest --nf-check")


def warning_line(state: State) -> str | None:
    """The first store warning any item sent (one line however many items failed)."""
    for result in sorted(state.results.values(), key=lambda r: r["key"]):
        if result.get("store_warning"):
            return result["store_warning"]
    return None
