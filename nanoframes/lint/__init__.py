"""``nanoframes check``: findings with stable codes (docs/lint.md).

A finding is about one composition file, one element (``#id`` or ``<tag> line
N``) and, where it is about a moment, one time in seconds. Errors make the check
fail; warnings only under ``--strict``. A file that cannot be parsed is one
error finding carrying the parse error's own code, so a run over many files
reports every file instead of stopping at the first bad one.

The checks live in three modules: ``timeline`` (what the JSON says),
``canvas`` (where things are on the canvas over time) and ``assets`` (files,
nested compositions, fonts, paints).
"""

from __future__ import annotations

from dataclasses import asdict, dataclass
from pathlib import Path

from ..errors import NanoframesError

ERROR = "error"
WARNING = "warning"


@dataclass(frozen=True)
class Finding:
    severity: str          # "error" | "warning"
    code: str              # stable, documented in docs/lint.md
    element: str | None    # "#id" or "<tag> line N"; None for the whole file
    t: float | None        # seconds, where the finding is about a moment
    message: str
    file: str = ""
    line: int | None = None
    fatal: bool = False    # the composition cannot be rendered at all (bad input)

    def as_dict(self) -> dict:
        return asdict(self)

    def format(self) -> str:
        where = self.file + (f":{self.line}" if self.line else "")
        what = self.element or "composition"
        when = f" at t={self.t:g}s" if self.t is not None else ""
        return f"{where}: {self.severity}[{self.code}] {what}{when}: {self.message}"


def designate(el) -> str:
    """How a finding names an element: its id, else its tag and line."""
    ident = el.get("id")
    if ident:
        return f"#{ident}"
    tag = el.tag.rsplit("}", 1)[-1] if isinstance(el.tag, str) else "?"
    return f"<{tag}> line {el.sourceline}"


def finding(severity: str, code: str, el, t: float | None, message: str,
            fatal: bool = False) -> Finding:
    """A finding about element ``el`` (or the file when ``el`` is None)."""
    return Finding(severity, code, designate(el) if el is not None else None,
                   None if t is None else round(float(t), 6), message,
                   line=getattr(el, "sourceline", None), fatal=fatal)


def lint_file(path: str | Path, project_root: Path | None = None) -> list[Finding]:
    """Every finding for one composition file, in a stable order."""
    from ..model.composition import parse

    shown = str(path)
    try:
        comp = parse(path, project_root)
    except NanoframesError as err:
        return [Finding(ERROR, err.code, None, None, err.message, shown, err.line, fatal=True)]
    return lint_composition(comp, shown)


def lint_composition(comp, shown: str | None = None) -> list[Finding]:
    """Every finding for one parsed composition; ``shown`` names its file in findings."""
    from . import assets, canvas, timeline

    shown = str(comp.path) if shown is None else shown
    context = canvas.Context.build(comp)
    found = [*timeline.check(comp), *assets.check(comp, context), *canvas.check(context)]
    out = {(f.code, f.element, f.t, f.message): f for f in found}  # one of each
    ordered = sorted(out.values(), key=lambda f: (f.line or 0, f.code, f.t or 0.0, f.message))
    return [Finding(f.severity, f.code, f.element, f.t, f.message, shown, f.line, f.fatal)
            for f in ordered]


def exit_status(findings: list[Finding], strict: bool = False) -> int:
    """2 when a composition cannot be rendered at all (bad input, as for render and
    digest), 1 when the check fails, 0 otherwise."""
    if any(f.fatal for f in findings):
        return 2
    return 1 if failed(findings, strict) else 0


def failed(findings: list[Finding], strict: bool = False) -> bool:
    """Errors fail a check; warnings fail it only under ``strict``."""
    return any(f.severity == ERROR or strict for f in findings)


__all__ = ["ERROR", "WARNING", "Finding", "designate", "exit_status", "failed", "finding",
           "lint_composition", "lint_file"]
