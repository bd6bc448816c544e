"""Root conftest: the pytester fixture for the plugin's subprocess tests."""

pytest_plugins = ["pytester"]
