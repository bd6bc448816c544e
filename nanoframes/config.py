"""Project root discovery and the ``[tool.nanoframes]`` table of pyproject.toml.

The project root is the nearest ancestor directory holding a ``pyproject.toml``
(else a ``.git``); ledger keys and the "outside the project" rule are relative
to it, whatever the working directory.
"""

from __future__ import annotations

import os
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
    """The nearest ancestor of ``start`` (default: cwd) with pyproject.toml or .git."""
    here = Path(start or os.getcwd()).resolve()
    if here.is_file():
        here = here.parent
    for candidate in (here, *here.parents):
        if (candidate / "pyproject.toml").is_file():
            return candidate
    for candidate in (here, *here.parents):
        if (candidate / ".git").exists():
            return candidate
    return here


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
    """A path as a ledger key: relative to the project root, POSIX separators."""
    p = Path(path).resolve()
    try:
        return p.relative_to(root).as_posix()
    except ValueError:
        return p.as_posix()
