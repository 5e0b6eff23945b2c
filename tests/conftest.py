"""Session set-up shared by every test module."""

from __future__ import annotations

import os
import shutil
import tempfile

_CACHE = "SSSP_HIERARCHY_CACHE"


def pytest_configure(config) -> None:
    """Hierarchies built by the tests go to a folder of this session, not the user's cache."""
    if _CACHE not in os.environ:
        os.environ[_CACHE] = tempfile.mkdtemp(prefix="sssp-test-hierarchies-")
        config._sssp_hierarchy_cache = os.environ[_CACHE]


def pytest_unconfigure(config) -> None:
    folder = getattr(config, "_sssp_hierarchy_cache", None)
    if folder:
        shutil.rmtree(folder, ignore_errors=True)
        os.environ.pop(_CACHE, None)
