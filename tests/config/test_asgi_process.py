"""The ASGI process's interpreter settings (config/asgi.py): the GIL switch interval it
is configured with, and its garbage collector's thresholds with the loaded modules frozen
out of the collector's reach (docs/deployment.md)."""

from __future__ import annotations

import gc
import importlib
import sys
from collections.abc import Iterator

import pytest
from django.test import override_settings


@pytest.fixture
def interpreter() -> Iterator[None]:
    """Put back what reloading config.asgi changes in this test process."""
    interval, thresholds = sys.getswitchinterval(), gc.get_threshold()
    try:
        yield
    finally:
        sys.setswitchinterval(interval)
        gc.set_threshold(*thresholds)
        gc.unfreeze()


def _reload_asgi() -> None:
    import config.asgi

    importlib.reload(config.asgi)


@pytest.mark.usefixtures("interpreter")
def test_the_asgi_module_sets_the_configured_switch_interval() -> None:
    sys.setswitchinterval(0.005)
    with override_settings(ASGI_SWITCH_INTERVAL=0.0007):
        _reload_asgi()
    assert sys.getswitchinterval() == pytest.approx(0.0007)


@pytest.mark.usefixtures("interpreter")
def test_the_asgi_module_sets_the_configured_collector_thresholds_and_freezes_what_it_loaded() -> None:
    gc.set_threshold(700, 10, 10)
    gc.unfreeze()
    with override_settings(ASGI_GC_THRESHOLDS=(12_345, 6, 78)):
        _reload_asgi()
    assert gc.get_threshold() == (12_345, 6, 78)
    assert gc.get_freeze_count() > 10_000


@pytest.mark.usefixtures("interpreter")
def test_without_thresholds_the_asgi_module_leaves_the_collector_alone() -> None:
    gc.set_threshold(700, 10, 10)
    gc.unfreeze()
    with override_settings(ASGI_GC_THRESHOLDS=None):
        _reload_asgi()
    assert gc.get_threshold() == (700, 10, 10)
    assert gc.get_freeze_count() == 0
