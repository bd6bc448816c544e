"""A lint finding: severity, stable code, element, moment, message; and how a run
of findings becomes an exit status."""

from __future__ import annotations

from dataclasses import asdict, dataclass

from ..model.svg import local_name

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
    return f"<{local_name(el) or '?'}> line {el.sourceline}"


def finding(severity: str, code: str, el, t: float | None, message: str,
            fatal: bool = False) -> Finding:
    """A finding about element ``el`` (or the file when ``el`` is None)."""
    return Finding(severity, code, designate(el) if el is not None else None,
                   None if t is None else round(float(t), 6), message,
                   line=getattr(el, "sourceline", None), fatal=fatal)


def exit_status(findings: list[Finding], strict: bool = False) -> int:
    """2 when a composition cannot be rendered at all (bad input, as for render and
    digest), 1 when the check fails, 0 otherwise."""
    if any(f.fatal for f in findings):
        return 2
    return 1 if failed(findings, strict) else 0


def failed(findings: list[Finding], strict: bool = False) -> bool:
    """Errors fail a check; warnings fail it only under ``strict``."""
    return any(f.severity == ERROR or strict for f in findings)
