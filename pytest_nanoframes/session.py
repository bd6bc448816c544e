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

from nanoframes.shown import shown
from pytest_nanoframes.xdist import is_worker

if TYPE_CHECKING:
    from collections.abc import Callable

    from nanoframes.config import Config
    from nanoframes.determinism.ledger import Entry, Ledger
    from nanoframes.determinism.recording import Committed

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
    ci: bool = False  # --nf-ci: recording where $CI is set is intended
    platform: str | None = None  # --nf-platform [TAG]: "" for this machine's tag
    strict_edits: bool = False  # --nf-strict=edits: fail unrecorded edits only
    strict_pixels: bool = False  # --nf-strict=pixels: fail every film whose pixels moved

    @property
    def strictness(self) -> str | None:
        """``all``, ``edits``, ``pixels`` or None (accept.strict_fails decides what fails)."""
        return ("all" if self.strict else "edits" if self.strict_edits
                else "pixels" if self.strict_pixels else None)

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
    platform = config.getoption("nf_platform")
    if platform is not None and not record:
        raise pytest.UsageError("--nf-platform only applies to --nf-record")
    if samples is not None and samples < 1:
        raise pytest.UsageError(f"--nf-samples must be at least 1, got {samples}")
    cli_ledger = config.getoption("nf_ledger")
    ini_ledger = str(config.getini("nf_ledger") or "").strip() or None
    report = config.getoption("nf_report") or str(config.getini("nf_report") or "").strip()
    report_path = None
    if report:
        base = Path.cwd() if config.getoption("nf_report") else config.rootpath
        report_path = (base / report).resolve()
    strict = _strictness(config)
    return Options(
        mode=mode,
        strict=strict == "all",
        strict_edits=strict == "edits",
        strict_pixels=strict == "pixels",
        force=bool(config.getoption("nf_force")),
        samples=samples,
        ledger=cli_ledger or ini_ledger,
        ledger_from_cli=bool(cli_ledger),
        report=report_path,
        ci=bool(config.getoption("nf_ci")),
        platform=platform,
    )


def _strictness(config: pytest.Config) -> str | None:
    """--nf-strict (all), --nf-strict=edits or =pixels, else ini nf_strict
    (true/false/all/edits/pixels)."""
    if config.getoption("nf_strict"):
        return "all"
    if config.getoption("nf_strict_edits"):
        return "edits"
    if config.getoption("nf_strict_pixels"):
        return "pixels"
    from nanoframes.determinism.accept import strictness
    from nanoframes.errors import NanoframesError

    try:
        return strictness(config.getini("nf_strict"))
    except NanoframesError as exc:
        raise pytest.UsageError(shown(exc.message)) from None


@dataclass
class State:
    """Everything the plugin knows during one session in one process."""

    config: pytest.Config
    options: Options
    worker: bool
    # Filled during collection (every process that collects).
    collected: list[str] = field(default_factory=list)
    selected: list[str] = field(default_factory=list)  # the compositions whose items run
    # Filled from reports (the controller, or the only process).
    results: dict[str, dict[str, Any]] = field(default_factory=dict)
    entries: dict[str, dict[str, Any]] = field(default_factory=dict)
    ledger_item_ran: bool = False
    ledger_problems: list[str] = field(default_factory=list)
    committed: Committed | None = None
    # Session-level failures (the ledger or the report not written): one line each.
    session_errors: list[str] = field(default_factory=list)
    stale_tests: list[str] = field(default_factory=list)  # test-keyed entries whose test is gone
    # The page's completeness: nanoframes tests that failed before any verdict, the
    # node ids that started, how many items were collected, collection errors.
    unjudged: dict[str, str] = field(default_factory=dict)  # node id -> its failure's last line
    ran: set[str] = field(default_factory=set)
    items_total: int = 0
    collection_errors: int = 0
    written: list[tuple[str, str]] = field(default_factory=list)  # (what, where): the summary
    _nf_config: Config | None = None
    _films: dict[Path, list[Path]] | None = None
    _ledger: Ledger | None = None
    _excused: dict[str, str] | None = None
    _pool: Any = None  # the worker that draws this process's items (drawing_pool)
    _booting: Any = None  # that worker while it starts (boot_drawing_pool)
    _pool_cleanup: bool = False
    _ahead: Any = None  # films queued on it before their item's turn (drawn_ahead)
    _keys: dict[Path, str] = field(default_factory=dict)  # ledger_key's answers

    @property
    def nf_config(self) -> Config:
        """``[tool.nanoframes]`` of the run's project (``nanoframes.config.project_root``,
        as the command line decides it), with the ledger path overridden if asked."""
        if self._nf_config is None:
            from nanoframes.config import load_config, project_root
            from nanoframes.errors import NanoframesError

            here = self.config.invocation_params.dir
            paths = [a.split("::")[0] for a in self.config.args]
            try:
                root = project_root([p for p in paths if (here / p).exists()], cwd=here)
                cfg = load_config(root)
            except NanoframesError as exc:
                raise pytest.UsageError(shown(exc)) from None
            if self.options.ledger:
                base = Path.cwd() if self.options.ledger_from_cli else self.config.rootpath
                cfg = dataclasses.replace(cfg, ledger=str((base / self.options.ledger).resolve()))
            self._nf_config = cfg
        return self._nf_config

    def configured_films(self) -> dict[Path, list[Path]]:
        """The Lottie films the project's globs name, by file (read once per session)."""
        if self._films is None:
            from nanoframes.determinism.sweep import configured_films

            try:
                self._films = configured_films(self.nf_config)
            except Exception:  # a bad glob: the ledger item and digest report it
                self._films = {}
        return self._films

    @property
    def ledger_path(self) -> Path:
        return self.nf_config.ledger_path

    def ledger_key(self, path: Path) -> str:
        """``path``'s ledger key, worked out once per session (pytest asks for it on
        every report line)."""
        key = self._keys.get(path)
        if key is None:
            from nanoframes.config import relative_key
            from nanoframes.errors import NanoframesError

            try:
                key = relative_key(path, self.nf_config.root)
            except NanoframesError:  # outside the project: the item itself fails, saying so
                key = Path(path).absolute().as_posix()
            self._keys[path] = key
        return key

    def ledger(self) -> Ledger:
        """The ledger as it is on disk, read once per process (errors are raised each
        time; with --nf-record --nf-force an unreadable one reads as empty, as in the CLI)."""
        if self._ledger is None:
            from nanoframes.determinism.recording import read_for_recording

            force = self.options.recording and self.options.force
            self._ledger = read_for_recording(self.ledger_path, force)[0]
        return self._ledger

    def excused(self) -> dict[str, str]:
        """Configured + $EXCUSED_COMPOSITIONS, then adjusted by pytest_nanoframes_excused."""
        if self._excused is None:
            from nanoframes.determinism.verdict import excused_list

            excused = excused_list(self.nf_config)
            self.config.hook.pytest_nanoframes_excused(config=self.config, excused=excused)
            self._excused = excused
        return self._excused


    def boot_drawing_pool(self) -> None:
        """Start ``drawing_pool``'s worker now, while pytest collects, where this
        process draws items (a lone pytest, or an xdist worker)."""
        from nanoframes.frames.workers import booting_pool

        self._close_at_cleanup()
        self._booting = booting_pool(1, self.nf_config.root)

    def drawing_pool(self) -> Any:
        """One worker process that draws this process's items, started at configure
        or at the first: a crash in ThorVG fails that item (``render-crashed``) and the
        next item gets a new worker; the session, or an xdist worker, never dies of it."""
        from nanoframes.frames.workers import is_broken, stop_pool, worker_pool

        if self._pool is not None and is_broken(self._pool):
            stop_pool(self._pool)
            self._pool = None
        if self._pool is None:
            self._close_at_cleanup()
            booting, self._booting = self._booting, None
            self._pool = booting.result() if booting is not None else \
                worker_pool(1, self.nf_config.root)
        return self._pool

    @property
    def drawn_ahead(self) -> Any:
        """The films queued on ``drawing_pool`` before their item's turn."""
        if self._ahead is None:
            from nanoframes.determinism.ahead import DrawnAhead

            self._ahead = DrawnAhead()
        return self._ahead

    def _close_at_cleanup(self) -> None:
        if not self._pool_cleanup:
            self.config.add_cleanup(self._close_pool)
            self._pool_cleanup = True

    def _close_pool(self) -> None:
        from nanoframes.frames.workers import shut_down, stop_pool

        if self._ahead is not None:
            self._ahead.clear()
        if self._booting is not None:  # never taken (no item drew): waited for, stopped
            booting, self._booting = self._booting, None
            shut_down(booting)  # a worker left booting would outlive its semaphores
        if self._pool is not None:  # idle at a normal end; drawing if interrupted
            stop_pool(self._pool)
            self._pool = None

    def platform_tag(self) -> str | None:
        """The tag --nf-platform records under (None: a primary recording)."""
        value = self.options.platform
        if value is None:
            return None
        from nanoframes.determinism.platforms import platform_tag, valid_tag

        return valid_tag(value) if value else platform_tag()

    # --- the controller's side (or the only process) -------------------------

    def receive(self, nodeid: str, payload: dict[str, Any]) -> None:
        """One item's payload, from a local report or one a worker sent."""
        if payload.get("kind") == "ledger":
            self.ledger_item_ran = True
            self.ledger_problems = list(payload.get("problems", ()))
            self.stale_tests = list(payload.get("stale_tests", ()))
            return
        if payload.get("kind") == "unjudged":
            self.unjudged[nodeid] = payload["line"]
            return
        key = payload["key"]
        self.results[key] = dict(payload, nodeid=nodeid)
        entry = payload.get("entry")
        if entry is not None:
            self.entries[key] = entry

    def record(self, before_commit: Callable[[dict[str, Entry]], None] | None = None) -> None:
        """Commit what this session rendered to the ledger (``recording.commit``: the
        CLI's rules, locked, re-read and merged by key, written once).

        A partial run (one file, -k) keeps every other entry. Entries whose file
        is gone are dropped only when the ledger item was part of the run: a
        narrowed run never deletes what it did not look at. A failure is one line
        in ``session_errors``. ``before_commit`` gets the fresh entries first.
        """
        from nanoframes.determinism.ledger import Entry
        from nanoframes.determinism.recording import commit
        from nanoframes.errors import NanoframesError

        path = self.ledger_path
        try:
            fresh = {key: Entry.from_json(key, data, path)
                     for key, data in sorted(self.entries.items())}
            platform = self.platform_tag()
            if before_commit is not None:  # what is accepted, said before it is written
                before_commit(fresh)
            full = self.ledger_item_ran and platform is None
            seen = set(self.collected) | set(self.results) if full else None
            self.committed = commit(path, fresh, force=self.options.force,
                                    root=self.nf_config.root, seen=seen,
                                    gone_tests=self.stale_tests if full else (),
                                    platform=platform, record_hint=RECORD_HINT)
        except NanoframesError as exc:
            self.session_errors.append(str(exc))
            return
        from nanoframes.determinism.verdict import Kind

        # A regression failed its item already; a platform entry without a primary
        # (or under other inputs) is refused only here, by the ledger's rules.
        self.session_errors += [f"not recorded: {v.line(RECORD_HINT)}"
                                for v in self.committed.refused if v.kind is not Kind.REGRESSION]
        self.config.hook.pytest_nanoframes_recorded(
            config=self.config, summary=self.committed.summary, ledger_path=path)


STATE = pytest.StashKey[State]()


def install(config: pytest.Config) -> State:
    state = State(config=config, options=read_options(config), worker=is_worker(config))
    config.stash[STATE] = state
    return state


def get_state(config: pytest.Config) -> State | None:
    return config.stash.get(STATE, None)
