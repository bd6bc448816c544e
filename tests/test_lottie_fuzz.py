"""A bounded fuzz of the Lottie reader (issue 44, item 4).

Hypothesis mutates generated animations (tests/lottie_gen.py): random values put
at random places (hostile numbers, nulls, wrong types, deep nesting, parents and
precomposition references that point anywhere), bytes cut or spliced, archives
truncated. Each one either raises :class:`NanoframesError` or reads to a source
whose document is canonical JSON with no path ThorVG could open, no null easing,
no cycle, and frames inside the limits. ThorVG is never called here.
"""

from __future__ import annotations

import json

import lottie_gen as g
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from nanoframes.errors import NanoframesError
from nanoframes.lottie import lottie_from_bytes
from nanoframes.lottie.checks import MAX_REPEATER_COPIES
from nanoframes.lottie.jsontext import Number, canonical, parse

FAST = settings(max_examples=120, deadline=None,
                suppress_health_check=[HealthCheck.too_slow, HealthCheck.data_too_large])

VALUES = st.recursive(
    st.one_of(st.none(), st.booleans(), st.integers(-10**6, 10**12),
              st.floats(allow_nan=False, allow_infinity=False), st.sampled_from(
                  ["", "data:", "/etc/passwd", "../x.png", "https://x/y.png", "me", "1", "rp",
                   "gr", "x", "$bm_rt = value;"]), st.text(max_size=8)),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(
        st.sampled_from(["ty", "ind", "parent", "refId", "id", "c", "i", "o", "t", "s", "k", "a",
                         "p", "u", "e", "layers", "it", "shapes", "x", "f", "ip", "op"]),
        inner, max_size=4),
    max_leaves=12)


def _base(kind: int) -> dict:
    if kind == 0:
        return g.animation()
    if kind == 1:
        return g.animation(layers=[g.precomp_layer("inner"), g.shape_layer(ind=2, parent=1)],
                           assets=[{"id": "inner", "layers": [g.shape_layer()]}])
    if kind == 2:
        return g.animation(layers=[g.shape_layer(shapes=[g.group(g.rect(), g.fill(),
                                                                 g.repeater(5))])],
                           markers=[("m", 0, 10)])
    return g.animation(layers=[g.text_layer(), g.image_layer("img", ind=2)],
                       assets=[g.image_asset("img", "data:image/png;base64,AAAA", folder="",
                                             embedded=1)], fonts=g.font_list("Body"))


def _containers(node, out):
    stack = [node]
    while stack:
        item = stack.pop()
        if isinstance(item, (dict, list)):
            out.append(item)
            stack.extend(item.values() if isinstance(item, dict) else item)
    return out


@st.composite
def mutated(draw) -> bytes:
    doc = _base(draw(st.integers(0, 3)))
    for _ in range(draw(st.integers(1, 6))):
        places = _containers(doc, [])
        place = places[draw(st.integers(0, len(places) - 1))]
        value = draw(VALUES)
        if isinstance(place, dict):
            key = draw(st.sampled_from(sorted(place) + ["parent", "refId", "i", "c", "x"]))
            place[key] = value
        elif place:
            place[draw(st.integers(0, len(place) - 1))] = value
        else:
            place.append(value)
    data = json.dumps(doc).encode()
    if draw(st.integers(0, 9)) == 0:  # now and then, damage the bytes themselves
        cut = draw(st.integers(0, len(data)))
        data = data[:cut] + draw(st.binary(max_size=8)) + data[cut + draw(st.integers(0, 8)):]
    return data


def _check_read(source) -> None:
    tree = parse(source.document, "doc")
    assert canonical(tree) == source.document
    assert 1 <= source.frame_count <= 100_000 and source.width >= 1 and source.height >= 1
    for asset in tree.get("assets") or []:
        if isinstance(asset, dict) and isinstance(asset.get("p"), str) \
                and "layers" not in asset:
            assert asset["p"].startswith("data:image/") and asset["u"] == ""
    stack = [tree]
    while stack:
        node = stack.pop()
        if isinstance(node, dict):
            for key in node.get("k") if isinstance(node.get("k"), list) else []:
                if isinstance(key, dict) and isinstance(key.get("t"), Number):
                    assert key.get("i", 0) is not None and key.get("o", 0) is not None
            if node.get("ty") == "rp" and isinstance(node.get("c"), dict):
                k = node["c"].get("k")
                if isinstance(k, (int, float, str)) and not isinstance(k, bool):
                    try:
                        assert float(k) <= MAX_REPEATER_COPIES
                    except ValueError:
                        pass
            stack.extend(node.values())
        elif isinstance(node, list):
            stack.extend(node)
    assert source.identity_parts()["source"] and len(source.scene(0)) > len(source.document)


@FAST
@given(mutated())
def test_mutated_animations_read_or_refuse(data):
    try:
        source = lottie_from_bytes(data, "fuzz.json")
    except NanoframesError as exc:
        assert "\n" not in str(exc)
        return
    _check_read(source)


@FAST
@given(st.binary(max_size=200))
def test_random_bytes_refused(data):
    try:
        lottie_from_bytes(data, "fuzz.json")
    except NanoframesError:
        return
    raise AssertionError("random bytes read as an animation")


@FAST
@given(st.integers(0, 2000), st.binary(max_size=16))
def test_damaged_archives_read_or_refuse(cut, junk):
    whole = g.dotlottie(g.dumps(g.animation()))
    data = whole[:cut] + junk + whole[cut + len(junk):] if cut < len(whole) else whole + junk
    try:
        source = lottie_from_bytes(data, "fuzz.lottie")
    except NanoframesError as exc:
        assert "\n" not in str(exc)
        return
    _check_read(source)
