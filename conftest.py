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
