"""Per-session state of the plugin, kept in ``config.stash`` (one per process).

Options are resolved once here, so items, reports and the xdist wiring read
the same values. The library (ThorVG included) is imported lazily: a pytest
run without ``--nf-check``/``--nf-record`` never loads it.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any

import pytest

from pytest_nanoframes.tests_ledger import is_test_key
from pytest_nanoframes.xdist import is_worker

if TYPE_CHECKING:
    from nanoframes.config import Config
    from nanoframes.determinism.ledger import Ledger, RecordSummary

RECORD_HINT = "--nf-record"


@dataclass(frozen=True)
class Options:
    mode: str | None  # "check", "record" or None (inactive)
    strict: bool
    force: bool
    samples: int | None
    ledger: str | None  # --nf-ledger (relative to the invocation dir) or ini nf_ledger
    ledger_from_cli: bool
    report: Path | None

    @property
    def active(self) -> bool:
        return self.mode is not None

    @property
    def recording(self) -> bool:
        return self.mode == "record"


def read_options(config: pytest.Config) -> Options:
    record = bool(config.getoption("nf_record"))
    check = bool(config.getoption("nf_check")) or bool(config.getini("nf_check"))
    # --nf-record wins over nf_check = true in ini: recording also renders every item.
    mode = "record" if record else "check" if check else None
    samples = config.getoption("nf_samples")
    if samples is None:
        raw = str(config.getini("nf_samples") or "").strip()
        if raw:
            try:
                samples = int(raw)
            except ValueError:
                raise pytest.UsageError(f"nf_samples must be an integer, got {raw!r}") from None
    if samples is not None and samples < 1:
        raise pytest.UsageError(f"--nf-samples must be at least 1, got {samples}")
    cli_ledger = config.getoption("nf_ledger")
    ini_ledger = str(config.getini("nf_ledger") or "").strip() or None
    report = config.getoption("nf_report") or str(config.getini("nf_report") or "").strip()
    report_path = None
    if report:
        base = Path.cwd() if config.getoption("nf_report") else config.rootpath
        report_path = (base / report).resolve()
    return Options(
        mode=mode,
        strict=bool(config.getoption("nf_strict")) or bool(config.getini("nf_strict")),
        force=bool(config.getoption("nf_force")),
        samples=samples,
        ledger=cli_ledger or ini_ledger,
        ledger_from_cli=bool(cli_ledger),
        report=report_path,
    )


@dataclass
class State:
    """Everything the plugin knows during one session in one process."""

    config: pytest.Config
    options: Options
    worker: bool
    # Filled during collection (every process that collects).
    collected: list[str] = field(default_factory=list)
    # Filled from reports (the controller, or the only process).
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    ledger_item_ran: bool = False
    ledger_problems: list[str] = field(default_factory=list)
    stale_tests: list[str] = field(default_factory=list)  # test-keyed entries whose test is gone
    record_summary: RecordSummary | None = None
    record_error: str | None = None
    _nf_config: Config | None = None
    _ledger: Ledger | None = None
    _excused: dict[str, str] | None = None

    @property
    def nf_config(self) -> Config:
        """``[tool.nanoframes]`` of the rootdir, with the ledger path overridden if asked."""
        if self._nf_config is None:
            from nanoframes.config import load_config
            from nanoframes.errors import NanoframesError

            try:
                cfg = load_config(self.config.rootpath)
            except NanoframesError as exc:
                raise pytest.UsageError(str(exc)) from None
            if self.options.ledger:
                base = Path.cwd() if self.options.ledger_from_cli else self.config.rootpath
                cfg = dataclasses.replace(cfg, ledger=str((base / self.options.ledger).resolve()))
            self._nf_config = cfg
        return self._nf_config

    @property
    def ledger_path(self) -> Path:
        return self.nf_config.ledger_path

    def ledger_key(self, path: Path) -> str:
        from nanoframes.config import relative_key

        return relative_key(path, self.nf_config.root)

    def ledger(self) -> Ledger:
        """The ledger as it is on disk, read once per process (errors are raised each time)."""
        if self._ledger is None:
            from nanoframes.determinism.ledger import read_ledger

            self._ledger = read_ledger(self.ledger_path)
        return self._ledger

    def excused(self) -> dict[str, str]:
        """Configured + $EXCUSED_COMPOSITIONS, then adjusted by pytest_nanoframes_excused."""
        if self._excused is None:
            from nanoframes.determinism.verdict import excused_list

            excused = excused_list(self.nf_config)
            self.config.hook.pytest_nanoframes_excused(config=self.config, excused=excused)
            self._excused = excused
        return self._excused


    # --- the controller's side (or the only process) -------------------------

    def receive(self, nodeid: str, payload: dict[str, Any]) -> None:
        """One item's payload, from a local report or one a worker sent."""
        if payload.get("kind") == "ledger":
            self.ledger_item_ran = True
            self.ledger_problems = list(payload.get("problems", ()))
            self.stale_tests = list(payload.get("stale_tests", ()))
            return
        key = payload["key"]
        self.results[key] = dict(payload, nodeid=nodeid)
        entry = payload.get("entry")
        if entry is not None:
            self.entries[key] = entry

    def record(self) -> None:
        """Merge what this session rendered into the ledger and write it once.

        Merged by key, so a partial run (one file, -k) keeps every other entry.
        Entries whose file is gone are dropped only when the ledger item was
        part of the run: a narrowed run never deletes what it did not look at.
        """
        from nanoframes.determinism.ledger import Entry, merge, read_ledger, write_ledger
        from nanoframes.errors import NanoframesError

        path = self.ledger_path
        try:
            old = read_ledger(path)  # fresh: the file as it is now, not as collection saw it
            updates = {key: Entry.from_json(key, data, path)
                       for key, data in sorted(self.entries.items())}
        except NanoframesError as exc:
            self.record_error = str(exc)
            return
        root = self.nf_config.root
        remove = []
        if self.ledger_item_ran:
            remove = [key for key in old.entries
                      if key not in updates and not is_test_key(key) and not (root / key).is_file()]
            remove += [key for key in self.stale_tests if key in old.entries and key not in updates]
        new, summary = merge(old, updates, remove)
        if summary.changed:
            write_ledger(new)
        self.record_summary = summary
        self.config.hook.pytest_nanoframes_recorded(
            config=self.config, summary=summary, ledger_path=path)


STATE = pytest.StashKey[State]()


def install(config: pytest.Config) -> State:
    state = State(config=config, options=read_options(config), worker=is_worker(config))
    config.stash[STATE] = state
    return state


def get_state(config: pytest.Config) -> State | None:
    return config.stash.get(STATE, None)
