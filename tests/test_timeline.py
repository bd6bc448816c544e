"""The timeline: parsing, selectors, values at t, transforms (docs/compositions.md)."""

from __future__ import annotations

import json
import math
import re

import numpy as np
import pytest
from lxml import etree

from nanoframes.errors import NanoframesError
from nanoframes.model.easing import NAMED_EASINGS
from nanoframes.model.timeline import (
    ANIMATABLE,
    Keyframe,
    clamp01,
    fmt,
    needs_auto_center,
    parse_selector,
    parse_timeline,
    transform_to_svg,
    value_at,
    values_for,
)

SVG_NS = "http://www.w3.org/2000/svg"


def timeline(*animations: dict) -> str:
    return json.dumps({"animations": list(animations)})


def anims(*animations: dict):
    return parse_timeline(timeline(*animations))


def kfs(*frames: dict):
    return anims({"target": "#a", "keyframes": list(frames)})[0].keyframes


def element(tag: str = "rect", **attrs: str):
    el = etree.Element(f"{{{SVG_NS}}}{tag}")
    for key, value in attrs.items():
        el.set("class" if key == "class_" else key, value)
    return el


# --- selectors -----------------------------------------------------------------


def test_selector_forms():
    assert parse_selector("#box").parts == (("id", "box"),)
    assert parse_selector(".card").parts == (("class", "card"),)
    assert parse_selector("rect").parts == (("tag", "rect"),)
    assert parse_selector(" #a , .b,circle ").parts == (
        ("id", "a"),
        ("class", "b"),
        ("tag", "circle"),
    )
    assert parse_selector("#title-1_x").parts == (("id", "title-1_x"),)


@pytest.mark.parametrize(
    "text",
    ["", " ", "#", ".", "#a,", ",#a", "#a,,#b", "g > rect", "g rect", "[x=1]", "*", "#a.b",
     "rect.card", ".a.b", "a:hover", "1rect", "#a b"],
)
def test_unreadable_selectors_raise(text):
    with pytest.raises(ValueError):
        parse_selector(text)


def test_selector_matching():
    rect = element("rect", id="box", class_="card  big")
    circle = element("circle", id="dot")
    assert parse_selector("#box").matches(rect)
    assert not parse_selector("#box").matches(circle)
    assert parse_selector(".card").matches(rect)
    assert parse_selector(".big").matches(rect)
    assert not parse_selector(".car").matches(rect)  # whole class names only
    assert parse_selector("rect").matches(rect)  # namespaced tag, local name
    assert parse_selector("rect").matches(etree.Element("rect"))  # no namespace
    assert not parse_selector("rect").matches(circle)
    both = parse_selector("#dot, .card")
    assert both.matches(rect) and both.matches(circle)
    assert not parse_selector("#x, .y, g").matches(rect)
    assert not parse_selector("rect").matches(etree.Comment("rect"))


# --- parsing -------------------------------------------------------------------


def test_parse_model():
    (anim,) = parse_timeline(
        timeline(
            {
                "target": "#a, .b",
                "keyframes": [
                    {"t": 2, "opacity": 1, "ease": "ease-in", "wobble": 3},
                    {"t": 0.5, "opacity": 0, "fill": "red"},
                ],
            }
        )
    )
    assert anim.index == 0 and anim.target == "#a, .b"
    assert anim.selector.parts == (("id", "a"), ("class", "b"))
    assert [kf.t for kf in anim.keyframes] == [0.5, 2.0]
    assert isinstance(anim.keyframes[1].t, float)
    assert dict(anim.keyframes[1].values) == {"opacity": 1, "wobble": 3}  # unknown kept
    assert anim.keyframes[1].ease == "ease-in"
    assert anim.keyframes[0].ease is None
    with pytest.raises(TypeError):
        anim.keyframes[0].values["opacity"] = 5  # type: ignore[index]


def test_keyframes_sorted_stably():
    frames = kfs({"t": 1, "x": 1}, {"t": 0, "x": 0}, {"t": 1, "x": 2}, {"t": 0.5, "x": 9})
    assert [(kf.t, kf.values["x"]) for kf in frames] == [(0, 0), (0.5, 9), (1, 1), (1, 2)]


def test_unknown_ease_is_kept_not_an_error():
    frames = kfs({"t": 0, "x": 0}, {"t": 1, "x": 10, "ease": "bounce"}, {"t": 2, "x": 0, "ease": 7})
    assert frames[1].ease == "bounce"
    assert frames[2].ease == "7"  # non-string kept as its JSON text for lint
    assert value_at(frames, "x", 0.5) == 5.0  # renders linear


def test_cdata_whitespace_and_empty():
    assert parse_timeline('\n  {"animations": []}  \n') == ()
    (anim,) = parse_timeline('{"animations": [{"target": "g", "keyframes": []}]}')
    assert anim.keyframes == ()


def expect_error(code: str, text: str, *, line: int | None = 10) -> NanoframesError:
    with pytest.raises(NanoframesError) as info:
        parse_timeline(text, file="comp.nf.svg", line=line)
    err = info.value
    assert err.code == code, err
    assert err.file == "comp.nf.svg"
    return err


def test_timeline_json_error_has_position():
    err = expect_error("timeline-json", '{"animations": [\n  {"target": "#a",, }\n]}')
    assert "line 2" in err.message and "column" in err.message
    assert err.line == 11  # the timeline starts on file line 10
    err = expect_error("timeline-json", "", line=None)
    assert err.line is None


def test_timeline_json_deep_nesting_is_an_error_not_a_crash():
    expect_error("timeline-json", "[" * 100_000 + "]" * 100_000)


@pytest.mark.parametrize(
    "text",
    [
        "[]",
        "3",
        '{"anims": []}',
        '{"animations": {}}',
        '{"animations": [3]}',
        '{"animations": [{"keyframes": []}]}',
        '{"animations": [{"target": 5, "keyframes": []}]}',
        '{"animations": [{"target": "#a"}]}',
        '{"animations": [{"target": "#a", "keyframes": {"t": 0}}]}',
        '{"animations": [{"target": "#a", "keyframes": [5]}]}',
        '{"animations": [{"target": "#a", "keyframes": [[0, 1]]}]}',
    ],
)
def test_timeline_shape_errors(text):
    err = expect_error("timeline-shape", text)
    assert err.line == 10


@pytest.mark.parametrize(
    "keyframe",
    ['{"opacity": 1}', '{"t": "1s", "opacity": 1}', '{"t": null}', '{"t": true}', '{"t": [0]}'],
)
def test_keyframe_without_numeric_t(keyframe):
    text = '{"animations": [{"target": "#a", "keyframes": [{"t": 0}, ' + keyframe + "]}]}"
    err = expect_error("keyframe-no-t", text)
    assert "keyframes[1]" in err.message and "'#a'" in err.message


@pytest.mark.parametrize("target", ["", "#", "g > rect", "[id=a]", "#a,"])
def test_selector_invalid(target):
    err = expect_error("selector-invalid", timeline({"target": target, "keyframes": []}))
    assert repr(target) in err.message


@pytest.mark.parametrize(
    "value",
    ["NaN", "Infinity", "-Infinity", "1e999", "-1e400", "[0, NaN]", '{"translate": [Infinity, 0]}',
     "1" * 400],
)
def test_non_finite_numbers_rejected(value):
    text = '{"animations": [{"target": "#a", "keyframes": [{"t": 0, "x": ' + value + "}]}]}"
    err = expect_error("timeline-number", text)
    assert "animations[0].keyframes[0].x" in err.message


def test_non_finite_time_rejected():
    err = expect_error(
        "timeline-number", '{"animations": [{"target": "#a", "keyframes": [{"t": NaN}]}]}'
    )
    assert "keyframes[0].t" in err.message


# --- values at t -----------------------------------------------------------------


def test_hold_before_first_and_after_last():
    frames = kfs({"t": 1, "opacity": 0.2}, {"t": 3, "opacity": 0.8})
    assert value_at(frames, "opacity", -5) == 0.2
    assert value_at(frames, "opacity", 1) == 0.2
    assert value_at(frames, "opacity", 2) == pytest.approx(0.5)
    assert value_at(frames, "opacity", 3) == 0.8
    assert value_at(frames, "opacity", 99) == 0.8
    assert value_at(frames, "fill", 2) is None


def test_single_keyframe_holds_everywhere():
    frames = kfs({"t": 1, "x": 7})
    assert [value_at(frames, "x", t) for t in (0, 1, 2)] == [7.0, 7.0, 7.0]


def test_only_keyframes_carrying_the_property_count():
    frames = kfs({"t": 0, "x": 0, "y": 0}, {"t": 1, "y": 100}, {"t": 2, "x": 20, "y": 0})
    assert value_at(frames, "x", 1) == 10.0  # interpolates 0 -> 2 straight past t=1
    assert value_at(frames, "y", 1) == 100.0


def test_arriving_ease_shapes_the_segment():
    # ease on keyframe 2 shapes 1 -> 2; ease on keyframe 1 shapes nothing.
    frames = kfs(
        {"t": 0, "x": 0, "ease": "ease-out"},
        {"t": 1, "x": 100, "ease": "ease-in"},
        {"t": 2, "x": 0},
    )
    ease_in = NAMED_EASINGS["ease-in"]
    for p in (0.1, 0.25, 0.5, 0.9):
        assert value_at(frames, "x", p) == pytest.approx(100 * ease_in(p))
        assert value_at(frames, "x", 1 + p) == pytest.approx(100 - 100 * p)  # linear


def test_ease_on_first_keyframe_shapes_nothing():
    frames = kfs({"t": 0, "x": 0, "ease": "ease-in"}, {"t": 1, "x": 10})
    assert value_at(frames, "x", 0.5) == 5.0


def test_overshoot_is_not_clamped_in_values():
    frames = kfs({"t": 0, "opacity": 0}, {"t": 1, "opacity": 1, "ease": "ease-out-back"})
    assert value_at(frames, "opacity", 0.7) > 1.0  # clamped when drawn, not here
    assert clamp01(value_at(frames, "opacity", 0.7)) == 1.0


def test_equal_times_make_a_step():
    frames = kfs({"t": 0, "x": 0}, {"t": 1, "x": 10}, {"t": 1, "x": 50}, {"t": 2, "x": 50})
    assert value_at(frames, "x", 0.5) == 5.0
    assert value_at(frames, "x", 1.0) == 50.0
    assert value_at(frames, "x", 1.5) == 50.0


def test_colours_interpolate_as_rgba():
    frames = kfs({"t": 0, "fill": "#000"}, {"t": 1, "fill": "#ff000080"})
    assert value_at(frames, "fill", 0) == (0.0, 0.0, 0.0, 1.0)
    r, g, b, a = value_at(frames, "fill", 0.5)
    assert (r, g, b) == (127.5, 0.0, 0.0) and a == pytest.approx((1 + 128 / 255) / 2)
    assert value_at(frames, "fill", 5) == (255.0, 0.0, 0.0, 128 / 255)
    stroke = kfs({"t": 0, "stroke": "red"}, {"t": 1, "stroke": "blue"})
    assert value_at(stroke, "stroke", 0.25) == (191.25, 0.0, 63.75, 1.0)


def test_different_shapes_hold_the_earlier_value():
    frames = kfs({"t": 0, "x": 5}, {"t": 1, "x": [1, 2]}, {"t": 2, "x": 9})
    assert value_at(frames, "x", 0.5) == 5.0
    assert value_at(frames, "x", 1.5) == [1, 2]
    assert value_at(frames, "x", 2) == 9.0
    fills = kfs({"t": 0, "fill": "red"}, {"t": 1, "fill": "url(#g)"}, {"t": 2, "fill": "blue"})
    assert value_at(fills, "fill", 0.5) == (255.0, 0.0, 0.0, 1.0)
    assert value_at(fills, "fill", 1.5) == "url(#g)"
    tf = kfs({"t": 0, "transform": {"rotate": 10}}, {"t": 1, "transform": {"rotate": "x"}})
    assert value_at(tf, "transform", 0.5) == {"rotate": 10}


def test_transform_interpolates_element_wise_with_identity_defaults():
    frames = kfs(
        {"t": 0, "transform": {"translate": [0, 10]}},
        {"t": 1, "transform": {"rotate": 90, "scale": 3}},
    )
    v = value_at(frames, "transform", 0.5)
    assert v["translate"] == [0.0, 5.0]
    assert v["rotate"] == 45.0
    assert v["scale"] == 2.0
    assert "center" not in v


def test_transform_scale_pairs_and_pivots():
    frames = kfs(
        {"t": 0, "transform": {"scale": 1, "rotate": [0, 5, 5], "center": [1, 1]}},
        {"t": 1, "transform": {"scale": [3, 5], "rotate": 90, "center": "auto"}},
    )
    v = value_at(frames, "transform", 0.5)
    assert v["scale"] == [2.0, 3.0]
    assert v["rotate"] == [45.0, 5.0, 5.0]  # pivot from whichever keyframe has one
    assert v["center"] == "auto"  # the arriving keyframe's centre
    frames = kfs(
        {"t": 0, "transform": {"rotate": [0, 5, 5]}},
        {"t": 1, "transform": {"rotate": [90, 7, 7]}},
    )
    assert value_at(frames, "transform", 0.5)["rotate"] == [45.0, 7.0, 7.0]


def test_value_at_is_deterministic():
    frames = kfs({"t": 0, "x": 0.1}, {"t": 0.7, "x": 3.3, "ease": "ease-out-back"})
    assert value_at(frames, "x", 0.3).hex() == value_at(frames, "x", 0.3).hex()


def test_later_animation_wins_per_property():
    animations = anims(
        {"target": "rect", "keyframes": [{"t": 0, "opacity": 0.1, "x": 1}]},
        {"target": "#box", "keyframes": [{"t": 0, "opacity": 0.9}]},
        {"target": ".other", "keyframes": [{"t": 0, "opacity": 0.5}]},
    )
    box = element("rect", id="box")
    assert values_for(animations, box, 0) == {"opacity": 0.9, "x": 1.0}
    plain = element("rect")
    assert values_for(animations, plain, 0) == {"opacity": 0.1, "x": 1.0}
    assert values_for(animations, element("circle"), 0) == {}


def test_values_for_leaves_out_unknown_properties():
    animations = anims({"target": "#a", "keyframes": [{"t": 0, "href": "http://x", "r": 3}]})
    assert values_for(animations, element("circle", id="a"), 0) == {"r": 3.0}


def test_animatable_is_the_contract_table():
    assert ANIMATABLE == {
        "opacity", "fill-opacity", "stroke-opacity", "transform", "fill", "stroke",
        "stroke-width", "stroke-dashoffset",
        "x", "y", "width", "height", "cx", "cy", "r", "rx", "ry", "x1", "y1", "x2", "y2",
    }


def test_keyframe_is_frozen():
    kf = Keyframe(0.0, {}, None)
    with pytest.raises(AttributeError):
        kf.t = 1.0  # type: ignore[misc]


# --- transforms ------------------------------------------------------------------

_OP = re.compile(r"(\w+)\(([^)]*)\)")


def matrix_of(transform: str) -> np.ndarray:
    """An independent reading of an SVG transform list as a 3x3 matrix."""
    m = np.eye(3)
    for name, args_text in _OP.findall(transform):
        a = [float(v) for v in args_text.split(",")]
        if name == "translate":
            op = np.array([[1, 0, a[0]], [0, 1, a[1] if len(a) > 1 else 0], [0, 0, 1]])
        elif name == "scale":
            sy = a[1] if len(a) > 1 else a[0]
            op = np.array([[a[0], 0, 0], [0, sy, 0], [0, 0, 1]])
        elif name == "rotate":
            c, s = math.cos(math.radians(a[0])), math.sin(math.radians(a[0]))
            op = np.array([[c, -s, 0], [s, c, 0], [0, 0, 1]])
            if len(a) == 3:
                op = matrix_of(f"translate({a[1]},{a[2]})") @ op @ matrix_of(
                    f"translate({-a[1]},{-a[2]})"
                )
        else:
            raise AssertionError(name)
        m = m @ op
    return m


def apply(transform: str, x: float, y: float) -> tuple[float, float]:
    px, py, _ = matrix_of(transform) @ np.array([x, y, 1.0])
    return float(px), float(py)


def test_rotate_and_scale_pivot_on_origin_by_default():
    svg = transform_to_svg({"rotate": 90, "scale": 2})
    assert svg == "rotate(90) scale(2)"
    assert apply(svg, 0, 0) == pytest.approx((0, 0))
    assert apply(svg, 1, 0) == pytest.approx((0, 2))


def test_translate_then_rotate_then_scale():
    svg = transform_to_svg({"translate": [10, 20], "rotate": 90, "scale": [2, 3]})
    assert svg == "translate(10,20) rotate(90) scale(2,3)"
    # scale first, then rotate, then translate (applied to the point right to left)
    assert apply(svg, 1, 1) == pytest.approx((10 - 3, 20 + 2))


def test_center_pivots_rotate_and_scale():
    svg = transform_to_svg({"rotate": 90, "scale": 2, "center": [50, 40]})
    assert svg == "translate(50,40) rotate(90) scale(2) translate(-50,-40)"
    assert apply(svg, 50, 40) == pytest.approx((50, 40))  # the pivot stays put
    assert apply(svg, 51, 40) == pytest.approx((50, 42))
    moved = transform_to_svg({"translate": [5, 5], "rotate": 90, "center": [50, 40]})
    assert moved == "translate(55,45) rotate(90) translate(-50,-40)"
    assert apply(moved, 50, 40) == pytest.approx((55, 45))


def test_center_auto_uses_the_callers_box_centre():
    value = {"rotate": 180, "center": "auto"}
    assert needs_auto_center(value)
    svg = transform_to_svg(value, auto_center=(30.5, 10))
    assert svg == "translate(30.5,10) rotate(180) translate(-30.5,-10)"
    assert apply(svg, 30.5, 10) == pytest.approx((30.5, 10))
    assert apply(svg, 31.5, 10) == pytest.approx((29.5, 10))
    assert transform_to_svg(value) == "rotate(180)"  # no box: the origin


def test_rotate_pivot_pivots_only_the_rotate():
    svg = transform_to_svg({"rotate": [90, 10, 0], "scale": 2})
    assert svg == "translate(10,0) rotate(90) translate(-10,0) scale(2)"
    assert apply(svg, 5, 1) == pytest.approx((8, 0))  # scaled about origin, then pivot
    rot_only = transform_to_svg({"rotate": [90, 10, 0]})
    assert apply(rot_only, 10, 0) == pytest.approx((10, 0))
    # With center too, the rotate keeps its own pivot and scale takes the center.
    both = transform_to_svg({"rotate": [90, 10, 0], "scale": 3, "center": [1, 1]})
    scaled = apply("translate(1,1) scale(3) translate(-1,-1)", 10, 0)
    assert apply(both, 10, 0) == pytest.approx(apply("rotate(90,10,0)", *scaled))


def test_transform_svg_matches_an_independent_composition():
    value = {"translate": [3, -4], "rotate": 33.3, "scale": [1.5, 0.5], "center": [7, 9]}
    expected = matrix_of(
        "translate(3,-4) translate(7,9) rotate(33.3) translate(-7,-9) "
        "translate(7,9) scale(1.5,0.5) translate(-7,-9)"
    )
    assert np.allclose(matrix_of(transform_to_svg(value)), expected, atol=1e-5)


def test_identity_and_malformed_transforms():
    assert transform_to_svg({}) == ""
    assert transform_to_svg({"translate": [0, 0], "rotate": 0, "scale": 1, "center": [5, 5]}) == ""
    assert transform_to_svg({"rotate": "fast"}) == ""  # lint reports it
    assert transform_to_svg([1, 2]) == ""  # type: ignore[arg-type]


def test_interpolated_transform_renders():
    frames = kfs(
        {"t": 0, "transform": {"rotate": 0, "center": "auto"}},
        {"t": 1, "transform": {"rotate": 90, "center": "auto"}},
    )
    v = value_at(frames, "transform", 0.5)
    assert needs_auto_center(v)
    assert transform_to_svg(v, (10, 10)) == "translate(10,10) rotate(45) translate(-10,-10)"


def test_needs_auto_center():
    assert not needs_auto_center({"rotate": 5})
    assert not needs_auto_center({"center": [1, 2]})
    assert not needs_auto_center(5)


@pytest.mark.parametrize(
    ("x", "text"),
    [
        (0, "0"), (-0.0, "0"), (1, "1"), (1.5, "1.5"), (-2.25, "-2.25"), (1 / 3, "0.333333"),
        (2 / 3, "0.666667"), (1e-7, "0"), (-1e-7, "0"), (123456789.0, "123456789"),
        (0.1 + 0.2, "0.3"), (1e-6, "0.000001"),
    ],
)
def test_fmt(x, text):
    assert fmt(x) == text


def test_fmt_rejects_non_finite():
    with pytest.raises(ValueError):
        fmt(float("nan"))


def test_clamp01():
    assert [clamp01(v) for v in (-1, 0, 0.25, 1, 3, float("nan"))] == [0, 0, 0.25, 1, 1, 0]


def test_pre_parsed_tracks_give_exactly_what_value_at_gives():
    """The per-frame fast path (Animation.tracks) must not change a single value."""
    import glob

    from nanoframes.model.composition import parse
    from nanoframes.model.timeline import parse_transform, value_at

    paths = sorted(glob.glob("examples/**/*.nf.svg", recursive=True))
    assert paths
    checked = 0
    for path in paths:
        comp = parse(path)
        times = [comp.time_of(i) for i in range(comp.frame_count)] + [-1.0, 1e6]
        for anim in comp.animations:
            for track in anim.tracks:
                for t in times:
                    expected = value_at(anim.keyframes, track.prop, t)
                    if track.prop == "transform" and parse_transform(expected) is not None:
                        expected = parse_transform(expected)
                    assert track.at(t) == expected
                    checked += 1
    assert checked > 1000
