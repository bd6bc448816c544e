"""The report a person opens: one HTML page, no network, no script framework.

Every composition's verdict and reasons; the identity inputs that moved
(recorded → fresh, the toolchain part named); a contact sheet of the fresh
film; for each differing frame expected / actual / diff with its numbers and a
button that flips between expected and actual. Images live in a folder beside
the page (the artifacts directory) and are referenced by relative paths.
A few lines of plain JavaScript do the flip and mark the page once every
image has decoded (``data-images="decoded"`` on ``<body>``).
"""

from __future__ import annotations

import os
from collections import Counter
from html import escape
from pathlib import Path

from ..files import write_bytes_atomic

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;background:#fafafa;color:#222}
section{background:#fff;border:1px solid #ddd;border-radius:6px;padding:12px 16px;margin:12px 0}
.verdict{font-weight:700;padding:1px 6px;border-radius:4px;color:#fff}
.match{background:#2a7d2a}.changed{background:#b07400}.regression{background:#b3261e}
.absent,.stale,.error{background:#555}.excused{outline:2px dashed #b07400}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:2px 6px;text-align:left}
code{font-size:12px;word-break:break-all}
figure{display:inline-block;margin:6px;vertical-align:top}
img{image-rendering:pixelated;max-width:100%;border:1px solid #ccc}
button{margin:4px 0}
"""

SCRIPT = """
function flip(id){var f=document.getElementById(id);var e=f.querySelector('.expected');
var a=f.querySelector('.actual');var showA=a.hidden;a.hidden=!showA;e.hidden=showA;
f.querySelector('.shown').textContent=showA?'actual':'expected';}
window.addEventListener('load',function(){var ok=true;
document.querySelectorAll('img').forEach(function(i){if(!(i.complete&&i.naturalWidth>0))ok=false;});
document.body.dataset.images=ok?'decoded':'broken';});
"""


def _img(src: str, alt: str, cls: str = "", hidden: bool = False) -> str:
    return (f'<img src="{escape(src)}" alt="{escape(alt)}"'
            + (f' class="{cls}"' if cls else "") + (" hidden" if hidden else "") + ">")


def _moved(moved: list[dict]) -> str:
    if not moved:
        return ""
    rows = "".join(f"<tr><td>{escape(m['input'])}</td><td><code>{escape(str(m['recorded']))}"
                   f"</code></td><td><code>{escape(str(m['fresh']))}</code></td></tr>"
                   for m in moved)
    return ("<table class=moved><tr><th>input moved</th><th>recorded</th><th>fresh</th></tr>"
            f"{rows}</table>")


def _frames(record: dict, base: str, anchor: str) -> str:
    evidence = record.get("evidence") or {}
    parts = []
    for frame in evidence.get("frames", ()):
        files = frame.get("files")
        if not files:
            continue
        n = frame["frame"]
        fid = f"{anchor}-f{n}"
        if frame.get("size"):
            numbers = (f"size changed {frame['size']['expected']} → {frame['size']['actual']}")
        else:
            x0, y0, x1, y1 = frame["bbox"]
            numbers = (f"{frame['pixels']} px differ, max ±{frame['max_delta']}/255, "
                       f"within ({x0},{y0})–({x1},{y1})")
        expected = _img(base + files["expected"], f"frame {n} expected", "expected")
        actual = _img(base + files["actual"], f"frame {n} actual", "actual", hidden=True)
        flip = (f'<figure id="{fid}">{expected}{actual}'
                f'<figcaption><button onclick="flip(\'{fid}\')">flip</button> showing '
                f'<span class="shown">expected</span></figcaption></figure>')
        diff = (f'<figure>{_img(base + files["diff"], f"frame {n} diff")}'
                f"<figcaption>diff</figcaption></figure>" if "diff" in files else "")
        parts.append(f'<div class="frame"><h4>frame {n}: <span class="numbers">'
                     f"{escape(numbers)}</span></h4>{flip}{diff}</div>")
    return "".join(parts)


def page(records: list[dict], base: str, title: str) -> str:
    records = sorted(records, key=lambda r: r["composition"])
    counts = Counter("excused" if r.get("excused") else r["verdict"] for r in records)
    tally = ", ".join(f"{n} {k}" for k, n in sorted(counts.items()))
    body = []
    for n, record in enumerate(records):
        anchor = f"c{n}"
        kind = record["verdict"]
        cls = f"verdict {kind}" + (" excused" if record.get("excused") else "")
        evidence = record.get("evidence") or {}
        summary = (f'<p class="pixels">pixels: {escape(evidence["summary"])}</p>'
                   if evidence else "")
        axis = record.get("time_axis") or {}  # when the film moved (frames/timeaxis.py)
        summary += (f'<p class="time">time: {escape(axis["summary"])}</p>'
                    if axis.get("summary") else "")
        reasons = (f'<p class="reasons">{escape(", ".join(record["reasons"]))}</p>'
                   if record.get("reasons") else "")
        sheet = (f'<details><summary>contact sheet of the fresh film</summary>'
                 f'{_img(base + record["sheet"], "contact sheet")}</details>'
                 if record.get("sheet") else "")
        body.append(
            f'<section id="{anchor}" data-verdict="{escape(kind)}">'
            f'<h3><span class="{cls}">{escape(kind.upper())}</span> '
            f'{escape(record["composition"])}</h3>'
            f'<p class="line">{escape(record["line"])}</p>{reasons}{summary}'
            f'{_moved(record.get("moved") or [])}{sheet}'
            f'{_frames(record, base, anchor)}</section>')
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8>"
            f"<title>{escape(title)}</title><style>{STYLE}</style>"
            f"<script>{SCRIPT}</script></head><body data-images=pending>"
            f"<h1>{escape(title)}</h1><p class=tally>{len(records)} compositions: "
            f"{escape(tally)}</p>{''.join(body)}</body></html>\n")


def write_html(path: Path, records: list[dict], directory: Path | None,
               title: str = "nanoframes check") -> Path:
    base = ""
    if directory is not None:
        rel = Path(os.path.relpath(directory, path.parent)).as_posix()
        base = "" if rel == "." else rel + "/"
    write_bytes_atomic(path, page(records, base, title).encode("utf-8"), code="output-failed")
    return path
