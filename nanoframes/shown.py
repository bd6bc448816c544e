"""The one way out to a terminal: every string that comes from data is shown
through :func:`shown`, which makes control characters visible and harmless.

A file name, a ledger key, an element id, a face's family name, a CI artifact's
verdict line or a tar member's name may hold an escape sequence: ``ESC ] 0 ;``
sets the terminal's title, ``ESC ] 52`` writes the clipboard, ``ESC [ 2 J``
clears the screen (docs/review.md). Shown here, each such character is written
as its escape (``\\x1b``, ``\\u009b``, ``\\u202e``), so nothing reaches the terminal
that it would act on, and the reviewer sees that the name holds it.

Made visible: C0 controls (tab and, where the text is lines, newline are kept),
DEL, C1 controls (U+0080 to U+009F, ``CSI`` and ``OSC`` among them), the
Unicode line and paragraph separators, the bidirectional overrides, embeddings,
isolates and marks (text that reads otherwise than it is stored), and lone
surrogates (a file name that is not UTF-8, which a UTF-8 terminal cannot even
be given). Everything else, accented letters and emoji included, is kept.

The CLI writes all its output through :class:`ShownStream` (nanoframes/cli), the
pytest plugin passes each of its lines through :func:`shown` (pytest writes its
own colours, which a stream filter would break).
"""

from __future__ import annotations

import re
from typing import Any, TextIO

# Bidirectional controls (U+061C, U+200E/F, U+202A-E, U+2066-9) and the line and
# paragraph separators U+2028/9; lone surrogates U+D800-DFFF (surrogateescape).
_FORMAT = "\u061c\u200e\u200f\u2028\u2029\u202a-\u202e\u2066-\u2069\ud800-\udfff"
_UNSAFE_LINES = re.compile(f"[\x00-\x08\x0b-\x1f\x7f-\x9f{_FORMAT}]")
_UNSAFE_LINE = re.compile(f"[\x00-\x08\x0a-\x1f\x7f-\x9f{_FORMAT}]")


def _escape(match: re.Match[str]) -> str:
    # C0 as \x1b; DEL and above as \u009b: JSON's own escape, so a JSON document
    # printed with ensure_ascii=False (which leaves those raw) stays valid and reads
    # back as it was (JSON already escapes every C0 control itself)
    code = ord(match.group())
    return f"\\x{code:02x}" if code < 0x7F else f"\\u{code:04x}"


def shown(text: object, *, lines: bool = True) -> str:
    """``text`` as it may reach a terminal: control characters made visible
    (``\\x1b``); tab kept, newline kept where ``lines`` (else made visible too, for
    a value that must stay on one line)."""
    text = text if isinstance(text, str) else str(text)
    return (_UNSAFE_LINES if lines else _UNSAFE_LINE).sub(_escape, text)


def is_shown(text: str) -> bool:
    """Whether ``text`` is already harmless (nothing :func:`shown` would change)."""
    return _UNSAFE_LINES.search(text) is None


class ShownStream:
    """A text stream whose every write goes through :func:`shown`: the CLI's
    stdout and stderr while a command runs. ``unfiltered`` is the stream below,
    for the tool's own terminal controls (a progress bar's carriage return);
    anything else (``buffer``, ``fileno``, ``isatty``) is the stream's own."""

    def __init__(self, stream: TextIO) -> None:
        self.unfiltered = stream

    def write(self, text: str) -> int:
        self.unfiltered.write(shown(text))
        return len(text)

    def writelines(self, lines: Any) -> None:
        for line in lines:
            self.write(line)

    def __getattr__(self, name: str) -> Any:
        return getattr(self.unfiltered, name)


def unfiltered(stream: Any) -> Any:
    """The stream below a :class:`ShownStream` (for the tool's own controls)."""
    return getattr(stream, "unfiltered", stream)
