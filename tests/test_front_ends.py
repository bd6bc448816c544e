"""One policy, two front ends: ``nanoframes digest`` (a subprocess) and the pytest
plugin (pytester) record the same ledgers and print the same verdict lines.

Each scenario runs the same steps in two identical tiny projects (64x64, 4
frames), one through each front end, and after every step compares the ledger
bytes, the verdicts (``--json`` / ``--nf-report``; the record hint aside, which
names each front end's own flag) and what the recording did.
"""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

import pytest
from test_plugin import make_project, tamper

Step = Callable[[Path], None]


def cli(root: Path, *args: str) -> tuple[int, dict, str]:
    proc = subprocess.run([sys.executable, "-m", "nanoframes", "digest", "--record", "--json",
                           *args], cwd=root, capture_output=True, text=True, timeout=120)
    out = json.loads(proc.stdout) if proc.stdout.strip() else {}
    return proc.returncode, out, proc.stderr


def plugin(pytester: pytest.Pytester, root: Path, *args: str) -> tuple[int, dict, str]:
    report = root / "report.json"
    report.unlink(missing_ok=True)
    result = pytester.runpytest_subprocess("-p", "no:cacheprovider", "--rootdir", str(root),
                                           "-c", str(root / "pyproject.toml"), str(root),
                                           "--nf-record", "--nf-report", str(report), *args)
    out = json.loads(report.read_text()) if report.exists() else {}
    return int(result.ret), out, result.stdout.str()


def lines(verdicts: list[dict]) -> list[tuple[str, str]]:
    """(key, line) of each composition's verdict, in one front end's words."""
    return [(v["key"], v["line"].replace("--nf-record", "--record").replace("--nf-force",
                                                                            "--force"))
            for v in verdicts if v["verdict"] != "stale"]


def recorded(out: dict) -> dict[str, list[str]]:
    summary = out.get("recorded") if "recorded" in out else out
    return {k: summary[k] for k in ("added", "updated", "unchanged", "removed")}


@pytest.fixture
def roots(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> tuple[Path, Path]:
    monkeypatch.delenv("EXCUSED_COMPOSITIONS", raising=False)
    make_project(pytester, names=("a", "b"))
    cli_root = pytester.path / "cli"
    plugin_root = pytester.path / "plugin"
    for root in (cli_root, plugin_root):
        root.mkdir()
        for name in ("pyproject.toml", "examples", "tests"):
            src = pytester.path / name
            (shutil.copytree if src.is_dir() else shutil.copy)(src, root / name)
    return cli_root, plugin_root


def both(pytester: pytest.Pytester, roots: tuple[Path, Path], cli_args: tuple[str, ...] = (),
         plugin_args: tuple[str, ...] = ()) -> tuple[tuple[int, dict, str], ...]:
    """One recording step through each front end; the ledgers must come out the same."""
    cli_root, plugin_root = roots
    got_cli = cli(cli_root, *cli_args)
    got_plugin = plugin(pytester, plugin_root, *plugin_args)
    ledgers = [(root / "tests" / "digests.json") for root in roots]
    assert [p.exists() for p in ledgers] == [True, True]
    assert ledgers[0].read_bytes() == ledgers[1].read_bytes(), (got_cli, got_plugin[2])
    return got_cli, got_plugin


def entries(root: Path) -> dict:
    return json.loads((root / "tests" / "digests.json").read_text())["compositions"]


def on_both(roots: tuple[Path, Path], step: Step) -> None:
    for root in roots:
        step(root)


def test_sampled_over_full_keeps_the_full_entry(pytester, roots) -> None:
    both(pytester, roots)
    (c, c_out, _), (p, p_out, _) = both(pytester, roots, ("--samples", "2"),
                                        ("--nf-samples", "2"))
    assert (c, p) == (0, 0)
    assert lines(c_out["verdicts"]) == lines(p_out["verdicts"])
    assert recorded(c_out) == recorded(p_out)
    assert c_out["unchanged"] == ["examples/a.nf.svg", "examples/b.nf.svg"]
    assert all(not e["sampled"] for e in entries(roots[1]).values())
    assert "a sampled check: compared 2 of 4 frames" in c_out["verdicts"][0]["line"]


def test_full_over_sampled_upgrades_the_entry(pytester, roots) -> None:
    both(pytester, roots, ("--samples", "2"), ("--nf-samples", "2"))
    assert all(e["sampled"] for e in entries(roots[1]).values())
    (c, c_out, _), (p, p_out, _) = both(pytester, roots)
    assert (c, p) == (0, 0)
    assert lines(c_out["verdicts"]) == lines(p_out["verdicts"])
    assert recorded(c_out) == recorded(p_out)
    assert c_out["updated"] == ["examples/a.nf.svg", "examples/b.nf.svg"]
    assert all(not e["sampled"] for e in entries(roots[1]).values())


def test_a_regression_is_refused_then_forced(pytester, roots) -> None:
    both(pytester, roots)
    on_both(roots, lambda root: tamper(root / "tests" / "digests.json", "examples/b.nf.svg"))
    tampered = entries(roots[0])["examples/b.nf.svg"]
    (c, c_out, _), (p, p_out, p_text) = both(pytester, roots)
    assert (c, p) == (1, 1)
    assert lines(c_out["verdicts"]) == lines(p_out["verdicts"])
    assert [v["key"] for v in c_out["refused"]] == p_out["recorded"]["refused"] == [
        "examples/b.nf.svg"]
    assert entries(roots[1])["examples/b.nf.svg"] == tampered  # not laundered
    assert "  not recorded: REGRESSION examples/b.nf.svg: regression, 1 of 4 frames" in p_text

    (c, c_out, _), (p, p_out, _) = both(pytester, roots, ("--force",), ("--nf-force",))
    assert (c, p) == (0, 0)
    assert lines(c_out["verdicts"]) == lines(p_out["verdicts"])
    assert recorded(c_out) == recorded(p_out)
    assert c_out["updated"] == ["examples/b.nf.svg"]


def test_a_stale_entry_is_removed_by_a_full_recording(pytester, roots) -> None:
    both(pytester, roots)
    on_both(roots, lambda root: (root / "examples" / "b.nf.svg").unlink())
    (c, c_out, _), (p, p_out, _) = both(pytester, roots)
    assert (c, p) == (0, 0)
    assert lines(c_out["verdicts"]) == lines(p_out["verdicts"])
    assert recorded(c_out) == recorded(p_out)
    assert c_out["removed"] == ["examples/b.nf.svg"]
    assert list(entries(roots[0])) == ["examples/a.nf.svg"]


def test_a_changed_composition_is_recorded_alike(pytester, roots) -> None:
    both(pytester, roots)
    for root in roots:
        (root / "examples" / "a.nf.svg").write_text(
            (root / "examples" / "a.nf.svg").read_text().replace("#ff0000", "#00ff00"))
    (c, c_out, _), (p, p_out, _) = both(pytester, roots)
    assert (c, p) == (0, 0)
    assert lines(c_out["verdicts"]) == lines(p_out["verdicts"])
    assert c_out["updated"] == ["examples/a.nf.svg"] == p_out["recorded"]["updated"]


@pytest.mark.parametrize("text", ["{ not json\n", '{\n<<<<<<< HEAD\n  "version": 1\n'],
                         ids=["corrupt", "conflicted"])
def test_an_unreadable_ledger_is_refused_alike_and_forced_alike(pytester, roots,
                                                               text: str) -> None:
    both(pytester, roots)
    good = entries(roots[0])
    for root in roots:
        (root / "tests" / "digests.json").write_text(text)
    cli_root, plugin_root = roots
    c, _, c_err = cli(cli_root)
    p, _, p_text = plugin(pytester, plugin_root)
    assert c == 2 and p == 1
    code = "ledger-corrupt" if "json" in text else "ledger-conflict"
    cli_line = c_err.strip().replace(str(cli_root), "<root>")
    assert cli_line.startswith("nanoframes: <root>/tests/digests.json:") and code in cli_line
    # The same line fails every item, the ledger item included.
    assert p_text.replace(str(plugin_root), "<root>").count(cli_line[len("nanoframes: "):]) >= 3
    for root in roots:
        assert (root / "tests" / "digests.json").read_text() == text  # untouched

    if code == "ledger-conflict":  # markers that do not form whole hunks: refused, kept
        c, _, c_err = cli(cli_root, "--force")
        p, _, p_text = plugin(pytester, plugin_root, "--nf-force")
        assert (c, p) == (2, 1) and "do not form whole hunks" in c_err
        assert "do not form whole hunks" in p_text
        for root in roots:
            assert (root / "tests" / "digests.json").read_text() == text
        return
    (c, c_out, _), (p, p_out, p_text) = both(pytester, roots, ("--force",), ("--nf-force",))
    assert (c, p) == (0, 0)
    assert lines(c_out["verdicts"]) == lines(p_out["verdicts"])
    assert entries(cli_root) == good  # the same readings again
    n = 0  # neither text holds an entry (tests/test_ledger_merge.py counts real ones)
    for root, out in ((cli_root, c_out["replaced"]), (plugin_root, p_out["recorded"]["replaced"])):
        copies = list((root / "tests").glob("digests.json.unreadable-*"))
        assert len(copies) == 1 and copies[0].read_text() == text
        assert out == (f"the ledger could not be read ({code}); kept it as {copies[0].name} "
                       f"and replaced its {n} entr{'y' if n == 1 else 'ies'}")
    assert f"REPLACED the ledger could not be read ({code})" in p_text
