"""A composition built in code and checked with the ``nf`` fixture.

The bar chart is drawn from a small table, once per data set; each data set
is its own ledger entry, keyed by the test's node id
(``examples/test_charts.py::test_bar_chart[de]``). Editing a table moves the
film's ``source`` (``changed``); the same table drawing other pixels is a
``regression``. Record with ``pytest examples/test_charts.py --nf-record``.
"""

from __future__ import annotations

import json
from html import escape

import pytest

TABLES = {
    "de": ("Umsatz je Quartal", [("Q1", 12), ("Q2", 18), ("Q3", 9), ("Q4", 21)]),
    "fr": ("Chiffre d'affaires", [("T1", 7), ("T2", 11), ("T3", 16)]),
}

WIDTH, HEIGHT, BASELINE, TOP = 240, 135, 115, 35


def bar_chart(title: str, rows: list[tuple[str, int]]) -> str:
    """The composition's text: bars grow from the baseline over 0.4 s, then hold."""
    peak = max(value for _, value in rows)
    step = (WIDTH - 40) / len(rows)
    bars = []
    for i, (label, _) in enumerate(rows):
        x = 20 + i * step + step * 0.2
        bars.append(
            f'<rect class="bar" id="bar{i}" x="{x:g}" y="{BASELINE}" width="{step * 0.6:g}" '
            f'height="0" fill="#6366f1"/>'
            f'<text x="{x + step * 0.3:g}" y="{BASELINE + 12}" font-size="9" '
            f'text-anchor="middle" fill="#1f2440">{escape(label)}</text>')
    animations = [
        {"target": f"#bar{i}", "keyframes": [
            {"t": 0, "y": BASELINE, "height": 0},
            {"t": 0.4, "y": BASELINE - (BASELINE - TOP) * v / peak,
             "height": (BASELINE - TOP) * v / peak, "ease": "ease-out"}]}
        for i, (_, v) in enumerate(rows)]
    return f"""<svg xmlns="http://www.w3.org/2000/svg" data-width="{WIDTH}" data-height="{HEIGHT}"
     data-fps="10" data-duration="0.6">
  <rect width="{WIDTH}" height="{HEIGHT}" fill="#f6f7fb"/>
  <text x="20" y="22" font-family="Noto Sans, sans-serif" font-size="12" font-weight="bold"
        fill="#1f2440">{escape(title)}</text>
  <g font-family="Noto Sans, sans-serif">{"".join(bars)}</g>
  <line x1="20" y1="{BASELINE}" x2="{WIDTH - 20}" y2="{BASELINE}" stroke="#7a8194"/>
  <script type="application/nanoframes+json">{json.dumps({"animations": animations})}</script>
</svg>"""


@pytest.mark.parametrize("table", sorted(TABLES))
def test_bar_chart(nf, table: str) -> None:
    title, rows = TABLES[table]
    nf.check(bar_chart(title, rows))
