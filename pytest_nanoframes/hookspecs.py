"""Extension points of the nanoframes pytest plugin (pluggy hookspecs).

Implement them in a ``conftest.py`` or a plugin; docs/pytest-plugin.md has an
example. Names carry the ``pytest_nanoframes_`` prefix so they cannot clash
with pytest's own hooks.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pathlib import Path

    import pytest

    from nanoframes.determinism.ledger import RecordSummary
    from nanoframes.determinism.verdict import Verdict


def pytest_nanoframes_excused(config: pytest.Config, excused: dict[str, str]) -> None:
    """Adjust the excused list in place before any composition is judged.

    ``excused`` maps a name (a path relative to the project root, a file name,
    a stem or a composition id) to the reason, already filled from
    ``[tool.nanoframes.excused]`` and ``$EXCUSED_COMPOSITIONS``. Add, change or
    delete entries. Called once in every process that renders (each xdist
    worker too), so keep it a pure function of the configuration.
    """


def pytest_nanoframes_verdict(config: pytest.Config, verdict: Verdict, nodeid: str) -> None:
    """Observe the verdict of one composition after its test has run.

    Called once per composition, in the process that reports: the controller
    under pytest-xdist, so an implementation can aggregate without locking.
    """


def pytest_nanoframes_recorded(
    config: pytest.Config, summary: RecordSummary, ledger_path: Path
) -> None:
    """Observe a ledger write by ``--nf-record`` (controller only, once, after the write)."""
