"""The ledger's text: the one bounded reader, and the two sides of a git conflict.

Every read of a ledger (every command, the plugin, ``--force``, ``ledger merge``,
the copy ``--force`` keeps) goes through :func:`read_text`: a regular file only
(never a FIFO that blocks or a link to ``/dev/zero`` that never ends), at most
``MAX_LEDGER_BYTES``, UTF-8, and nested at most ``MAX_LEDGER_DEPTH`` deep,
measured before ``json.loads`` sees it (100,000 nested ``[`` would otherwise be a
``RecursionError``). docs/limits.md has the numbers and why.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path

from ..errors import NanoframesError
from ..files import json_too_deep, open_regular

# 64 MiB: about 2.3 million frame digests (one line each), twenty films of the
# longest allowed; a ledger past it is not one nanoframes wrote.
MAX_LEDGER_BYTES = 64 * 1024 * 1024
# A ledger nests 6 deep (document, compositions, entry, platforms, entry,
# identity); json's decoder recurses per level.
MAX_LEDGER_DEPTH = 32

# Lines git writes into a file it could not merge (``diff3`` style included).
_CONFLICT_MARKERS = ("<<<<<<<", "|||||||", "=======", ">>>>>>>")
_TOKEN = re.compile(r'"(?:[^"\\]++|\\.)*+"?|[\[\]{}]', re.DOTALL)  # a string or a bracket
_COLON = re.compile(r"\s*:")


def read_bytes(path: Path) -> bytes:
    """A ledger's bytes: a regular file of at most ``MAX_LEDGER_BYTES``. Raises
    ``OSError`` as ``open_regular`` does, or ``ledger-too-large``."""
    with open_regular(path) as fh:  # never a FIFO or a device: a read that would not end
        raw = fh.read(MAX_LEDGER_BYTES + 1)  # the size is read, not trusted: files grow
    if len(raw) > MAX_LEDGER_BYTES:
        raise NanoframesError("ledger-too-large", f"over {MAX_LEDGER_BYTES:,} bytes (the limit); "
                              "not a ledger nanoframes wrote", path)
    return raw


def decode(raw: bytes, path: Path) -> str:
    """UTF-8 text, or ``ledger-corrupt`` at the line and column of the first bad byte."""
    try:
        return raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        before = raw[:exc.start].decode("utf-8")  # valid up to the bad byte
        line = before.count("\n") + 1
        column = len(before) - before.rfind("\n")
        raise NanoframesError("ledger-corrupt", f"not UTF-8: {exc.reason}", path, line,
                              column) from None


def check_depth(text: str, path: Path) -> None:
    """``ledger-corrupt`` where brackets nest deeper than ``MAX_LEDGER_DEPTH`` (strings
    skipped), found in one linear pass without recursion, before the JSON decoder
    would recurse (``files.json_too_deep``: an unterminated string is not rescanned)."""
    if json_too_deep(text, MAX_LEDGER_DEPTH):
        raise NanoframesError("ledger-corrupt", f"JSON nested deeper than "
                              f"{MAX_LEDGER_DEPTH} levels; not a ledger", path)


def read_text(path: Path) -> str:
    """The bounded, decoded, depth-checked text of the ledger at ``path``."""
    text = decode(read_bytes(path), path)
    check_depth(text, path)
    return text


def duplicate_at(text: str) -> tuple[int, int] | None:
    """Line and column of the first key repeated within one JSON object (one pass:
    each string and bracket is a token, each key's colon matched where it ends)."""
    stack: list[set[str]] = []
    for match in _TOKEN.finditer(text):
        token = match.group()
        if token in "{[":
            stack.append(set())  # a list too: its strings are never keys
        elif token in "}]":
            if stack:
                stack.pop()
        elif stack and _COLON.match(text, match.end()):
            try:
                key = json.loads(token)
            except ValueError:
                return None  # not JSON: the decoder says where
            i = match.start()
            if key in stack[-1]:
                return text.count("\n", 0, i) + 1, i - text.rfind("\n", 0, i)
            stack[-1].add(key)
    return None


def conflict_line(text: str) -> int | None:
    """The line of the first git conflict marker in ``text``, if any."""
    for number, line in enumerate(text.splitlines(), 1):
        if _is_marker(line):
            return number
    return None


def _is_marker(line: str) -> bool:
    return line.startswith(_CONFLICT_MARKERS) and (
        len(line) == 7 or line[7] in " \t" or line.startswith("======="))


def conflict_sides(text: str) -> tuple[str | None, str, str] | None:
    """The base (``diff3`` style only, else None), ours and theirs of a file git left
    with conflict markers: each side is the text outside the hunks plus that side's
    lines in every hunk. None when the markers do not form whole hunks."""
    base: list[str] = []
    ours: list[str] = []
    theirs: list[str] = []
    state = "out"
    saw_base = True  # every hunk must have a base section for a base to be known
    for line in text.splitlines(keepends=True):
        marker = line[:7] if _is_marker(line.rstrip("\r\n")) else None
        if marker == "<<<<<<<" and state == "out":
            state, has_base = "ours", False
        elif marker == "|||||||" and state == "ours":
            state, has_base = "base", True
        elif marker == "=======" and state in ("ours", "base"):
            state = "theirs"
            saw_base = saw_base and has_base
        elif marker == ">>>>>>>" and state == "theirs":
            state = "out"
        elif marker is not None:
            return None
        elif state == "out":
            base.append(line)
            ours.append(line)
            theirs.append(line)
        else:
            {"ours": ours, "base": base, "theirs": theirs}[state].append(line)
    if state != "out":
        return None
    return ("".join(base) if saw_base else None), "".join(ours), "".join(theirs)


def _git_path(path: Path) -> str:
    """``path`` as ``git show :N:`` reads it: relative to the top of the work tree
    that holds it (found by its ``.git``, without running git), else as given."""
    absolute = Path(os.path.abspath(path))
    for top in absolute.parents:
        if (top / ".git").exists():
            return absolute.relative_to(top).as_posix()
    return Path(path).as_posix()


def recovery_hint(path: Path) -> str:
    """What to do about conflict markers, with how to get the three versions of a
    ledger git is merging (``git show :1:`` base, ``:2:`` ours, ``:3:`` theirs)."""
    p = _git_path(path)
    return (f"run `nanoframes ledger merge` or resolve it (mid-merge, base, ours and theirs are "
            f"`git show :1:{p}`, `:2:`, `:3:`; `--record --force` merges the two sides)")
