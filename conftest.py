"""Root conftest: the pytester fixture for the plugin's subprocess tests, and a
private frame cache so tests never read or fill the user's cache directory."""

import pytest

pytest_plugins = ["pytester"]


@pytest.fixture(autouse=True, scope="session")
def _private_frame_cache(tmp_path_factory: pytest.TempPathFactory):
    mp = pytest.MonkeyPatch()
    mp.setenv("NANOFRAMES_CACHE_DIR", str(tmp_path_factory.mktemp("frame-cache")))
    yield
    mp.undo()
