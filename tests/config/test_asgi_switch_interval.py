"""The ASGI process sets the GIL switch interval it is configured with (config/asgi.py):
at CPython's default 5 ms the event loop thread waited that long for the GIL after each
socket write while the sync thread rendered 5,000 private states (docs/benchmarks.md)."""

from __future__ import annotations

import importlib
import sys

import pytest
from django.test import override_settings


def test_the_asgi_module_sets_the_configured_switch_interval() -> None:
    before = sys.getswitchinterval()
    try:
        sys.setswitchinterval(0.005)
        with override_settings(ASGI_SWITCH_INTERVAL=0.0007):
            import config.asgi

            importlib.reload(config.asgi)
            assert sys.getswitchinterval() == pytest.approx(0.0007)
    finally:
        sys.setswitchinterval(before)
