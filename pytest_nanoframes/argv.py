"""A plugin path option written as two words, whose value pytest took for a test path.

pytest chooses its rootdir and ini file from the command line before any plugin's
options are known, so in ``--nf-summary PATH`` it reads PATH as a test path: a
PATH outside the current directory moves the rootdir to a common ancestor, and
the project's ini file (``testpaths``, ``markers``, ``addopts``, the ``nf_*``
keys...) is not read at all. ``--nf-summary=PATH`` is one word: nothing to
misread. The plugin cannot undo pytest's choice; it says so in one line.
"""

from __future__ import annotations

from collections.abc import Sequence
from pathlib import Path

# The plugin's options whose value is a path.
PATH_OPTIONS = ("--nf-summary", "--nf-html", "--nf-report", "--nf-artifacts", "--nf-store",
                "--nf-ledger")


def misread(args: Sequence[str], here: Path) -> list[tuple[str, str]]:
    """(option, value) for each path option written as two words whose value lies
    outside ``here`` (the invocation directory): the ones that moved the rootdir."""
    found = []
    for option, value in zip(args, args[1:]):
        if option == "--":
            break
        if option in PATH_OPTIONS and value and not value.startswith("-"):
            where = (here / value).resolve()
            if not where.is_relative_to(here.resolve()):
                found.append((option, value))
    return found


def warning_line(option: str, value: str, rootdir: Path, inifile: Path | None) -> str:
    """The one line a misread option gets."""
    from nanoframes.shown import shown

    ini = inifile.name if inifile is not None else "none"
    return shown(f"nanoframes: pytest took the value of `{option} {value}` for a test path (it "
            f"chose rootdir {rootdir} and ini file {ini} before reading the plugin's "
            f"options): write `{option}={value}`", lines=False)
