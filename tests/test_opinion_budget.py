"""A bad day: every film regresses for one cause (determinism/opinions.py).

Real regressions: small generated films recorded with a preloaded library that
nudges libm one ulp switched off (tests/switched_nudge.py), checked with it
switched on, so every film draws other pixels under the same toolchain. The
check redraws a cause's first two films in the same fresh processes, the rest
share their opinion, the cause is said once with its films, and nothing of a
regression's own verdict, pixels or pictures is dropped. Every command runs in
a child with an address-space limit and a timeout.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import pytest
import switched_nudge
from launched import launched

MEMORY = 4 << 30
FILMS = 4
KEYS = [f"examples/f{n:04d}.nf.svg" for n in range(FILMS)]


def film(n: int) -> str:
    """A small film of its own (160×90, 24 frames): three dashed arcs turning, with
    colours and speeds from ``n`` (ThorVG's sinf/cosf on every frame)."""
    arcs, moves = [], []
    for k in range(3):
        cx, cy = 30 + k * 50, 45
        colour = f"#{(n * 37 + k * 80) % 256:02x}{(n * 91) % 256:02x}{(200 - k * 60) % 256:02x}"
        arcs.append(f'<circle id="a{k}" cx="{cx}" cy="{cy}" r="{16 + (n + k) % 5}" fill="none" '
                    f'stroke="{colour}" stroke-width="5" stroke-dasharray="20 9" '
                    f'stroke-linecap="round"/>')
        turn = 90 + (n * 7 + k * 30) % 270
        moves.append(f'{{"target": "#a{k}", "keyframes": [{{"t": 0, "transform": '
                     f'{{"rotate": 0, "center": [{cx}, {cy}]}}}}, {{"t": 0.8, "transform": '
                     f'{{"rotate": {turn}, "center": [{cx}, {cy}]}}}}]}}')
    return (f'<svg xmlns="http://www.w3.org/2000/svg" data-width="160" data-height="90" '
            f'data-fps="30" data-duration="0.8"><rect width="160" height="90" fill="#111"/>'
            f'{"".join(arcs)}<script type="application/nanoframes+json">'
            f'{{"animations": [{", ".join(moves)}]}}</script></svg>\n')


def _run(root: Path, argv: list[str], **env: str) -> subprocess.CompletedProcess:
    full = {k: v for k, v in os.environ.items()
            if k not in ("EXCUSED_COMPOSITIONS", "NF_NUDGE_WHEN", "NF_CRASH_WHEN")}
    full.update(env, XDG_CACHE_HOME=str(root / ".cache"))
    return subprocess.run(launched(argv, address_space=MEMORY), cwd=root, env=full,
                          capture_output=True, text=True, timeout=600)


@pytest.fixture(scope="module")
def project(tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, Path]:
    """FILMS films recorded with the nudge preloaded, switched off."""
    if not sys.platform.startswith("linux"):
        pytest.skip("LD_PRELOAD: Linux")
    if switched_nudge.compiler() is None:
        pytest.skip("no C compiler here to build the preloaded library")
    library = switched_nudge.build(tmp_path_factory.mktemp("nudge"))
    root = tmp_path_factory.mktemp("p")
    (root / "examples").mkdir()
    (root / "pyproject.toml").write_text(
        '[tool.nanoframes]\n[tool.pytest.ini_options]\ntestpaths = ["examples"]\n')
    for n in range(FILMS):
        (root / "examples" / f"f{n:04d}.nf.svg").write_text(film(n))
    done = _run(root, [sys.executable, "-m", "nanoframes", "digest", "--all", "--record"],
                LD_PRELOAD=str(library))
    assert done.returncode == 0, done.stderr
    return root, library


# Over 10 s under load: four films checked three ways (JSON with artifacts, text,
# pytest), each a fresh process with its own re-renders; one test, one recording.
def test_a_cause_is_redrawn_twice_said_once_and_every_regression_keeps_its_evidence(
        project: tuple[Path, Path]) -> None:
    root, library = project
    on = {"LD_PRELOAD": str(library), "NF_NUDGE_WHEN": "always"}
    digest = [sys.executable, "-m", "nanoframes", "digest", "--all", "--check"]
    done = _run(root, [*digest, "--json", "--artifacts", str(root / "art")], **on)
    assert done.returncode == 1, done.stderr
    verdicts = json.loads(done.stdout)["verdicts"]
    assert [v["key"] for v in verdicts] == KEYS
    assert all(v["verdict"] == "regression" for v in verdicts)
    assert all(v["evidence"]["frames"] for v in verdicts)  # every film's pixels measured
    opinions = [v["opinion"] for v in verdicts]
    cause = opinions[0]["cause"]
    assert cause.endswith(", same scene, different pixels") and cause.startswith("toolchain ")
    assert all(o["cause"] == cause for o in opinions)
    # the first two redrawn (in the same processes), the others share their opinion
    assert [len(o["renders"]) for o in opinions] == [4, 4, 1, 1]
    assert [o["kind"] for o in opinions] == ["reproducible"] * FILMS
    assert [o["shared"] for o in opinions] == [[], [], KEYS[:2], KEYS[:2]]
    manifest = json.loads((root / "art" / "manifest.json").read_text())
    pictured = {f["composition"] for f in manifest["files"] if (root / "art" / f["diff"]).is_file()}
    assert pictured == set(KEYS), manifest  # pictures of every regression, shared or not

    shown = _run(root, digest, **on).stdout.splitlines()
    said = [x for x in shown if x.startswith("opinions: ")]
    assert said == [f"opinions: {FILMS} regressions, one cause ({cause}): reproducible "
                    f"(redrawn: {KEYS[0]}, {KEYS[1]}; the same, not redrawn: {KEYS[2]}, "
                    f"{KEYS[3]})"]
    assert sum(x.startswith("  opinion: reproducible, as the 2 films of its cause redrawn "
                            f"said ({KEYS[0]}, {KEYS[1]}); not redrawn") for x in shown) == 2

    # the plugin: one process's items grouped alike, the cause said once in its section
    tests = _run(root, [sys.executable, "-m", "pytest", "-p", "no:randomly", "-p",
                        "no:cacheprovider", "-q", "--nf-check"], **on)
    assert tests.returncode == 1, tests.stdout + tests.stderr
    said = [x for x in tests.stdout.splitlines() if x.startswith("opinions: ")]
    assert len(said) == 1 and all(key in said[0] for key in KEYS), tests.stdout


def test_past_its_budget_a_check_redraws_no_more_and_says_so(project: tuple[Path, Path]
                                                            ) -> None:
    root, library = project
    script = f"""
from pathlib import Path
from nanoframes.config import load_config
from nanoframes.determinism.ledger import read_ledger
from nanoframes.determinism.opinions import Budget, cause_lines
from nanoframes.determinism.reading import check_one

config = load_config(Path.cwd())
entries = read_ledger(config.ledger_path).entries
budget = Budget(seconds=0.0)  # the first film is always asked; none after it
said = []
for key in {KEYS[:2]!r}:
    verdict, reading = check_one(config.root / key, config=config)
    opinion = budget.consult(verdict, entries[key], reading, config, 3).opinion
    print(key, opinion.kind, len(opinion.renders), opinion.summary)
    said.append((key, opinion.as_dict()))
print(cause_lines(said)[0])
"""
    done = _run(root, [sys.executable, "-c", script], LD_PRELOAD=str(library),
                NF_NUDGE_WHEN="always")
    assert done.returncode == 0, done.stderr
    one, two, cause = done.stdout.splitlines()
    assert one.startswith(f"{KEYS[0]} reproducible 4 reproducible: the same new pixels")
    assert two == (f"{KEYS[1]} unasked 1 not redrawn: this check's second opinions took their "
                   f"budget (0 s of re-renders); `nanoframes digest --check {KEYS[1]}` asks "
                   "for this one alone")
    assert cause.endswith(f": reproducible (redrawn: {KEYS[0]}); not redrawn, past the "
                          f"budget: {KEYS[1]}")


def test_a_shared_or_unasked_opinion_travels_as_json_with_its_verdict() -> None:
    # xdist workers send verdicts as JSON: what a budget decided comes back whole
    from nanoframes.determinism.policy import verdict_from_json, verdict_to_json
    from nanoframes.determinism.second_opinion import Opinion, Render
    from nanoframes.determinism.verdict import Kind, Verdict

    check = (Render("check", ("n0", "n1")),)
    shared = Opinion((3, 7), 2, ("r0", "r1"), check, cause="toolchain 1a, same scene, "
                     "different pixels", shared=(KEYS[0], KEYS[1]),
                     shared_kind="unstable, it moves with locale")
    unasked = Opinion((3,), 1, ("r0",), check[:1], cause="toolchain 1a", unasked="past it")
    for opinion in (shared, unasked):
        verdict = Verdict(KEYS[2], Kind.REGRESSION, differing_frames=opinion.frames,
                          compared_frames=8, opinion=opinion)
        back = verdict_from_json(verdict_to_json(verdict)).opinion
        assert back == opinion and back.summary == opinion.summary
    assert shared.kind == "unstable" and shared.gist == "unstable, it moves with locale"
    assert unasked.kind == "unasked" and unasked.summary == "not redrawn: past it"
