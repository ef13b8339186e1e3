"""``manage.py seed_demo`` creates the demo tables and staff user once, on the embedded
default only: its staff password is public."""

from __future__ import annotations

from typing import Any

import pytest
from django.contrib.auth.models import User
from django.core.management import call_command
from django.core.management.base import CommandError

from tables.models import Table

pytestmark = pytest.mark.django_db


@pytest.fixture(autouse=True)
def _embedded_default(settings: Any) -> None:
    settings.EMBEDDED_DEFAULT = True


def test_seed_demo_is_idempotent() -> None:
    call_command("seed_demo")
    first = sorted(Table.objects.values_list("name", "mode", "currency"))
    call_command("seed_demo")
    assert sorted(Table.objects.values_list("name", "mode", "currency")) == first
    assert len(first) == 6
    assert {mode for _, mode, _ in first} == {"fun", "cash"}
    holdem = {table.name: table for table in Table.objects.filter(game="holdem").select_related("holdem")}
    assert {(t.mode, t.holdem.bot_seats > 0) for t in holdem.values()} == {("fun", True), ("cash", False)}
    croupier = User.objects.get(username="croupier")
    assert croupier.is_staff and not croupier.is_superuser
    assert list(croupier.groups.values_list("name", flat=True)) == ["Croupiers"]
    assert croupier.check_password("croupier-demo")


def test_seed_demo_keeps_an_existing_table_of_the_same_name() -> None:
    from tables.widerpoker.services.create import create_table

    create_table(
        name="Speedway",
        mode="fun",
        currency="FUN",
        ante_minor=700,
        draw_price_bps=0,
        redeal_price_minor=0,
    )
    call_command("seed_demo")
    assert Table.objects.get(name="Speedway").widerpoker.ante_minor == 700
    assert Table.objects.count() == 6


def test_seed_demo_refuses_a_production_database_and_creates_nobody(settings: Any) -> None:
    settings.EMBEDDED_DEFAULT = False
    with pytest.raises(CommandError, match="embedded default"):
        call_command("seed_demo")
    assert not User.objects.filter(username="croupier").exists()
    assert Table.objects.count() == 0


def test_seed_demo_without_staff_creates_the_tables_only() -> None:
    call_command("seed_demo", "--no-staff")
    assert Table.objects.count() == 6
    assert not User.objects.filter(username="croupier").exists()
