"""Root conftest: the pytester fixture for the plugin's subprocess tests, a
private frame cache so tests never read or fill the user's cache directory, and
recording allowed where $CI is set (the suite records into temp projects)."""

import pytest

pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True, scope="session")
def _private_frame_cache(tmp_path_factory: pytest.TempPathFactory):
    mp = pytest.MonkeyPatch()
    mp.setenv("NANOFRAMES_CACHE_DIR", str(tmp_path_factory.mktemp("frame-cache")))
    yield
    mp.undo()


@pytest.fixture(autouse=True, scope="session")
def _recording_allowed_in_ci():
    # The suite runs in CI (CI=true) and records into its own temp projects on
    # purpose; the tests of the CI refusal delete this again.
    mp = pytest.MonkeyPatch()
    mp.setenv("NANOFRAMES_RECORD_IN_CI", "1")
    yield
    mp.undo()


def pytest_sessionstart(session: pytest.Session) -> None:
    """Bytecode for the processes the suite starts, once (the controller only).

    Where ``PYTHONDONTWRITEBYTECODE`` is set (CI images and this project's
    machines set it), no process writes bytecode, so each of the hundreds of
    processes the suite starts compiles nanoframes from source, and each pytest
    it starts rewrites the asserts of every installed plugin's modules again
    (hypothesis alone has 73). Both are written once here: the package's
    bytecode (as installing a wheel does) and pytest's rewritten plugin modules
    (one pytest that collects nothing, allowed to write them). Nothing a test
    checks depends on it; tests/test_plugin_shards.py took 39% less CPU time
    (docs/benchmarks.md, "The suite")."""
    import sys

    if hasattr(session.config, "workerinput") or not sys.dont_write_bytecode:
        return
    _write_bytecode()


def _write_bytecode() -> None:
    import compileall
    import os
    import subprocess
    import sys
    import tempfile
    from pathlib import Path

    root = Path(__file__).resolve().parent
    for package in ("nanoframes", "pytest_nanoframes"):
        compileall.compile_dir(root / package, quiet=2, legacy=False, workers=1)
    env = {k: v for k, v in os.environ.items() if k != "PYTHONDONTWRITEBYTECODE"}
    with tempfile.TemporaryDirectory() as empty:
        try:  # best effort: without it every pytest the suite starts is only slower
            subprocess.run([sys.executable, "-m", "pytest", "--collect-only", "-q", "-p",
                            "no:cacheprovider", "--rootdir", empty, empty], cwd=empty, env=env,
                           capture_output=True, timeout=120)
        except (OSError, subprocess.SubprocessError):
            pass
