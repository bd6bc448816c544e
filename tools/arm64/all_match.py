"""Read ``digest --all --check --json`` and require a match of every composition.

``digest --check`` alone lets an excused composition pass; the arm64 gate does
not: every example must match its primary entry or its platform entry. Prints
each verdict line and one closing line; exit 0 only when every one is a match.
"""

from __future__ import annotations

import json
import sys
from pathlib import Path


def main(path: str, status: str) -> int:
    text = Path(path).read_text()
    try:
        data = json.loads(text)
    except ValueError:
        print(f"arm64 gate: no verdicts (digest exited {status}): {text.strip()[:500]}")
        return 1
    verdicts = data.get("verdicts", [])
    for verdict in verdicts:
        print(verdict["line"])
    for problem in data.get("ledger_problems", []):
        print(f"PROBLEM {problem}")
    failing = [v["key"] for v in verdicts if v["verdict"] != "match"]
    if not verdicts or failing or data.get("ledger_problems"):
        print(f"arm64 gate: FAILED: {len(failing)} of {len(verdicts)} compositions do not match"
              + (f" ({', '.join(failing)})" if failing else ""))
        return 1
    print(f"arm64 gate: {len(verdicts)} compositions, every one a match")
    return 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
