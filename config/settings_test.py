"""Test settings: the real settings, made fast and deterministic.

The database and channel layer still follow ``DATABASE_URL`` / ``REDIS_URL``, so CI runs
the suite against PostgreSQL and Redis while a bare checkout runs it on SQLite.
"""

from __future__ import annotations

import os

# The suite runs the production code path (PostgreSQL, Redis) over plain HTTP with a key
# of its own; production settings refuse to load without DJANGO_SECRET_KEY.
os.environ.setdefault("DJANGO_SECRET_KEY", "test-suite-only-key-0123456789abcdefghijklmnopqrstuvwxyz")
os.environ.setdefault("DJANGO_HTTPS", "off")
# The suite runs on PostgreSQL with the local beacon (it cannot reach drand): an explicit
# opt-in that production must never set (docs/deployment.md, "Randomness beacon").
os.environ.setdefault("POKER_BEACON_ALLOW_LOCAL", "1")

from config.settings import *  # noqa: F403

PASSWORD_HASHERS = ["django.contrib.auth.hashers.MD5PasswordHasher"]
# Tests drive the clock themselves with an injected `now`.
TABLE_CLOCK = "off"
# No background heartbeat tasks in the test loops; tests stamp heartbeats themselves.
PRESENCE_HEARTBEAT_SECONDS = 0
# One beacon round a second: a hand settled a second after its deadline has its round.
BEACON_PERIOD_SECONDS = 1
CELERY_TASK_ALWAYS_EAGER = True
# Test processes import config.asgi: their collector keeps CPython's thresholds and freezes
# nothing (tests/config/test_asgi_process.py sets them to see the ASGI process do it).
ASGI_GC_THRESHOLDS = None
# The suite's hands deal in one clock step (algorithm 2) unless a test asks for algorithm 3,
# whose deal waits for the beacon round after the freeze (tests/tables/test_deal_beacon.py).
DEAL_ALGORITHM = 2
# Their chains keep the terminal seed in the database (tests steer hands with it); tests of
# the signer ask for it (tests/tables/test_signer.py).
SIGNER = "database"
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "django.contrib.staticfiles.storage.StaticFilesStorage"},
}
# The purchase writer commits from its own thread and connection, which cannot see a
# test's uncommitted transaction: tests that buy inside one use the per-purchase path; the
# writer's tests (tests/tables/test_purchase_writer.py) turn it on with transaction=True.
PURCHASE_WRITER = os.environ.get("POKER_PURCHASE_WRITER", "inline")
