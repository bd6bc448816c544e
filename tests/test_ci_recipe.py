"""The CI recipe (docs/ci.md, the workflow ``nanoframes init`` writes) run for real
(issue 30, item 3): its shell steps, in order, in a fresh clone of a scratch
repository whose pull request edits a composition without re-recording it.

The steps that need GitHub or the network (``uses:`` actions, the install) are
left out; everything else runs as written, with the variables GitHub sets for a
pull request (``BASE``, ``RUNNER_TEMP``, ``GITHUB_STEP_SUMMARY``, ``CI``). The
check must fail (an unrecorded edit under ``--nf-strict=edits``), and the report
must show the changed frames with pictures: expected (from the base revision the
recipe draws), actual and diff, every image file present.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys
from pathlib import Path

import pytest
import yaml
from scratch_project import env, git, has_git, new_repo, nf, pytest_run

from nanoframes.adopt import workflow

pytestmark = pytest.mark.skipif(not has_git(), reason="git is not installed")

DOC = Path(__file__).resolve().parents[1] / "docs" / "ci.md"


def steps(text: str) -> list[dict]:
    return yaml.safe_load(text)["jobs"]["check"]["steps"]


def test_the_docs_show_the_workflow_init_writes() -> None:
    doc = DOC.read_text()
    shown = re.search(r"```yaml\n(.*?)```", doc, re.S)
    assert shown is not None
    assert shown.group(1) == workflow.render()


def test_the_recipe_reports_a_changed_composition_with_pictures(tmp_path: Path) -> None:
    # The base branch: init, record, commit.
    origin = new_repo(tmp_path / "origin")
    assert nf(origin, "init").returncode == 0
    recorded = pytest_run(origin, "--nf-record")
    assert recorded.returncode == 0, recorded.stdout
    git(origin, "add", "-A")
    git(origin, "commit", "-qm", "nanoframes")
    base = git(origin, "rev-parse", "HEAD").strip()
    # The pull request: an edit of films/a.nf.svg that nobody re-recorded.
    git(origin, "checkout", "-qb", "edit")
    film = origin / "films" / "a.nf.svg"
    film.write_text(film.read_text().replace('width="4"', 'width="6"'))
    git(origin, "commit", "-qam", "wider box")

    # CI: a fresh clone (no frame store), then every local step of the workflow.
    clone = tmp_path / "clone"
    git(tmp_path, "clone", "-q", str(origin), str(clone))
    git(clone, "checkout", "-q", "edit")
    runner_temp = tmp_path / "runner-temp"
    runner_temp.mkdir()
    summary = tmp_path / "step-summary.md"
    variables = env(clone, CI="true", RUNNER_TEMP=str(runner_temp),
                    GITHUB_STEP_SUMMARY=str(summary),
                    PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}")
    text = (clone / workflow.PATH).read_text()
    statuses = {}
    for step in steps(text):
        if "run" not in step or step.get("name") in workflow.NOT_LOCAL:
            continue
        step_env = dict(variables)
        for name, value in (step.get("env") or {}).items():
            assert value == "${{ github.event.pull_request.base.sha }}", value
            step_env[name] = base
        done = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=clone, env=step_env,
                              capture_output=True, text=True, timeout=600)
        statuses[step["name"]] = done
    drawn = statuses["Draw the base revision's frames (the report's expected pictures)"]
    assert drawn.returncode == 0 and "::warning::" not in drawn.stdout, drawn.stdout
    check = statuses["Check (an unrecorded edit fails; a toolchain-only move is an xfail)"]
    assert check.returncode == 1, check.stdout
    assert "fails under --nf-strict=edits" in check.stdout

    # The report: the changed composition's frames with expected / actual / diff.
    report = clone / "nanoframes-report" / "index.html"
    page = report.read_text()
    sources = re.findall(r'<img[^>]* src="([^"]+)"', page)
    changed = [s for s in sources if "films/a.nf.svg" in s]
    for role in ("expected", "actual", "diff"):
        assert any(s.endswith(f"-{role}.png") for s in changed), (role, sources)
    for source in sources:
        assert (report.parent / source).is_file(), source

    # The job summary: the verdict table and the pixel line.
    markdown = summary.read_text()
    assert "**2 compositions: 1 match, 1 changed**" in markdown
    assert re.search(r"^\| `films/a\.nf\.svg` \| 🟡 changed \| source changed \(", markdown,
                     re.M), markdown
    assert re.search(r"^- `films/a\.nf\.svg`: pixels: 2 of 2 frames differ", markdown, re.M), \
        markdown
    assert "accept the changes: `pytest --nf-record`" in markdown
