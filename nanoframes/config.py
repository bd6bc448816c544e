"""Project root discovery and the ``[tool.nanoframes]`` table of pyproject.toml.

A project is marked by the nearest ancestor directory holding a
``pyproject.toml`` (else a ``.git``). Which project a run works in is decided
once, by :func:`project_root`, the same way by the command line and the pytest
plugin (docs/projects.md); ledger keys are relative to it
(:func:`relative_key`), and a composition outside it is an error.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from functools import cache
from pathlib import Path

try:  # Python 3.11+
    import tomllib
except ModuleNotFoundError:  # pragma: no cover - Python 3.10
    import tomli as tomllib  # type: ignore[no-redef]

from .errors import NanoframesError

DEFAULT_COMPOSITIONS = ("examples/**/*.nf.svg",)
DEFAULT_LEDGER = "tests/digests.json"


def find_project_root(start: str | Path | None = None) -> Path:
    """The nearest ancestor of ``start`` (default: cwd) with pyproject.toml or .git;
    ``start`` itself (its directory) where there is none. For rendering a loose
    file; a run that reads or writes a ledger uses :func:`project_root`."""
    here = _start_dir(start)
    return marked_root(here) or here


def _start_dir(start: str | Path | None) -> Path:
    """The directory a search starts from: a file's own directory (the one its
    link lives in, for a symlink), resolved."""
    here = Path(os.path.abspath(start or os.getcwd()))
    if not here.is_dir():
        here = here.parent
    return here.resolve()


def marked_root(start: str | Path) -> Path | None:
    """The nearest ancestor of the directory ``start`` holding a pyproject.toml,
    else the nearest holding a .git; None when there is neither."""
    here = Path(start)
    for candidate in (here, *here.parents):
        if (candidate / "pyproject.toml").is_file():
            return candidate
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            return candidate
    return None


def project_root(paths: Iterable[str | Path] = (), cwd: str | Path | None = None) -> Path:
    """The one project a run works in (docs/projects.md), whatever the order of ``paths``.

    With paths (compositions or directories): the project each lies in, which
    must be the same for all. Without: the project around ``cwd`` (default: the
    working directory). A path in no project, or paths in two projects, is an
    error naming the path; so no ledger is ever made outside a project.
    """
    base = Path(cwd) if cwd is not None else Path.cwd()
    found: dict[Path, Path] = {}
    for raw in paths:
        path = Path(raw) if Path(raw).is_absolute() else base / raw
        root = marked_root(_start_dir(path))
        if root is None:
            raise NanoframesError("outside-project", "not inside any project (no "
                                  "pyproject.toml or .git above it)", raw)
        found.setdefault(root, Path(raw))
    if len(found) > 1:
        (first, a), (second, b) = list(found.items())[:2]
        raise NanoframesError("outside-project", f"{a} is in the project {first} but "
                              f"{b} is in {second}: one run works in one project", b)
    if found:
        return next(iter(found))
    root = marked_root(_start_dir(base))
    if root is None:
        raise NanoframesError("no-project", "not inside a project (no pyproject.toml or "
                              ".git here or above): there is no ledger to use", base)
    return root


@dataclass(frozen=True)
class Config:
    root: Path
    compositions: tuple[str, ...] = DEFAULT_COMPOSITIONS
    ledger: str = DEFAULT_LEDGER
    font_dirs: tuple[str, ...] = ()
    # path (relative to root, POSIX) -> reason
    excused: dict[str, str] = field(default_factory=dict)
    store: str | None = None  # the reference frame store (frames/store.py); None: default

    @property
    def ledger_path(self) -> Path:
        return (self.root / self.ledger).resolve()

    @property
    def font_paths(self) -> tuple[Path, ...]:
        return tuple((self.root / d).resolve() for d in self.font_dirs)


@cache
def load_config(root: Path | None = None) -> Config:
    """Read ``[tool.nanoframes]`` from ``root``/pyproject.toml (defaults if absent)."""
    root = Path(root).resolve() if root else find_project_root()
    pyproject = root / "pyproject.toml"
    table: dict = {}
    if pyproject.is_file():
        try:
            with pyproject.open("rb") as fh:
                table = tomllib.load(fh).get("tool", {}).get("nanoframes", {})
        except tomllib.TOMLDecodeError as exc:
            raise NanoframesError("config-invalid", f"cannot read pyproject.toml: {exc}",
                                  pyproject) from None
    if not isinstance(table, dict):
        raise NanoframesError("config-invalid", "[tool.nanoframes] must be a table", pyproject)

    def str_list(key: str, default: tuple[str, ...]) -> tuple[str, ...]:
        value = table.get(key, list(default))
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise NanoframesError("config-invalid",
                                  f"[tool.nanoframes] {key} must be a list of strings", pyproject)
        return tuple(value)

    excused_raw = table.get("excused", {})
    if not isinstance(excused_raw, dict) or not all(
        isinstance(k, str) and isinstance(v, str) for k, v in excused_raw.items()
    ):
        raise NanoframesError(
            "config-invalid",
            '[tool.nanoframes.excused] must map a composition path to a reason string',
            pyproject,
        )
    ledger = table.get("ledger", DEFAULT_LEDGER)
    if not isinstance(ledger, str):
        raise NanoframesError("config-invalid", "[tool.nanoframes] ledger must be a string",
                              pyproject)
    store = table.get("store")
    if store is not None and not isinstance(store, str):
        raise NanoframesError("config-invalid", "[tool.nanoframes] store must be a string",
                              pyproject)
    return Config(
        root=root,
        store=store,
        compositions=str_list("compositions", DEFAULT_COMPOSITIONS),
        ledger=ledger,
        font_dirs=str_list("font-dirs", ()),
        excused=dict(excused_raw),
    )


def relative_key(path: str | Path, root: Path) -> str:
    """A composition's ledger key: its path relative to the project root, POSIX separators.

    The path's own name is kept: a symlink inside the project is its own
    composition with its own key (its directories are resolved, so a project
    reached through a linked directory gives the same keys). A composition
    outside the root, or a link that resolves outside it, is an
    ``outside-project`` error naming the path: a key must mean the same file on
    every machine.
    """
    root = Path(root).resolve()
    own = Path(os.path.abspath(path))
    own = own.parent.resolve() / own.name
    try:
        key = own.relative_to(root).as_posix()
    except ValueError:
        raise NanoframesError("outside-project", f"outside the project {root}: keys are "
                              "relative to the project root", path) from None
    if not own.resolve().is_relative_to(root):
        raise NanoframesError("outside-project", f"a link to {own.resolve()}, outside the "
                              f"project {root}", path)
    return key
