"""The report a person opens: one HTML page, no network, no script framework.

Failures first, then changed, excused and matching items, under a tally that
links to each group; a note at the top when the run stopped early. For each
item its verdict and reasons; for each shown differing frame expected, actual
and diff side by side with their numbers (and how many more frames there are,
and how to see them); the identity inputs that moved, in words (a diff of the
source, the files that moved, the toolchain parts); a contact sheet of the
fresh film. Images live in a folder beside the page (the artifacts directory)
and are referenced by relative paths. A few lines of plain JavaScript mark the
page once every image has decoded (``data-images="decoded"`` on ``<body>``).
"""

from __future__ import annotations

import os
import re
from html import escape
from pathlib import Path

from ..files import write_bytes_atomic

STYLE = """
body{font:14px/1.4 system-ui,sans-serif;margin:24px;background:#fafafa;color:#222}
section{background:#fff;border:1px solid #ddd;border-radius:6px;padding:12px 16px;margin:12px 0}
.verdict{font-weight:700;padding:1px 6px;border-radius:4px;color:#fff}
.match{background:#2a7d2a}.changed{background:#b07400}.regression{background:#b3261e}
.absent,.stale,.error{background:#555}.excused{outline:2px dashed #b07400}
.partial{background:#fde7e4;border:1px solid #b3261e;padding:8px 12px;border-radius:6px}
table{border-collapse:collapse}td,th{border:1px solid #ddd;padding:2px 6px;text-align:left}
code{font-size:12px;word-break:break-all}pre{font-size:12px;background:#f4f4f4;padding:6px;
overflow-x:auto;margin:4px 0}.del{color:#b3261e}.ins{color:#2a7d2a}
.pictures{display:grid;grid-template-columns:repeat(3,minmax(0,1fr));gap:8px;
align-items:start}
figure{margin:0;min-width:0}figcaption{font-weight:600}
img{image-rendering:pixelated;width:100%;max-width:max(160px,100%);height:auto;
border:1px solid #ccc;box-sizing:border-box}
.pictures img{min-width:0}.legend{font-size:12px;color:#555}
h2 a,.tally a{color:inherit}
"""

SCRIPT = """
window.addEventListener('load',function(){var ok=true;
document.querySelectorAll('img').forEach(function(i){if(!(i.complete&&i.naturalWidth>0))ok=false;});
document.body.dataset.images=ok?'decoded':'broken';});
"""

# A checkbox per pending composition; the button saves the ticked keys as
# accept.json (a download: the page is static), for `nanoframes accept --list`.
ACCEPT_SCRIPT = """
function nfSaveAccept(){var keys=[];
document.querySelectorAll('input.nf-accept:checked').forEach(function(c){keys.push(c.value);});
var text=JSON.stringify({accept:keys},null,2)+'\\n';document.body.dataset.accept=text;
var a=document.createElement('a');a.download='accept.json';
a.href=URL.createObjectURL(new Blob([text],{type:'application/json'}));
document.body.appendChild(a);a.click();a.remove();}
"""
ACCEPT_BAR = ('<p class="accept-bar"><button id="nf-save-accept" type="button" '
              'onclick="nfSaveAccept()">save accept.json</button> with the ticked '
              'compositions, then run <code>nanoframes accept --list accept.json</code> '
              '(or review them one by one: <code>nanoframes review</code>)</p>')

# What the diff image's colours mean (frames/compare.py: amplify_diff).
DIFF_LEGEND = (' <span class="legend">(how far each pixel moved: blue ±1, yellow ±16, '
               'red ±255)</span>')

# The page's sections, in the order a reviewer reads them: what fails first.
SECTIONS = (("failed", "failed"), ("changed", "changed"), ("excused", "excused"),
            ("match", "match"))
FAILING = frozenset({"regression", "absent", "stale", "error"})


def section_of(record: dict) -> str:
    """failed, changed, excused or match: the outcome where the front end decided one
    (under --nf-strict a change fails), else what the verdict means by itself."""
    outcome = record.get("outcome")
    if outcome == "failed" or record["verdict"] in FAILING and not record.get("excused"):
        return "failed"
    if record.get("excused"):
        return "excused"
    return "changed" if record["verdict"] == "changed" else "match"


def anchor_of(key: str) -> str:
    """A composition's stable anchor on the page (``nanoframes review`` links it)."""
    return "k-" + re.sub(r"[^A-Za-z0-9_.-]", "-", key)


def is_pending(record: dict) -> bool:
    """A record whose reading a check keeps pending (determinism/pending.py)."""
    kind = record["verdict"]
    return kind not in ("error", "stale") and not (kind == "match" and not record.get("reasons"))


def _img(src: str, alt: str) -> str:
    return f'<img src="{escape(src)}" alt="{escape(alt)}">'


def _details(lines: list[str]) -> str:
    if not lines:
        return ""
    rows = []
    for line in lines:
        cls = "del" if line.startswith("-") and not line.startswith("---") else \
            "ins" if line.startswith("+") and not line.startswith("+++") else ""
        rows.append(f'<span class="{cls}">{escape(line)}</span>' if cls else escape(line))
    return "<pre>" + "\n".join(rows) + "</pre>"


def _moved(moved: list[dict]) -> str:
    if not moved:
        return ""
    rows = "".join(f"<tr><td>{escape(m['input'])}</td><td><code>{escape(str(m['recorded']))}"
                   f"</code></td><td><code>{escape(str(m['fresh']))}</code></td></tr>"
                   + (f'<tr><td colspan=3 class="what">{_details(m["details"])}</td></tr>'
                      if m.get("details") else "")
                   for m in moved)
    return ("<table class=moved><tr><th>input moved</th><th>recorded</th><th>fresh</th></tr>"
            f"{rows}</table>")


def _frames(record: dict, base: str, frames_option: str) -> str:
    evidence = record.get("evidence") or {}
    parts = []
    hidden = 0
    first_hidden = None
    for frame in evidence.get("frames", ()):
        files = frame.get("files")
        n = frame["frame"]
        if not files:
            hidden += 1
            first_hidden = n if first_hidden is None else first_hidden
            continue
        if frame.get("size"):
            numbers = (f"size changed {frame['size']['expected']} → {frame['size']['actual']}")
        else:
            x0, y0, x1, y1 = frame["bbox"]
            numbers = (f"{frame['pixels']} px differ, max ±{frame['max_delta']}/255, "
                       f"within ({x0},{y0})–({x1},{y1})")
        figures = "".join(
            f'<figure class="{role}">{_img(base + files[role], f"frame {n} {role}")}'
            f"<figcaption>{role}{DIFF_LEGEND if role == 'diff' else ''}</figcaption></figure>"
            for role in ("expected", "actual", "diff") if role in files)
        parts.append(f'<div class="frame"><h4>frame {n}: <span class="numbers">'
                     f'{escape(numbers)}</span></h4><div class="pictures">{figures}</div></div>')
    if hidden:
        command = record.get("diff_command") or ""
        see = (f"<code>{escape(command.format(frame=first_hidden))}</code> shows any one "
               f"(frame {first_hidden} is the first), or ") if command else ""
        parts.append(f'<p class="more">{hidden} more differing frame{"s" if hidden != 1 else ""}'
                     f" not shown: {see}raise <code>{escape(frames_option)} N</code> to "
                     "write more of them.</p>")
    return "".join(parts)


def _scenes(scenes: dict) -> str:
    """Why the pixels moved (determinism/scenes.py): the ``scene:`` line, then every
    frame's diff of its recorded and current scene (evidence/scenediff.py)."""
    if not scenes.get("summary"):
        return ""
    out = f'<p class="scene">scene: {escape(scenes["summary"])}</p>'
    diffs = scenes.get("diffs") or []
    if diffs:
        rows = []
        for d in diffs:
            changes = [escape(c) for c in d["changes"]]
            if d.get("more"):
                changes.append(f"… {d['more']} more")
            rows.append(f'<tr><td>{d["frame"]}</td><td>{"<br>".join(changes)}</td></tr>')
        rows = "".join(rows)
        out += (f'<details class="scene-diff"><summary>{len(diffs)} frame(s): the recorded '
                f'scene → the current one</summary><table><tr><th>frame</th><th>what '
                f'changed</th></tr>{rows}</table></details>')
    return out


def _section(record: dict, n: int, base: str, frames_option: str) -> str:
    anchor = f"c{n}"
    kind = record["verdict"]
    cls = f"verdict {kind}" + (" excused" if record.get("excused") else "")
    evidence = record.get("evidence") or {}
    summary = (f'<p class="pixels">pixels: {escape(evidence["summary"])}</p>'
               if evidence else "")
    axis = record.get("time_axis") or {}  # when the film moved (frames/timeaxis.py)
    summary += (f'<p class="time">time: {escape(axis["summary"])}</p>'
                if axis.get("summary") else "")
    opinion = record.get("opinion") or {}  # a regression drawn again (second_opinion.py)
    summary += (f'<p class="opinion {escape(opinion["kind"])}">opinion: '
                f'{escape(opinion["summary"])}</p>' if opinion.get("summary") else "")
    summary += _scenes(record.get("scenes") or {})
    reasons = (f'<p class="reasons">{escape(", ".join(record["reasons"]))}</p>'
               if record.get("reasons") else "")
    sheet = (f'<details><summary>contact sheet of the fresh film</summary>'
             f'{_img(base + record["sheet"], "contact sheet")}</details>'
             if record.get("sheet") else "")
    test = (f'<p class="test">test <code>{escape(record["nodeid"])}</code></p>'
            if record.get("nodeid") and record["nodeid"] != record["composition"] else "")
    key = record["composition"]
    pick = (f'<label class="accept"><input type="checkbox" class="nf-accept" '
            f'value="{escape(key)}"> accept</label> ' if is_pending(record) else "")
    return (f'<section id="{anchor}" data-verdict="{escape(kind)}" '
            f'data-section="{section_of(record)}" data-key="{escape(key)}">'
            f'<a id="{escape(anchor_of(key))}"></a>'
            f'<h3>{pick}<span class="{cls}">{escape(kind.upper())}</span> '
            f'{escape(key)}</h3>{test}'
            f'<p class="line">{escape(record["line"])}</p>{reasons}{summary}'
            f'{_frames(record, base, frames_option)}{_moved(record.get("moved") or [])}'
            f"{sheet}</section>")


def page(records: list[dict], base: str, title: str, partial: str | None = None,
         frames_option: str = "--artifacts-frames") -> str:
    from ..determinism.accept import SEVERITY
    from ..frames.drill import banner

    # Within a section the worst first: a regression before an edit that fails.
    records = sorted(records, key=lambda r: (SEVERITY.index(
        "excused" if r.get("excused") else r["verdict"]) if r.get("excused") or
        r["verdict"] in SEVERITY else len(SEVERITY), r["composition"]))
    groups: dict[str, list[dict]] = {name: [] for name, _ in SECTIONS}
    for record in records:
        groups[section_of(record)].append(record)
    links = [f'<a href="#{name}">{len(groups[name])} {label}</a>'
             for name, label in SECTIONS if groups[name]]
    n = len(records)
    tally = (f"<nav class=tally>{n} item{'s' if n != 1 else ''}: "
             f"{', '.join(links) or 'nothing was checked'}</nav>")
    note = f'<p class="partial">{escape(partial)}</p>' if partial else ""
    drill = banner()
    if drill is not None:
        note = f'<p class="partial"><strong>{escape(drill)}</strong></p>' + note
    if any(is_pending(r) for r in records):
        note += ACCEPT_BAR
    body, count = [], 0
    for name, label in SECTIONS:
        if not groups[name]:
            continue
        body.append(f'<h2 id="{name}">{len(groups[name])} {label}</h2>')
        for record in groups[name]:
            body.append(_section(record, count, base, frames_option))
            count += 1
    return (f"<!doctype html><html lang=en><head><meta charset=utf-8>"
            f"<title>{escape(title)}</title><style>{STYLE}</style>"
            f"<script>{SCRIPT}{ACCEPT_SCRIPT}</script></head><body data-images=pending>"
            f"<h1>{escape(title)}</h1>{note}{tally}{''.join(body)}</body></html>\n")


def write_html(path: Path, records: list[dict], directory: Path | None,
               title: str = "nanoframes check", partial: str | None = None,
               frames_option: str = "--artifacts-frames") -> Path:
    base = ""
    if directory is not None:
        rel = Path(os.path.relpath(directory, path.parent)).as_posix()
        base = "" if rel == "." else rel + "/"
    data = page(records, base, title, partial, frames_option).encode("utf-8")
    write_bytes_atomic(path, data, code="output-failed")
    return path
