"""The shell sessions shown in README.md and docs/, read from their fenced blocks.

A session is a fenced block whose first line starts with ``$ `` (a block
starting with ``>>> `` is a Python session, run with :mod:`doctest` in one
namespace per page, ``...`` elides text there too): each ``$``
line is a command (a line ending in ``\\`` continues it), and the lines up to
the next ``$`` line are what it prints (stdout and stderr together). An HTML
comment on the line just above a fence says what to do with the block:

- ``<!-- doctest: skip REASON -->``: the session is shown, not run (the reason
  is required: a demo project the page does not build, a machine-specific
  path, a command another test makes happen).
- ``<!-- doctest: file PATH -->``: any fenced block; its text is written to
  PATH (relative to the scratch project) before the page's sessions run.
- ``<!-- doctest: ledger -->``: the session's output depends on the committed
  ledger matching this code (``digest --check`` of the examples).

Setup the reader need not see (an edit the prose describes, such as a ledger
entry altered by hand; a directory to stand in; a file the page only names)
goes in an HTML comment of its own, which Markdown does not render::

    <!-- doctest: setup
    $ command
    -->

    <!-- doctest: file PATH
    the file's text
    -->

A ``setup`` block's ``$`` lines run where they stand, in order with the
sessions (``$ cd`` included); each must succeed, and what it prints is not
compared. A hidden ``file`` is written with the visible ones.

In expected output, a line ``...`` stands for any number of lines and
``...`` inside a line for any text: that is how the parts that move on every
code edit (the ``modules`` and ``toolchain`` digests, timings, temp paths) are
elided. A last line ``[exit N]`` shows the command's exit status, and is
checked. ``$ cd DIR`` changes the directory for the page's later commands.
docs/decisions/0019-doc-examples-are-executed.md says why this is ours and not
a plugin.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

ELLIPSIS = "..."
_FENCE = re.compile(r"^(\s*)(`{3,}|~{3,})(.*)$")
_MARKER = re.compile(r"^\s*<!--\s*doctest:\s*(\w+)\s*(.*?)\s*-->\s*$")
_HIDDEN = re.compile(r"^\s*<!--\s*doctest:\s*(setup|file)\b\s*(.*?)\s*$")


@dataclass
class Block:
    """One fenced block of a page: where it starts, its text, its marker."""

    line: int  # of the opening fence, 1-based
    text: str
    marker: str | None = None  # skip, file, ledger, setup
    argument: str = ""

    @property
    def is_session(self) -> bool:
        """A shown session, whose output is compared (a hidden setup is not)."""
        return self.marker != "setup" and self.text.lstrip().startswith("$ ")

    @property
    def is_python_session(self) -> bool:
        """A Python prompt session (``>>>``), run with :mod:`doctest`."""
        return self.marker != "setup" and self.text.lstrip().startswith(">>> ")


@dataclass
class Command:
    line: int
    command: str
    expected: list[str] = field(default_factory=list)


def blocks(text: str) -> list[Block]:
    """Every fenced block of a Markdown text, with the marker just above it."""
    lines = text.splitlines()
    found: list[Block] = []
    i = 0
    while i < len(lines):
        hidden = _HIDDEN.match(lines[i]) if not lines[i].rstrip().endswith("-->") else None
        if hidden:  # a hidden block: up to the comment's end
            start, i = i, i + 1
            while i < len(lines) and lines[i].strip() != "-->":
                i += 1
            indent = lines[start][:len(lines[start]) - len(lines[start].lstrip())]
            body = [b[len(indent):] if b.startswith(indent) else b for b in lines[start + 1:i]]
            found.append(Block(start + 1, "\n".join(body) + "\n",
                               hidden.group(1), hidden.group(2)))
            i += 1
            continue
        m = _FENCE.match(lines[i])
        if not m:
            i += 1
            continue
        indent, fence = m.group(1), m.group(2)
        start, body = i, []
        i += 1
        while i < len(lines) and not lines[i].strip().startswith(fence):
            body.append(lines[i][len(indent):] if lines[i].startswith(indent) else lines[i])
            i += 1
        i += 1
        marker = _MARKER.match(lines[start - 1]) if start > 0 else None
        found.append(Block(start + 1, "\n".join(body) + "\n",
                           marker.group(1) if marker else None,
                           marker.group(2) if marker else ""))
    return found


def commands(block: Block) -> list[Command]:
    """The commands of a session block and the output shown after each."""
    out: list[Command] = []
    lines = block.text.splitlines()
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith("$ "):
            cmd, n = line[2:], block.line + 1 + i
            while cmd.endswith("\\") and i + 1 < len(lines):
                i += 1
                cmd += "\n" + lines[i]
            out.append(Command(n, cmd))
        elif out:
            out[-1].expected.append(line)
        i += 1
    for c in out:
        while c.expected and not c.expected[-1].strip():
            c.expected.pop()
    return out


def _line_matches(expected: str, actual: str) -> bool:
    if ELLIPSIS not in expected:
        return expected == actual
    parts = [re.escape(p) for p in expected.split(ELLIPSIS)]
    return re.fullmatch(".*".join(parts), actual) is not None


def output_matches(expected: list[str], actual: list[str]) -> bool:
    """Whether ``actual`` lines are ``expected`` with its elisions filled in."""
    expected = [e.rstrip() for e in expected]
    actual = [a.rstrip() for a in actual]
    while actual and not actual[-1]:
        actual.pop()

    def match(i: int, j: int) -> bool:
        if i == len(expected):
            return j == len(actual)
        if expected[i] == ELLIPSIS:
            return any(match(i + 1, k) for k in range(j, len(actual) + 1))
        return j < len(actual) and _line_matches(expected[i], actual[j]) and match(i + 1, j + 1)

    return match(0, 0)
