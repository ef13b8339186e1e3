"""Fixtures of the table tests that start processes of the production path."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from django.conf import settings
from django.db import connection

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture
def celery_processes(tmp_path: Path) -> Iterator[None]:
    """A Celery worker and exactly one beat against the test database, the broker on the
    Redis database of REDIS_URL (each developer's or CI's own index, flushed first)."""
    db = connection.settings_dict
    broker = str(settings.REDIS_URL)
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": "postgres://{}@{}:{}/{}".format(
            db["USER"] or "postgres", db["HOST"] or "127.0.0.1", db["PORT"] or 5432, db["NAME"]
        ),
        "CELERY_BROKER_URL": broker,
        "TABLE_CLOCK": "beat",
    }
    celery = [sys.executable, "-m", "celery", "-A", "config"]
    subprocess.run(["redis-cli", "-u", broker, "flushdb"], check=False, capture_output=True)
    worker = subprocess.Popen(
        [
            *celery,
            "worker",
            "--pool=solo",
            "--loglevel=WARNING",
            "--without-heartbeat",
            "--without-gossip",
            "--without-mingle",
        ],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "worker.log").open("w"),
    )
    beat = subprocess.Popen(
        [*celery, "beat", "--loglevel=WARNING", f"--schedule={tmp_path / 'beat-schedule'}"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=(tmp_path / "beat.log").open("w"),
    )
    try:
        yield
    finally:
        for process in (beat, worker):
            process.terminate()
        for process in (beat, worker):
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()


def wait_for(predicate: Callable[[], bool], timeout: float, what: str) -> None:
    """Poll ``predicate`` every 0.25 s until it holds; AssertionError after ``timeout`` s."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        if predicate():
            return
        time.sleep(0.25)
    raise AssertionError(f"timed out waiting for {what}")
