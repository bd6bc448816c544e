"""``<style>`` sheets resolved into the tree, the way a browser's cascade would.

ThorVG must never see a sheet (an ``@font-face`` in one crashes its loader:
docs/thorvg.md), so bake drops every ``<style>``. What the sheet says is kept
here instead, once, when the composition is parsed: each element's matching
declarations (class, type, id, attribute selectors, descendant and child combinators, grouped
selectors; ordered by specificity, then by order in the document; ``!important``
honoured) are merged into its ``style=`` attribute, ahead of the element's own
declarations so that inline style still wins. Everything downstream (fonts,
layout, lint, bake's move of presentation properties onto attributes, timeline
values applied on top) then reads one place.

What is not applied (at-rules, pseudo-classes and pseudo-elements, selectors the
parser cannot read, sheets of another ``type``) is listed by :func:`unapplied`
for lint (``css-unsupported``).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import cssselect2
import tinycss2
from lxml import etree

from ..errors import NanoframesError
from .svg import SVG_NS

# Selector tests plus ancestor steps for one document (docs/limits.md): 2,000
# class rules over 20,000 elements take about 20,000; past this a sheet is hostile.
MAX_STYLE_WORK = 1_000_000


@dataclass(frozen=True)
class Skipped:
    """A part of a sheet nanoframes does not apply: where and what."""

    style: etree._Element  # the <style> element holding it
    line: int | None
    what: str


@dataclass(frozen=True)
class _Decl:
    name: str
    value: str
    important: bool


def _sheets(root) -> list[etree._Element]:
    return [el for el in root.iter(f"{{{SVG_NS}}}style", "style")]


def _line(style, node) -> int | None:
    base = style.sourceline
    offset = getattr(node, "source_line", None)
    return None if base is None or offset is None else base + offset - 1


def _shown(tokens) -> str:
    text = " ".join(tinycss2.serialize(tokens).split())
    return text if len(text) <= 60 else text[:57] + "..."


def _not_applied(tokens) -> bool:
    """A ``:`` outside brackets is a pseudo-class or pseudo-element (a state such as
    ``:hover`` has no meaning in a film); ``+`` and ``~`` are sibling combinators,
    whose matching cost grows with the square of a group's children. nanoframes
    applies none of them."""
    return any(tok.type == "literal" and tok.value in (":", "::", "+", "~") for tok in tokens)


class _Budget:
    """Selector tests and ancestor steps spent matching one document, bounded: a
    hostile sheet (``* * * * x`` over deep groups, thousands of ``*`` rules) would
    otherwise take time without bound."""

    def __init__(self, limit: int, refuse) -> None:
        self.left = limit
        self.refuse = refuse

    def spend(self, n: int) -> None:
        self.left -= n
        if self.left < 0:
            self.refuse()


class _Ancestors(tuple):
    budget: _Budget

    def __iter__(self):
        for node in tuple.__iter__(self):
            self.budget.spend(1)
            yield node


class _Wrapper(cssselect2.ElementWrapper):
    budget: _Budget

    @property
    def ancestors(self):
        if self._ancestors is None:
            chain, node = [], self.parent
            while node is not None:
                chain.append(node)
                node = node.parent
            found = _Ancestors(chain)
            found.budget = self.budget
            self._ancestors = found
        return self._ancestors


class _Matcher(cssselect2.Matcher):
    budget: _Budget

    def add_relevant_selectors(self, element, selectors, relevant_selectors):
        self.budget.spend(len(selectors))
        super().add_relevant_selectors(element, selectors, relevant_selectors)


def _declarations(content) -> list[_Decl]:
    out = []
    for decl in tinycss2.parse_blocks_contents(content, skip_whitespace=True,
                                               skip_comments=True):
        if decl.type == "declaration":
            value = tinycss2.serialize(decl.value).strip()
            if value:
                out.append(_Decl(decl.lower_name, value, decl.important))
    return out


def _read(root) -> tuple[_Matcher | None, list[Skipped]]:
    """Every applicable rule in one matcher (payload: its declarations), and what
    was skipped."""
    matcher = _Matcher()
    skipped: list[Skipped] = []
    rules = 0
    for style in _sheets(root):
        kind = (style.get("type") or "text/css").strip().lower()
        if kind != "text/css":
            skipped.append(Skipped(style, style.sourceline, f"a sheet of type {kind!r}"))
            continue
        text = "".join(style.itertext())
        for rule in tinycss2.parse_stylesheet(text, skip_comments=True, skip_whitespace=True):
            if rule.type == "at-rule":
                skipped.append(Skipped(style, _line(style, rule), f"@{rule.lower_at_keyword}"))
                continue
            if rule.type != "qualified-rule":  # a parse error: browsers skip it too
                skipped.append(Skipped(style, _line(style, rule), "an unreadable rule"))
                continue
            decls = _declarations(rule.content)
            for part in _split_commas(rule.prelude):
                shown = _shown(part)
                if _not_applied(part):
                    skipped.append(Skipped(style, _line(style, rule), f"selector {shown!r}"))
                    continue
                try:
                    compiled = cssselect2.compile_selector_list(part)
                except Exception:  # noqa: BLE001 - not only SelectorError: a lone "|" raises
                    # AttributeError inside cssselect2; any selector it cannot read is skipped
                    skipped.append(Skipped(style, _line(style, rule), f"selector {shown!r}"))
                    continue
                for selector in compiled:
                    matcher.add_selector(selector, decls)
                    rules += 1
    return (matcher if rules else None), skipped


def _split_commas(prelude) -> list[list]:
    """A grouped selector ``a, b`` as its parts, so one bad part skips only itself."""
    parts: list[list] = [[]]
    for tok in prelude:
        if tok.type == "literal" and tok.value == ",":
            parts.append([])
        else:
            parts[-1].append(tok)
    return [p for p in parts if any(t.type not in ("whitespace", "comment") for t in p)]


def unapplied(root) -> list[Skipped]:
    """What the document's sheets say that nanoframes does not apply (for lint)."""
    if not _sheets(root):
        return []
    return _read(root)[1]


def apply_sheets(root, path: Path | None = None) -> None:
    """Merge every matching sheet declaration into each element's ``style=``, in
    cascade order, inline declarations after them (inline wins) and ``!important``
    sheet declarations last unless the element's own is important too. Matching
    more than ``MAX_STYLE_WORK`` selector tests and ancestor steps is refused
    (``style-too-large``)."""
    sheets = _sheets(root)
    if not sheets:
        return
    matcher, _ = _read(root)
    if matcher is None:
        return

    def refuse() -> None:
        raise NanoframesError("style-too-large", f"matching the style sheets takes more than "
                              f"{MAX_STYLE_WORK:,} selector tests (too many rules that match "
                              "everything, or long descendant chains)", path,
                              sheets[0].sourceline)

    budget = _Budget(MAX_STYLE_WORK, refuse)
    wrapper_type = type("_Counted", (_Wrapper,), {"budget": budget})
    matcher.budget = budget
    for wrapper in wrapper_type.from_xml_root(root).iter_subtree():
        matches = matcher.match(wrapper)
        if not matches:
            continue
        el = wrapper.etree_element
        normal: dict[str, str] = {}
        important: dict[str, str] = {}
        # match() returns (specificity, order, pseudo, payload), sorted: later wins
        for _spec, _order, _pseudo, decls in sorted(matches, key=lambda m: m[:2]):
            for d in decls:
                target = important if d.important else normal
                target.pop(d.name, None)  # re-insert: dict order is cascade order
                target[d.name] = d.value
        inline = el.get("style") or ""
        own_important = {d.name for d in _declarations(tinycss2.parse_component_value_list(
            inline)) if d.important} if "!" in inline else set()
        parts = [f"{k}:{v}" for k, v in normal.items()]
        if inline.strip():
            parts.append(inline.strip().rstrip(";"))
        parts += [f"{k}:{v}" for k, v in important.items() if k not in own_important]
        el.set("style", ";".join(parts))
