"""Worker → controller wiring for pytest-xdist.

Each worker renders its items and attaches what it learnt (the verdict and,
when recording, the ledger entry) to the call report as plain JSON-able data.
xdist serializes a report's ``__dict__`` to the controller, which sees the
same attribute in ``pytest_runtest_logreport``. A serial run takes the same
path in one process, so the controller code never knows which it was.
The controller alone writes the ledger and the JSON report.
"""

from __future__ import annotations

from typing import Any

import pytest

PAYLOAD = "nanoframes"  # the report attribute; execnet carries only plain types


def is_worker(config: pytest.Config) -> bool:
    """True inside an xdist worker (``workerinput`` is set on workers only)."""
    return hasattr(config, "workerinput")


def attach(report: pytest.TestReport, payload: dict[str, Any]) -> None:
    setattr(report, PAYLOAD, payload)


def payload_of(report: pytest.TestReport) -> dict[str, Any] | None:
    payload = getattr(report, PAYLOAD, None)
    return payload if isinstance(payload, dict) else None
