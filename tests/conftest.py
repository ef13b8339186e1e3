"""Project fixtures: personas and money that enters only through the real wallet services, a
fun table, and an injected clock. Plain helpers are in ``tests/helpers.py``."""

from __future__ import annotations

import os
from collections.abc import Iterator
from datetime import datetime
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import Group, User
from django.db import connection
from django.utils import timezone
from hypothesis import settings as hypothesis_settings

from tables.models import Table
from tests.helpers import create_fun_table
from wallet import services as wallet_services

# Property tests measure correctness, not speed: a loaded CI machine must not fail them on
# Hypothesis's per-example deadline (speed is the benchmarks' business, bench/).
hypothesis_settings.register_profile("suite", deadline=None)
hypothesis_settings.load_profile("suite")

# Django refuses sync ORM calls from a running event loop; async tests (Channels, Playwright)
# reach the ORM from helper threads, and the live-server fixture needs this switched off.
os.environ.setdefault("DJANGO_ALLOW_ASYNC_UNSAFE", "true")


@pytest.fixture(autouse=True)
def _purchases_captured_at_once(settings: Any) -> None:
    """Tests read the escrow, the hand's totals and the statement right after a purchase:
    capture each purchase at once on both databases. The batched capture (PostgreSQL's
    production default) has its own tests (tests/tables/test_massive_purchases.py)."""
    settings.PURCHASE_CAPTURE = "inline"


@pytest.fixture(scope="session", autouse=True)
def _close_stray_connections(django_db_setup: Any, django_db_blocker: Any) -> Iterator[None]:
    """Consumers, live servers and worker threads open database connections of their own;
    end them before the test database is dropped (PostgreSQL refuses to drop it otherwise)."""
    yield
    with django_db_blocker.unblock():
        if connection.vendor == "postgresql":
            with connection.cursor() as cursor:
                cursor.execute(
                    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity "
                    "WHERE datname = current_database() AND pid <> pg_backend_pid()"
                )


@pytest.fixture
def fresh_throttle_counters() -> Iterator[None]:
    """API rate limits count in the cache (config/infra/throttles.py): the test starts with none
    used and leaves none behind. Modules that call the API use it
    (``pytest.mark.usefixtures("fresh_throttle_counters")``)."""
    from django.core.cache import cache

    cache.clear()
    yield
    cache.clear()


def make_player(username: str) -> User:
    """A player as sign-up makes one: a user with the sign-up FUN chips granted."""
    user = User.objects.create_user(username=username, password="correct horse battery")
    wallet_services.grant_signup_fun_chips(user_id=user.pk)
    return user


@pytest.fixture
def alice(db: Any) -> User:
    return make_player("alice")


@pytest.fixture
def bob(db: Any) -> User:
    return make_player("bob")


@pytest.fixture
def carol(db: Any) -> User:
    return make_player("carol")


@pytest.fixture
def croupier(db: Any) -> User:
    """Casino staff as production makes them: a member of the Croupiers group
    (``create_staff_groups``; docs/deployment.md, "Staff roles"), not a superuser, so every
    test that acts as a croupier goes through the role's own permissions."""
    from backoffice.management.commands.create_staff_groups import ensure_staff_groups

    ensure_staff_groups()
    user = User.objects.create_user(username="croupier", password="croupier pass 1", is_staff=True)
    user.groups.add(Group.objects.get(name="Croupiers"))
    return user


@pytest.fixture
def auditor(db: Any) -> User:
    """Read-only staff as production makes them: a member of the Auditors group (may view
    hands, the books and every record, change nothing), not a superuser."""
    from backoffice.management.commands.create_staff_groups import ensure_staff_groups

    ensure_staff_groups()
    user = User.objects.create_user(username="auditor", password="auditor pass 1", is_staff=True)
    user.groups.add(Group.objects.get(name="Auditors"))
    return user


@pytest.fixture
def now() -> datetime:
    """The injected clock: the current time to the second."""
    return timezone.now().replace(microsecond=0)


@pytest.fixture
def table(db: Any) -> Table:
    """A fun table named "Test Rail" (see ``create_fun_table``)."""
    return create_fun_table()


@pytest.fixture
def fun_table(db: Any) -> Table:
    """The same fun table as ``table``, under the name the hand-history and back-office tests use."""
    return create_fun_table()


def postgres_only() -> pytest.MarkDecorator:
    return pytest.mark.skipif(not settings.USING_POSTGRES, reason="needs PostgreSQL (DATABASE_URL)")
