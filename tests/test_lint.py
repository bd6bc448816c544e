"""``nanoframes check``: each code has a composition that triggers it and one that does not."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from nanoframes.cli import main
from nanoframes.lint import lint_file

SVG = 'xmlns="http://www.w3.org/2000/svg"'
EXAMPLES = sorted((Path(__file__).resolve().parents[1] / "examples").glob("**/*.nf.svg"))


def comp(body: str, animations: str = "", root: str = "") -> str:
    script = (f'<script type="application/nanoframes+json">{{"animations": [{animations}]}}'
              "</script>" if animations else "")
    return (f'<svg {SVG} data-width="200" data-height="100" data-fps="10" data-duration="2" '
            f"{root}>{body}{script}</svg>")


BOX = '<rect id="box" x="80" y="30" width="40" height="40" fill="#336699"/>'


def anim(*keyframes: str, target: str = "#box") -> str:
    return f'{{"target": "{target}", "keyframes": [{", ".join(keyframes)}]}}'


# code -> (composition that triggers it, one that does not)
CASES: dict[str, tuple[str, str]] = {
    "unknown-ease": (
        comp(BOX, anim('{"t": 0, "opacity": 0}', '{"t": 1, "opacity": 1, "ease": "bouncy"}')),
        comp(BOX, anim('{"t": 0, "opacity": 0}', '{"t": 1, "opacity": 1, "ease": "apple"}')),
    ),
    "ease-on-first-keyframe": (
        comp(BOX, anim('{"t": 0, "opacity": 0, "ease": "ease-in"}', '{"t": 1, "opacity": 1}')),
        comp(BOX, anim('{"t": 0, "opacity": 0}', '{"t": 1, "opacity": 1, "ease": "ease-in"}')),
    ),
    "target-unmatched": (
        comp(BOX, anim('{"t": 0, "opacity": 0}', target="#bx")),
        comp(BOX, anim('{"t": 0, "opacity": 0}', target="rect")),
    ),
    "target-part-unmatched": (
        comp(BOX, anim('{"t": 0, "opacity": 0}', target="#box, .ghost")),
        comp(BOX, anim('{"t": 0, "opacity": 0}', target="#box, rect")),
    ),
    "unknown-property": (
        comp(BOX, anim('{"t": 0, "colour": "#fff"}', '{"t": 1, "colour": "#000"}')),
        comp(BOX, anim('{"t": 0, "fill": "#fff"}', '{"t": 1, "fill": "#000"}')),
    ),
    "value-invalid": (
        comp(BOX, anim('{"t": 0, "opacity": "half"}')),
        comp(BOX, anim('{"t": 0, "opacity": 0.5}')),
    ),
    "value-shape-mismatch": (
        comp(BOX, anim('{"t": 0, "fill": "#ffffff"}', '{"t": 1, "fill": "none"}')),
        comp(BOX, anim('{"t": 0, "fill": "#ffffff"}', '{"t": 1, "fill": "red"}')),
    ),
    "pivotless-off-canvas": (
        comp(BOX, anim('{"t": 0, "transform": {"rotate": 0}}',
                       '{"t": 1, "transform": {"rotate": 180}}')),
        comp(BOX, anim('{"t": 0, "transform": {"rotate": 0, "center": "auto"}}',
                       '{"t": 1, "transform": {"rotate": 180, "center": "auto"}}')),
    ),
    "never-on-canvas": (
        comp('<circle id="c" cx="260" cy="50" r="20" fill="#336699"/>'),
        comp('<circle id="c" cx="260" cy="50" r="20" fill="#336699"/>',
             anim('{"t": 0, "cx": 260}', '{"t": 1, "cx": 100}', target="#c")),
    ),
    "keyframe-outside-presence": (
        comp(BOX.replace("/>", ' data-start="1"/>'),
             anim('{"t": 0, "opacity": 0}', '{"t": 1.5, "opacity": 1}')),
        comp(BOX.replace("/>", ' data-start="1"/>'),
             anim('{"t": 1, "opacity": 0}', '{"t": 1.5, "opacity": 1}')),
    ),
    "image-missing": (
        comp('<image href="nope.png" width="10" height="10"/>'),
        comp('<image href="ok.png" width="10" height="10"/>'),
    ),
    "image-outside": (
        comp('<image href="../elsewhere.png" width="10" height="10"/>'),
        comp('<image href="ok.png" width="10" height="10"/>'),
    ),
    "nested-cycle": (
        comp('<image href="loop.nf.svg" width="10" height="10"/>'),
        comp('<image href="leaf.nf.svg" width="10" height="10"/>'),
    ),
    "font-unresolved": (
        comp('<text x="20" y="50" font-family="Brand Sans, sans-serif">Hi</text>'),
        comp('<text x="20" y="50" font-family="Brand Sans, Noto Sans">Hi</text>'),
    ),
    "safe-margin": (
        comp('<text x="2" y="50" font-family="Noto Sans">Hi</text>',
             root='data-safe-margin="10"'),
        comp('<text x="20" y="50" font-family="Noto Sans">Hi</text>',
             root='data-safe-margin="10"'),
    ),
    "palette-budget": (
        comp('<rect width="10" height="10" fill="#ff0000"/><rect x="20" width="10" height="10" '
             'fill="#00ff00" stroke="#0000ff"/>', root='data-palette-budget="2"'),
        comp('<rect width="10" height="10" fill="#ff0000"/><rect x="20" width="10" height="10" '
             'fill="#ff000080" stroke="red"/>', root='data-palette-budget="2"'),
    ),
    "curve-overflow": (
        comp('<text id="t" font-size="20" data-curve-d="M10 50 L 110 50">Far too long here</text>'),
        comp('<text id="t" font-size="20" data-curve-circle="100,50,40">Fits</text>'),
    ),
    "timeline-json": (
        comp(BOX, '{"target": "#box", "keyframes": [}'),
        comp(BOX),
    ),
}


@pytest.fixture
def project(tmp_path: Path) -> Path:
    root = tmp_path / "project"
    root.mkdir()
    (root / "pyproject.toml").write_text("")
    png = Path(__file__).resolve().parents[1] / "examples" / "assets" / "avatar.png"
    (root / "ok.png").write_bytes(png.read_bytes())
    (tmp_path / "elsewhere.png").write_bytes(png.read_bytes())
    (root / "loop.nf.svg").write_text(comp('<image href="loop.nf.svg" width="10" height="10"/>'))
    (root / "leaf.nf.svg").write_text(comp(BOX))
    return root


def codes(path: Path) -> list[str]:
    return [f.code for f in lint_file(path)]


@pytest.mark.parametrize("code", sorted(CASES))
def test_code_triggers(project: Path, code: str) -> None:
    path = project / "bad.nf.svg"
    path.write_text(CASES[code][0])
    assert code in codes(path)


@pytest.mark.parametrize("code", sorted(CASES))
def test_code_does_not_trigger_on_the_fixed_composition(project: Path, code: str) -> None:
    path = project / "good.nf.svg"
    path.write_text(CASES[code][1])
    assert codes(path) == []


def test_findings_name_the_element_and_the_time(project: Path) -> None:
    path = project / "a.nf.svg"
    path.write_text(CASES["unknown-ease"][0])
    (f,) = lint_file(path)
    assert (f.severity, f.code, f.t) == ("error", "unknown-ease", 1.0)
    assert f.element.startswith("<script> line ")
    path.write_text(CASES["never-on-canvas"][0])
    (f,) = lint_file(path)
    assert (f.severity, f.element, f.t) == ("warning", "#c", None)


def test_cli_exit_status_and_json(project: Path, capsys: pytest.CaptureFixture[str]) -> None:
    error = project / "error.nf.svg"
    error.write_text(CASES["unknown-ease"][0])
    warning = project / "warning.nf.svg"
    warning.write_text(CASES["ease-on-first-keyframe"][0])
    clean = project / "clean.nf.svg"
    clean.write_text(CASES["unknown-ease"][1])

    assert main(["check", str(clean)]) == 0
    assert main(["check", str(warning)]) == 0       # warnings pass...
    assert main(["check", "--strict", str(warning)]) == 1  # ...unless strict
    assert main(["check", str(error), str(clean)]) == 1
    capsys.readouterr()

    assert main(["check", "--json", str(error)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False
    (f,) = report["findings"]
    assert {"severity", "code", "element", "t", "message"} <= set(f)
    assert (f["severity"], f["code"], f["t"]) == ("error", "unknown-ease", 1.0)

    assert main(["check", "--json", str(warning)]) == 0
    assert json.loads(capsys.readouterr().out)["ok"] is True


def test_unparseable_file_is_an_error_finding(project: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    """Every file is reported; a file that cannot be rendered at all exits 2 (bad input)."""
    path = project / "broken.nf.svg"
    path.write_text("<svg")
    assert main(["check", str(path), str(project / "missing.nf.svg")]) == 2
    out = capsys.readouterr().out
    assert "error[xml-malformed]" in out and "error[file-missing]" in out


@pytest.mark.parametrize("path", EXAMPLES, ids=lambda p: p.name)
def test_every_example_is_lint_clean(path: Path) -> None:
    findings = lint_file(path)
    assert findings == [], "\n".join(f.format() for f in findings)


def test_images_without_a_size_are_boxed_at_their_natural_size(project: Path) -> None:
    path = project / "natural.nf.svg"
    path.write_text(comp('<image href="ok.png"/><image href="leaf.nf.svg" x="-150"/>'))
    assert codes(path) == []
    path.write_text(comp('<image href="leaf.nf.svg" x="-250"/>'))
    assert codes(path) == ["never-on-canvas"]
