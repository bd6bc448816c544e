"""``nanoframes init``: set an existing repository up to check its compositions.

It writes, each only where missing, and says what it wrote:

- ``[tool.nanoframes]`` with a ``compositions`` glob per top directory holding
  ``*.nf.svg`` files (so the glob matches the files already there) and the
  ledger's path; in ``[tool.pytest.ini_options]``, ``nf_check = true``,
  ``nf_strict = "edits"`` and, where ``testpaths`` is set, the directories of
  the compositions and the ledger;
- ``.gitignore`` lines for what nanoframes writes that must not be committed
  (``.nanoframes/``, the CI workflow's ``nanoframes-report/``);
- the ``.gitattributes`` line of the ledger's merge driver (the ``git config``
  command that enables it is printed: git keeps it per clone);
- the CI workflow (``adopt/workflow.py``).

pyproject.toml is edited through tomlkit, so its formatting and comments stay;
an existing table or key is never changed, a file it did not write is never
replaced, and a second run changes nothing.
"""

from __future__ import annotations

import errno
import glob
import os
import re
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

from ..config import DEFAULT_COMPOSITIONS, DEFAULT_LEDGER, STATE_DIR
from ..errors import NanoframesError
from ..files import read_limited, write_bytes_atomic
from . import workflow

MERGE_DRIVER = 'git config merge.nanoframes.driver "nanoframes ledger merge %O %A %B"'
# Directories never searched for compositions: nobody's own films live there.
_SKIPPED = {".git", ".venv", "venv", "node_modules", "build", "dist", "__pycache__",
            STATE_DIR, ".tox", ".nox", "site-packages"}
# The files init reads and may write. A pull request can commit any of them (or a
# folder on the way) as a symbolic link, or make one a FIFO: init refuses those
# before it reads or writes anything.
MAX_READ = 8 << 20  # a pyproject.toml, .gitignore, ... larger than this is not one
_ESCAPED = re.compile(r"\[([*?\[])\]")  # glob.escape's form of a glob character


@dataclass
class Setup:
    """What init did: ``wrote`` and ``kept`` lines, and the commands to run next."""

    wrote: list[str] = field(default_factory=list)
    kept: list[str] = field(default_factory=list)
    commands: list[str] = field(default_factory=list)
    compositions: list[str] = field(default_factory=list)  # the files the globs match
    notes: list[str] = field(default_factory=list)  # what a person must do: one line each


def merge_driver_enabled(root: Path) -> bool:
    """Whether this clone already runs the ledger's merge driver (``MERGE_DRIVER``)."""
    from .workflow import git_output

    return git_output(root, "config", "--get", "merge.nanoframes.driver") == \
        "nanoframes ledger merge %O %A %B"


def _own_files(root: Path, pattern: str) -> list[Path]:
    """The files ``pattern`` matches under ``root``, hidden and tool directories skipped."""
    found = []
    for path in root.rglob(pattern):
        rel = path.relative_to(root)
        if any(part in _SKIPPED or part.startswith(".") for part in rel.parts[:-1]):
            continue
        if path.is_file():
            found.append(path)
    return found


def find_compositions(root: Path) -> list[str]:
    """Every ``*.nf.svg`` under ``root`` (relative POSIX paths), hidden and tool
    directories skipped."""
    return sorted(p.relative_to(root).as_posix() for p in _own_files(root, "*.nf.svg"))


def is_lottie_json(path: Path) -> bool:
    """Whether a ``*.json`` file is a Lottie (Bodymovin) animation: a JSON object with
    a canvas, a frame rate, a range and layers. Any other JSON (data, settings) is
    not a film; a file too large to be one, or unreadable, is not either."""
    import json

    from ..lottie.checks import is_lottie_tree
    from ..lottie.source import MAX_LOTTIE_BYTES

    try:
        if path.stat().st_size > MAX_LOTTIE_BYTES:
            return False
        with path.open("rb") as fh:
            if fh.read(64).lstrip()[:1] != b"{":  # not an object: no need to parse it
                return False
        tree = json.loads(path.read_bytes())
    except (OSError, ValueError, RecursionError):
        return False
    return is_lottie_tree(tree)


def find_lottie_films(root: Path) -> list[str]:
    """Every dotLottie file (``*.lottie``) and every ``*.json`` that is a Lottie
    animation under ``root`` (relative POSIX paths), hidden and tool directories
    skipped."""
    films = [p for p in _own_files(root, "*.lottie")]
    films += [p for p in _own_files(root, "*.json") if is_lottie_json(p)]
    return sorted(p.relative_to(root).as_posix() for p in films)


def _top_of(file: str) -> str:
    parts = PurePosixPath(file).parts
    return parts[0] if len(parts) > 1 else ""


def globs_for(files: list[str], root: Path | None = None) -> list[str]:
    """One glob per top directory and kind of film it holds (``*.nf.svg``,
    ``*.lottie``, ``*.json``; under the root, ``*.nf.svg`` and so on). A ``*.json``
    glob is written only where every file it matches under ``root`` is a Lottie
    animation (any JSON could be data: a glob naming it would fail the check);
    otherwise those Lottie files are named one by one."""
    globs: list[str] = []
    for suffix in (".nf.svg", ".lottie", ".json"):
        mine = [f for f in files if f.lower().endswith(suffix)]
        for top in sorted({_top_of(f) for f in mine}):
            pattern = f"{glob.escape(top)}/**/*{suffix}" if top else f"*{suffix}"
            if suffix == ".json" and (root is None or not all(
                    is_lottie_json(p) for p in root.glob(pattern) if p.is_file())):
                globs += [glob.escape(f) for f in mine if _top_of(f) == top]
            else:
                globs.append(pattern)
    return sorted(globs)


def init(root: Path, *, branch: str | None = None, requirement: str | None = None) -> Setup:
    """Set the project at ``root`` up; see the module's docstring."""
    root = Path(root).resolve()
    for name in ("pyproject.toml", ".gitignore", ".gitattributes", workflow.PATH):
        refuse_unsafe(root, name)
    setup = Setup()
    files = sorted(find_compositions(root) + find_lottie_films(root))
    setup.compositions = files
    ledger = _pyproject(root, files, setup)
    _lines(root / ".gitignore", [
        "# nanoframes: its own files (the ledger's lock, the frame store), never committed",
        f"/{STATE_DIR}/",
        "# nanoframes: the report the CI workflow writes (docs/ci.md)",
        "/nanoframes-report/",
        "# nanoframes: an unreadable ledger that --force set aside",
        f"{ledger}.unreadable-*",
    ], setup)
    _lines(root / ".gitattributes", [
        "# nanoframes: merge the ledger by key (enable once per clone: "
        "git config merge.nanoframes.driver ...)",
        f"{ledger} merge=nanoframes",
    ], setup)
    _workflow(root, branch, requirement, setup, ledger)
    if not merge_driver_enabled(root):
        setup.commands.append(MERGE_DRIVER)
    return setup


def _pyproject(root: Path, files: list[str], setup: Setup) -> str:
    """Edit (or create) pyproject.toml; returns the ledger path it configures."""
    import tomlkit
    from tomlkit.exceptions import TOMLKitError

    path = root / "pyproject.toml"
    existed = path.is_file()
    try:
        doc = tomlkit.parse(read_text(path) if existed else "")
    except TOMLKitError as exc:
        raise NanoframesError("config-invalid", f"cannot read pyproject.toml: {exc}",
                              path) from None
    tool = _table(doc, "tool", path)
    if tool is None:
        tool = tomlkit.table(is_super_table=True)
        doc.add("tool", tool)
    written: list[str] = []
    nf = _table(tool, "nanoframes", path, "tool.")
    if nf is None:
        globs = globs_for(files, root) if files else list(DEFAULT_COMPOSITIONS)
        nf = tomlkit.table()
        nf.add(tomlkit.comment("nanoframes: the compositions checked and the ledger "
                               "(docs/projects.md)"))
        nf.add("compositions", globs)
        nf.add("ledger", DEFAULT_LEDGER)
        _put(tool, "nanoframes", nf)
        comps = sum(f.lower().endswith(".nf.svg") for f in files)
        counted = f"{comps} composition{'s' if comps != 1 else ''}"
        if len(files) > comps:
            lottie = len(files) - comps
            counted += f", {lottie} Lottie film{'s' if lottie != 1 else ''}"
        written.append(f"[tool.nanoframes] compositions = {globs} ({counted}), "
                       f"ledger = {DEFAULT_LEDGER!r}")
    else:
        setup.kept.append("pyproject.toml: [tool.nanoframes] (already there)")
    ledger = nf.get("ledger", DEFAULT_LEDGER)
    globs = nf.get("compositions") or list(DEFAULT_COMPOSITIONS)
    globs = [globs] if isinstance(globs, str) else globs
    if not isinstance(ledger, str) or not isinstance(globs, list) \
            or not all(isinstance(g, str) for g in globs):
        raise NanoframesError("config-invalid", "[tool.nanoframes] compositions must be a "
                              "list of globs and ledger a path", path)
    pytest_table = _table(tool, "pytest", path, "tool.")
    elsewhere = _pytest_config_elsewhere(root, pytest_table)
    if elsewhere is not None:
        # pytest reads that file, not pyproject.toml: a new [tool.pytest.ini_options]
        # would take over from it. Say what to add there instead.
        setup.commands.append(f"add to {elsewhere}: nf_check = true, nf_strict = edits "
                              "(pytest reads its settings there)")
        if written:
            write_bytes_atomic(path, tomlkit.dumps(doc).encode("utf-8"), code="init-write")
            setup.wrote += [f"pyproject.toml: {line}" for line in written]
        return ledger
    if pytest_table is None:
        pytest_table = tomlkit.table(is_super_table=True)
        _put(tool, "pytest", pytest_table)
    ini = _table(pytest_table, "ini_options", path, "tool.pytest.")
    if ini is None:
        ini = tomlkit.table()
        _put(pytest_table, "ini_options", ini)
    added = []
    if "nf_check" not in ini:
        _put(ini, "nf_check", _commented(True, "nanoframes: every composition is a test item"))
        added.append("nf_check = true")
    if "nf_strict" not in ini:
        _put(ini, "nf_strict", _commented("edits", "an unrecorded edit fails (docs/ci.md)"))
        added.append('nf_strict = "edits"')
    testpaths = ini.get("testpaths")
    if testpaths is not None and isinstance(testpaths, list):
        wanted = [_top(g) for g in globs] + [_top(ledger)]
        missing = [d for d in dict.fromkeys(wanted) if d and not _covered(d, testpaths)]
        for directory in missing:
            testpaths.append(directory)
        if missing:
            added.append(f"testpaths += {missing}")
    if added:
        written.append(f"[tool.pytest.ini_options] {', '.join(added)}")
    if written:
        write_bytes_atomic(path, tomlkit.dumps(doc).encode("utf-8"), code="init-write")
        setup.wrote += [f"pyproject.toml: {line}" for line in written]
    elif existed:
        setup.kept.append("pyproject.toml: [tool.pytest.ini_options] nf_check, nf_strict "
                          "(already there)")
    return ledger


def _pytest_config_elsewhere(root: Path, pytest_table: object) -> str | None:
    """The file pytest takes its settings from, when that is not pyproject.toml
    (pytest.ini first; tox.ini and setup.cfg only where pyproject.toml has none)."""
    for name in ("pytest.ini", ".pytest.ini"):
        if (root / name).is_file():
            return name
    if pytest_table is not None and "ini_options" in pytest_table:
        return None
    for name, section in (("tox.ini", "[pytest]"), ("setup.cfg", "[tool:pytest]")):
        try:  # bounded, a regular file only: never a FIFO that would block
            lines = read_limited(root / name, MAX_READ).decode("utf-8").splitlines()
        except (OSError, UnicodeDecodeError):
            continue
        if section in (line.strip() for line in lines):
            return name
    return None


def _commented(value: object, comment: str):
    import tomlkit

    item = tomlkit.item(value)
    item.comment(comment)
    return item


def _top(pattern: str) -> str:
    """The fixed directory a glob or path starts in (``films`` of ``films/**/*.nf.svg``)."""
    parts = []
    for part in PurePosixPath(pattern).parent.parts:
        if any(c in _ESCAPED.sub("", part) for c in "*?["):
            break
        parts.append(_ESCAPED.sub(r"\1", part))  # a folder named with [, * or ?
    return "/".join(parts)


def _covered(directory: str, testpaths: list) -> bool:
    for entry in testpaths:
        entry = str(entry).rstrip("/")
        if entry in ("", ".") or directory == entry or directory.startswith(entry + "/"):
            return True
    return False


def _lines(path: Path, lines: list[str], setup: Setup) -> None:
    """Append the lines a file lacks (comments only with a line they precede)."""
    name = path.name
    text = read_text(path) if os.path.lexists(path) else ""
    have = {line.strip() for line in text.splitlines()}
    missing: list[str] = []
    for i, line in enumerate(lines):
        if line.startswith("#"):
            continue
        if line not in have:
            if i > 0 and lines[i - 1].startswith("#") and lines[i - 1] not in have:
                missing.append(lines[i - 1])
            missing.append(line)
    rules = [line for line in lines if not line.startswith("#")]
    if not missing:
        setup.kept.append(f"{name}: {', '.join(rules)} (already there)")
        return
    head = text if not text or text.endswith("\n") else text + "\n"
    write_bytes_atomic(path, (head + "\n".join(missing) + "\n").encode("utf-8"),
                       code="init-write")
    setup.wrote.append(f"{name}: {', '.join(m for m in missing if not m.startswith('#'))}")


def _workflow(root: Path, branch: str | None, requirement: str | None, setup: Setup,
              ledger: str) -> None:
    path = root / workflow.PATH
    if path.exists():
        setup.kept.append(f"{workflow.PATH} (already there: never overwritten)")
        return
    if branch is None:
        branch = workflow.current_branch(root)
        if branch is None:
            branch = workflow.DEFAULT_BRANCH
            setup.notes.append(f"the workflow checks pushes to {branch}: no branch is checked "
                               f"out and origin/HEAD names none; edit `branches:` in "
                               f"{workflow.PATH} if yours is another")
    if requirement is None:
        found = workflow.requirement_here()
        requirement = found.line
        if found.note:
            setup.notes.append(found.note)
    text = workflow.render(requirement, branch, project_install=_is_package(root),
                           ledger=ledger)
    try:
        path.parent.mkdir(parents=True, exist_ok=True)
    except OSError as exc:
        raise NanoframesError("init-write", f"cannot write: {exc.strerror}", path) from None
    write_bytes_atomic(path, text.encode("utf-8"), code="init-write")
    setup.wrote.append(f"{workflow.PATH}: the CI check of pushes to {branch} and of pull "
                       f"requests (docs/ci.md)")


# What setuptools' flat-layout discovery leaves out (its documented exclusions, in short).
_NOT_PACKAGES = {"ci", "bin", "debian", "doc", "docs", "documentation", "manpages", "news",
                 "newsfragments", "changelog", "test", "tests", "unit_test", "unit_tests",
                 "example", "examples", "scripts", "tools", "util", "utils", "python",
                 "build", "dist", "venv", "env", "requirements", "tasks", "fabfile",
                 "site_scons", "benchmark", "benchmarks", "exercise", "exercises", "htmlcov",
                 "setup", "conftest", "noxfile", "pavement", "dodo", "node_modules"}


def _is_package(root: Path) -> bool:
    """An installable package: a ``[project]`` whose code a build finds (setuptools
    configured to, a package named after the project, a ``src/`` layout, or the one
    top-level package setuptools' flat-layout discovery would take). A repository of
    films with ``[project]`` and two top-level folders is none: pip would refuse it."""
    import tomlkit

    try:
        doc = tomlkit.parse(read_text(root / "pyproject.toml"))
    except Exception:  # noqa: BLE001 - unreadable means "no"
        return False
    project = doc.get("project")
    if not isinstance(project, dict) or not project.get("name"):
        return False
    if (root / "setup.py").is_file() or (root / "setup.cfg").is_file():
        return True
    configured = (doc.get("tool") or {}).get("setuptools") or {}
    if any(k in configured for k in ("packages", "py-modules", "package-dir")):
        return True
    name = str(project["name"]).lower().replace("-", "_").replace(".", "_")
    for base in (root, root / "src"):
        if (base / name / "__init__.py").is_file() or (base / f"{name}.py").is_file():
            return True
    if (root / "src").is_dir() and any((root / "src").glob("*/__init__.py")):
        return True
    found = [p for p in root.iterdir()
             if p.name.isidentifier() and not p.name.startswith(("_", "."))
             and p.name.lower() not in _NOT_PACKAGES
             and (p.is_dir() or (p.suffix == ".py" and p.stem.isidentifier()))]
    return len(found) == 1 and (found[0].suffix == ".py" or (found[0] / "__init__.py").is_file())


def refuse_unsafe(root: Path, name: str) -> None:
    """``init-not-regular`` where ``name`` (relative to ``root``), or a folder on the
    way to it, is a symbolic link, or where it is there but not a regular file: init
    never writes through a link (a ``.github`` linked to a folder elsewhere, a
    ``.gitignore`` linked to a file elsewhere) nor opens a FIFO or a device."""
    path = root
    for part in PurePosixPath(name).parts:
        path = path / part
        if path.is_symlink():
            raise NanoframesError("init-not-regular", "a symbolic link: init writes nothing "
                                  "through a link (make it a plain file or folder, or add "
                                  "init's lines by hand)", path)
    if os.path.lexists(path) and not path.is_file():
        raise NanoframesError("init-not-regular", "not a regular file: init reads and "
                              "writes regular files only", path)


def read_text(path: Path) -> str:
    """A file init edits: a regular file of at most ``MAX_READ`` bytes, UTF-8."""
    try:
        return read_limited(path, MAX_READ).decode("utf-8")
    except OSError as exc:
        raise NanoframesError("init-not-regular" if exc.errno in (errno.EINVAL, errno.EFBIG)
                              else "init-write", f"cannot read: {exc.strerror or exc}",
                              path) from None
    except UnicodeDecodeError as exc:
        raise NanoframesError("config-invalid" if path.name == "pyproject.toml" else
                              "init-write", f"cannot read: not UTF-8 ({exc.reason})",
                              path) from None


def _put(parent, key: str, value) -> None:
    """Add a table to one tomlkit gives: a table, or the proxy of one that dotted keys
    spread out (``tool.pytest.x = 1`` makes ``tool`` one), which has no ``add``."""
    if hasattr(parent, "add"):
        parent.add(key, value)
    else:
        parent[key] = value


def _table(parent, key: str, path: Path, where: str = ""):
    """``parent[key]`` if it is a table (None where absent); ``config-invalid`` where it
    is a value of another kind (``tool = 1``)."""
    value = parent.get(key)
    if value is not None and not isinstance(value, dict):
        raise NanoframesError("config-invalid", f"[{where}{key}] must be a table, not "
                              f"{type(value).__name__}", path)
    return value
