"""The plugin's cost where it has nothing to do, and its CPUs under pytest-xdist:
each worker pipelines only with two CPUs of its own, ``-n auto`` counts the CPUs
this process may use, and the verdicts and frames are those of a serial run."""

from __future__ import annotations

import json
import os

import pytest

from nanoframes.frames import workers

COMPOSITION = """\
<svg xmlns="http://www.w3.org/2000/svg" data-width="48" data-height="32"
     data-fps="6" data-duration="1">
  <rect id="box" x="0" y="0" width="12" height="12" fill="{fill}"/>
  <script type="application/nanoframes+json">
    {{"animations": [{{"target": "#box",
      "keyframes": [{{"t": 0, "x": 0}}, {{"t": 0.5, "x": 36}}]}}]}}
  </script>
</svg>
"""

# In every process of the session (controller and workers): what it had loaded
# and what one Film would do, written where the test can read it.
SPY = """
import json, multiprocessing, os, sys

def pytest_sessionfinish(session):
    from nanoframes.frames import workers
    out = os.environ.get("NF_SPY_DIR")
    if not out:
        return
    name = getattr(session.config, "workerinput", {}).get("workerid", "main")
    film_threads = None
    if "nanoframes.frames.film" in sys.modules:
        film_threads = workers.spare_threads(1)
    with open(os.path.join(out, name + ".json"), "w") as fh:
        json.dump({"thorvg": [m for m in ("thorvg_python", "nanoframes.engine.raster",
                                          "numpy") if m in sys.modules],
                   "children": len(multiprocessing.active_children()),
                   "pipeline": film_threads, "cpus": workers.available_cpus()}, fh)
"""


def project(pytester: pytest.Pytester, names: tuple[str, ...]) -> None:
    pytester.makefile(".toml", pyproject='[tool.nanoframes]\nledger = "digests.json"\n'
                      '[tool.pytest.ini_options]\naddopts = "-p no:cacheprovider"\n')
    pytester.makeconftest(SPY)
    for n, name in enumerate(names):
        (pytester.path / f"{name}.nf.svg").write_text(
            COMPOSITION.format(fill=f"#{40 * n:02x}8040"))


def spied(pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch, *args: str
          ) -> tuple[pytest.RunResult, dict[str, dict]]:
    spy = pytester.path / "spy"
    spy.mkdir(exist_ok=True)
    for old in spy.glob("*.json"):
        old.unlink()
    monkeypatch.setenv("NF_SPY_DIR", str(spy))
    result = pytester.runpytest_subprocess(*args)
    return result, {p.stem: json.loads(p.read_text()) for p in spy.glob("*.json")}


def test_nothing_to_check_loads_no_thorvg_and_starts_no_worker(
        pytester: pytest.Pytester, monkeypatch: pytest.MonkeyPatch) -> None:
    project(pytester, ())
    pytester.makepyfile(test_plain="def test_ok():\n    pass\n")
    result, seen = spied(pytester, monkeypatch, "--nf-check")
    result.assert_outcomes(passed=1)
    assert seen["main"]["thorvg"] == [] and seen["main"]["children"] == 0
    assert "nanoframes" in result.stdout.str()  # the header line still names the toolchain


def test_the_pipeline_runs_only_with_two_cpus_per_process(monkeypatch: pytest.MonkeyPatch
                                                          ) -> None:
    for cpus, sharing, expected in ((1, 1, False), (2, 1, True), (2, 2, False),
                                    (4, 2, True), (6, 4, False), (16, 8, True)):
        monkeypatch.setattr(workers, "available_cpus", lambda cpus=cpus: cpus)
        workers.share_cpus(sharing)
        try:
            assert workers.spare_threads(1) is expected, (cpus, sharing)
        finally:
            workers.share_cpus(1)


def test_xdist_workers_match_a_serial_run(pytester: pytest.Pytester,
                                          monkeypatch: pytest.MonkeyPatch) -> None:
    names = ("a", "b", "c", "d")
    project(pytester, names)
    pytester.runpytest_subprocess("--nf-record").assert_outcomes(passed=len(names))
    serial, serial_seen = spied(pytester, monkeypatch, "--nf-check", "--nf-report", "s.json")
    parallel, seen = spied(pytester, monkeypatch, "--nf-check", "-n", "2",
                           "--nf-report", "p.json")
    serial.assert_outcomes(passed=len(names) + 1)  # and the ledger item
    parallel.assert_outcomes(passed=len(names) + 1)

    def verdicts(name: str) -> list[tuple]:
        report = json.loads((pytester.path / name).read_text())
        return sorted((v["key"], v["verdict"], v["digest"]) for v in report["verdicts"])

    assert verdicts("s.json") == verdicts("p.json")  # the same frames, the same verdicts
    # the controller only hears verdicts (and names the toolchain in its report):
    # matching ones load no NumPy there and start no process
    assert "numpy" not in seen["main"]["thorvg"] and seen["main"]["children"] == 0
    cpus = workers.available_cpus()
    assert serial_seen["main"]["pipeline"] is (cpus >= 2)
    drew = [w for name, w in seen.items() if name.startswith("gw") and w["pipeline"] is not None]
    assert drew and all(w["pipeline"] is (w["cpus"] >= 4) for w in drew)


def test_n_auto_counts_the_cpus_this_process_may_use(pytester: pytest.Pytester,
                                                     monkeypatch: pytest.MonkeyPatch) -> None:
    if not hasattr(os, "sched_setaffinity"):
        pytest.skip("no CPU affinity on this platform")
    project(pytester, ("a",))
    monkeypatch.delenv("PYTEST_XDIST_AUTO_NUM_WORKERS", raising=False)
    mine = os.sched_getaffinity(0)
    os.sched_setaffinity(0, {min(mine)})  # the subprocess inherits one CPU
    try:
        result = pytester.runpytest_subprocess("--nf-check", "-n", "auto", "--nf-record")
    finally:
        os.sched_setaffinity(0, mine)
    assert "created: 1/1 worker" in result.stdout.str(), result.stdout.str()
