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
from .keys import canonical_key

DEFAULT_COMPOSITIONS = ("examples/**/*.nf.svg",)
DEFAULT_LEDGER = "tests/digests.json"
# Everything nanoframes writes into a project that must not be committed (the
# ledger's lock, the reference frame store) lives under this directory.
STATE_DIR = ".nanoframes"


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


def state_dir(root: str | Path, create: bool = False, code: str = "ledger-write") -> Path:
    """``<root>/.nanoframes``: where nanoframes keeps its own files in a project.

    With ``create`` it is made, with a ``.gitignore`` of ``*`` inside, so nothing
    under it lands in a commit even where the project's own ``.gitignore`` does
    not name it (``nanoframes init`` adds it there too). A failure is one
    ``code`` line naming the directory.
    """
    path = Path(root) / STATE_DIR
    if create:
        from .files import write_bytes_atomic

        try:
            path.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise NanoframesError(code, f"cannot write: {exc.strerror}", path) from None
        ignore = path / ".gitignore"
        if not ignore.exists():
            write_bytes_atomic(ignore, b"# nanoframes' own files: never committed\n*\n",
                               code=code)
    return path


@dataclass(frozen=True)
class ExcuseBounds:
    """How far an excused composition may drift and still be excused (as WPT's fuzzy
    annotations): the largest channel difference, differing pixels in one frame,
    differing frames; and the platform tags the excuse applies on (None: all)."""

    max_delta: int | None = None
    max_pixels: int | None = None
    max_frames: int | None = None
    platforms: tuple[str, ...] | None = None

    @property
    def bounded(self) -> bool:
        return (self.max_delta, self.max_pixels, self.max_frames) != (None, None, None)


_BOUND_KEYS = {"max-delta": 255, "max-pixels": None, "max-frames": None}


def _excused(raw: object, pyproject: Path) -> tuple[dict[str, str], dict[str, ExcuseBounds]]:
    """``[tool.nanoframes.excused]``: name -> reason, or name -> a table with a
    ``reason`` and bounds (``max-delta``, ``max-pixels``, ``max-frames``, ``platforms``)."""

    def bad(message: str) -> NanoframesError:
        return NanoframesError("config-invalid", f"[tool.nanoframes.excused] {message}",
                               pyproject)

    if not isinstance(raw, dict):
        raise bad("must map a composition path to a reason string")
    reasons: dict[str, str] = {}
    bounds: dict[str, ExcuseBounds] = {}
    for name, value in raw.items():
        if isinstance(value, str):
            reasons[name] = value
            continue
        if not isinstance(value, dict):
            raise bad(f"{name!r} must be a reason string or a table with a reason")
        unknown = sorted(set(value) - {"reason", "platforms", *_BOUND_KEYS})
        if unknown:
            raise bad(f"{name!r}: unknown key {unknown[0]!r} (known: reason, max-delta, "
                      "max-pixels, max-frames, platforms)")
        if not isinstance(value.get("reason"), str) or not value["reason"]:
            raise bad(f"{name!r}: 'reason' must be a non-empty string")
        numbers: dict[str, int | None] = {}
        for key, most in _BOUND_KEYS.items():
            number = value.get(key)
            if number is not None and (not isinstance(number, int) or isinstance(number, bool)
                                       or number < 0 or (most is not None and number > most)):
                raise bad(f"{name!r}: {key!r} must be an integer from 0"
                          + (f" to {most}" if most is not None else ""))
            numbers[key.replace("-", "_")] = number
        platforms = value.get("platforms")
        if platforms is not None and (not isinstance(platforms, list) or not platforms or
                                      not all(isinstance(t, str) for t in platforms)):
            raise bad(f"{name!r}: 'platforms' must list platform tags (e.g. \"macos-arm64\")")
        reasons[name] = value["reason"]
        bounds[name] = ExcuseBounds(platforms=tuple(platforms) if platforms else None,
                                    **numbers)
    return reasons, bounds


# Re-renders of a regression's differing frames (determinism/second_opinion.py):
# the default, and the most there are (one plain, one per applicable variation).
DEFAULT_SECOND_OPINION = 3
MAX_SECOND_OPINION = 8
# Seconds of re-renders one check starts new second opinions within (opinions.py).
DEFAULT_OPINION_BUDGET = 60.0


def second_opinion_count(text: str) -> int:
    """A count of re-renders given on a command line (0 to :data:`MAX_SECOND_OPINION`);
    ``ValueError`` with the reason otherwise."""
    try:
        value = int(text)
    except ValueError:
        raise ValueError(f"not an integer: {text!r}") from None
    if not 0 <= value <= MAX_SECOND_OPINION:
        raise ValueError(f"must be from 0 (off) to {MAX_SECOND_OPINION}")
    return value


# Set by --allow-fallback before any worker starts, so the workers allow it too.
ALLOW_FALLBACK_ENV = "NANOFRAMES_ALLOW_FALLBACK"


@dataclass(frozen=True)
class Config:
    root: Path
    compositions: tuple[str, ...] = DEFAULT_COMPOSITIONS
    ledger: str = DEFAULT_LEDGER
    font_dirs: tuple[str, ...] = ()
    # path (relative to root, POSIX) -> reason
    excused: dict[str, str] = field(default_factory=dict)
    store: str | None = None  # the reference frame store (frames/store.py); None: default
    # excused name -> the bounds its excuse holds within (an excuse written as a table)
    excuse_bounds: dict[str, ExcuseBounds] = field(default_factory=dict)
    # re-renders of a regression's differing frames before it is reported; 0: off
    second_opinion: int = DEFAULT_SECOND_OPINION
    # a refused face from font-dirs falls back with a warning instead of refusing the film
    allow_fallback: bool = False
    # seconds of re-renders a check starts second opinions within (determinism/opinions.py)
    second_opinion_budget: float = DEFAULT_OPINION_BUDGET

    @property
    def ledger_path(self) -> Path:
        return (self.root / self.ledger).resolve()

    @property
    def font_paths(self) -> tuple[Path, ...]:
        return tuple((self.root / d).resolve() for d in self.font_dirs)


# Every key [tool.nanoframes] reads: one written otherwise would be ignored in silence.
KEYS = ("allow-fallback", "compositions", "excused", "font-dirs", "ledger",
        "second_opinion", "second_opinion_budget", "store")


def _known_keys(table: dict, pyproject: Path) -> None:
    """``config-invalid`` for a key nanoframes does not read, naming the one meant
    where only ``-`` and ``_`` differ (the keys are spelled both ways)."""
    for key in sorted(set(table) - set(KEYS), key=str):
        plain = str(key).replace("_", "-")
        meant = next((k for k in KEYS if k.replace("_", "-") == plain), None)
        if meant:
            hint = f" (did you mean {meant}?)"
        elif plain.startswith("nf-"):  # the plugin's ini settings: nf_check, nf_strict, ...
            hint = " (a pytest setting: it goes in [tool.pytest.ini_options])"
        else:
            hint = f"; it reads {', '.join(KEYS)}"
        raise NanoframesError("config-invalid", f"[tool.nanoframes] has no key {key!r}{hint}",
                              pyproject)


@cache
def load_config(root: Path | None = None) -> Config:
    """Read ``[tool.nanoframes]`` from ``root``/pyproject.toml (defaults if absent)."""
    root = Path(root).resolve() if root else find_project_root()
    pyproject = root / "pyproject.toml"
    table: object = {}
    if pyproject.is_file():
        try:
            with pyproject.open("rb") as fh:
                tool = tomllib.load(fh).get("tool", {})
            table = tool.get("nanoframes", {}) if isinstance(tool, dict) else None
        except tomllib.TOMLDecodeError as exc:
            raise NanoframesError("config-invalid", f"cannot read pyproject.toml: {exc}",
                                  pyproject) from None
    if not isinstance(table, dict):
        raise NanoframesError("config-invalid", "[tool] and [tool.nanoframes] must be tables",
                              pyproject)

    _known_keys(table, pyproject)

    def str_list(key: str, default: tuple[str, ...]) -> tuple[str, ...]:
        value = table.get(key, list(default))
        if isinstance(value, str):
            value = [value]
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise NanoframesError("config-invalid",
                                  f"[tool.nanoframes] {key} must be a list of strings", pyproject)
        return tuple(value)

    excused_raw, bounds = _excused(table.get("excused", {}), pyproject)
    ledger = table.get("ledger", DEFAULT_LEDGER)
    if not isinstance(ledger, str):
        raise NanoframesError("config-invalid", "[tool.nanoframes] ledger must be a string",
                              pyproject)
    store = table.get("store")
    if store is not None and not isinstance(store, str):
        raise NanoframesError("config-invalid", "[tool.nanoframes] store must be a string",
                              pyproject)
    opinion = table.get("second_opinion", DEFAULT_SECOND_OPINION)
    if isinstance(opinion, bool) or not isinstance(opinion, int) \
            or not 0 <= opinion <= MAX_SECOND_OPINION:
        raise NanoframesError("config-invalid", "[tool.nanoframes] second_opinion must be "
                              f"an integer from 0 (off) to {MAX_SECOND_OPINION}", pyproject)
    allow_fallback = table.get("allow-fallback", False)
    if not isinstance(allow_fallback, bool):
        raise NanoframesError("config-invalid", "[tool.nanoframes] allow-fallback must be "
                              "true or false", pyproject)
    budget = table.get("second_opinion_budget", DEFAULT_OPINION_BUDGET)
    if isinstance(budget, bool) or not isinstance(budget, (int, float)) or not budget >= 0:
        raise NanoframesError("config-invalid", "[tool.nanoframes] second_opinion_budget must "
                              "be a number of seconds, 0 or more", pyproject)
    return Config(
        root=root,
        allow_fallback=allow_fallback,
        store=store,
        second_opinion=opinion,
        second_opinion_budget=float(budget),
        compositions=str_list("compositions", DEFAULT_COMPOSITIONS),
        ledger=ledger,
        font_dirs=str_list("font-dirs", ()),
        excused=excused_raw,
        excuse_bounds=bounds,
    )


def glob_compositions(config: Config) -> list[Path]:
    """The films ``[tool.nanoframes] compositions`` matches, sorted; a pattern that
    cannot be a glob (an absolute path) is a ``config-invalid`` error. A pattern
    ending in ``#NAME`` names marker ``NAME`` of each Lottie file it matches, as a
    film of its own (``button.json#press``)."""
    found: set[Path] = set()
    for pattern in config.compositions:
        pattern, mark, marker = pattern.partition("#")
        try:
            matches = [child.with_name(f"{child.name}#{marker}") if mark else child
                       for child in config.root.glob(pattern) if child.is_file()]
        except (ValueError, NotImplementedError) as exc:
            raise NanoframesError("config-invalid", f"[tool.nanoframes] compositions: "
                                  f"{pattern!r}: {exc}", config.root / "pyproject.toml"
                                  ) from None
        found.update(matches)
    return sorted(found)


def declares_nanoframes(root: Path) -> bool:
    """Whether ``root``/pyproject.toml has a ``[tool.nanoframes]`` table (False when it
    cannot be read: whoever loads the configuration reports that)."""
    try:
        with (Path(root) / "pyproject.toml").open("rb") as fh:
            return "nanoframes" in tomllib.load(fh).get("tool", {})
    except (OSError, tomllib.TOMLDecodeError, AttributeError):
        return False


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
    return canonical_key(key, path)
