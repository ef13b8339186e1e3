"""Security audit F2: no admin page, lookup, search or ordering reveals a running hand's
secrets (server seed, change keys) or a player's cards before the change phase ends.

The walk covers every changelist of the admin site: for each registered model, every path
to a secret field through up to three relations, with the lookups the auditor used."""

from __future__ import annotations

from collections.abc import Iterator
from datetime import datetime, timedelta

import pytest
from django.contrib import admin
from django.contrib.auth.models import User
from django.core.checks import run_checks
from django.db.models import Model
from django.utils import timezone

from tables.adminkit.secrets import SECRET_FIELDS, lookup_touches_secret
from tables.engine.widerpoker import combination_from_index
from tables.models import Entry, Hand, Table
from tests.helpers import deal_hand, logged_in

pytestmark = pytest.mark.django_db

LOOKUPS = ("", "__startswith", "__lt", "__regex", "__isnull")


def secret_paths(model: type[Model], depth: int = 3, prefix: str = "") -> Iterator[str]:
    """Every ``a__b__secret`` path from ``model`` to a secret field, through at most ``depth``
    relations (forward and reverse)."""
    for name in SECRET_FIELDS.get(model, ()):
        yield prefix + name
    if depth == 0:
        return
    for field in model._meta.get_fields():
        related = field.related_model
        if not (field.is_relation and isinstance(related, type)):
            continue
        # A reverse relation's ``name`` is its query name ("entries").
        yield from secret_paths(related, depth - 1, f"{prefix}{field.name}__")


def changelist_url(model: type[Model]) -> str:
    return f"/admin/{model._meta.app_label}/{model._meta.model_name}/"


@pytest.fixture
def running_hand(fun_table: Table, alice: User, bob: User) -> Hand:
    """A hand whose change phase is still open (dealt just now)."""
    return deal_hand(fun_table, [alice, bob], timezone.now().replace(microsecond=0))


def test_the_walk_reaches_the_secrets_from_other_models() -> None:
    paths = set(secret_paths(Table))
    assert "current_hand__server_seed" in paths
    assert "hands__entries__combination" in paths
    assert "entries__combination" in set(secret_paths(User))


@pytest.mark.parametrize("user_fixture", ["auditor", "croupier"])
def test_no_changelist_accepts_a_lookup_on_a_secret_field(
    running_hand: Hand, user_fixture: str, request: pytest.FixtureRequest
) -> None:
    client = logged_in(request.getfixturevalue(user_fixture))
    checked = 0
    for model in admin.site._registry:
        url = changelist_url(model)
        assert client.get(url).status_code in (200, 403), url
        for path in sorted(set(secret_paths(model))):
            # Every lookup the auditor used on paths of up to one relation; on longer paths
            # (the same fields reached another way) the prefix search of the attack.
            for lookup in LOOKUPS if path.count("__") <= 1 else ("__startswith",):
                value = "True" if lookup == "__isnull" else running_hand.server_seed[:1]
                response = client.get(url, {path + lookup: value})
                # 400: DisallowedModelAdminLookup; 403: no view permission at all.
                assert response.status_code in (400, 403), f"{url}?{path}{lookup} -> {response.status_code}"
                checked += 1
    assert checked > 100  # the walk really went somewhere


def test_allowed_lookups_still_filter(running_hand: Hand, auditor: User) -> None:
    client = logged_in(auditor)
    response = client.get(
        "/admin/tables/hand/", {"status__exact": "change", "table__id__exact": str(running_hand.table_id)}
    )
    assert response.status_code == 200
    assert response.context["cl"].result_count == 1
    response = client.get("/admin/tables/hand/", {"status__exact": "settled"})
    assert response.context["cl"].result_count == 0


def test_no_changelist_orders_by_a_secret_column(running_hand: Hand, auditor: User) -> None:
    client = logged_in(auditor)
    for model, model_admin in admin.site._registry.items():
        response = client.get(changelist_url(model))
        if response.status_code != 200:
            continue
        sortable = model_admin.get_sortable_by(response.wsgi_request)
        assert not [name for name in sortable if isinstance(name, str) and lookup_touches_secret(model, name)], model
        for column, name in enumerate(model_admin.list_display):
            if isinstance(name, str) and lookup_touches_secret(model, name):
                ordered = client.get(changelist_url(model), {"o": str(column)})
                assert ordered.context is None or ordered.context["cl"].get_ordering_field_columns() == {}


def test_the_system_check_refuses_an_admin_that_searches_a_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    assert [m for m in run_checks() if m.id and m.id.startswith("tables.E")] == []
    hand_admin = admin.site._registry[Hand]
    monkeypatch.setattr(hand_admin, "search_fields", ("commitment", "server_seed"))
    monkeypatch.setattr(hand_admin, "fields", (*(hand_admin.fields or ()), "change_keys"))
    ids = {m.id for m in run_checks()}
    assert {"tables.E001", "tables.E003"} <= ids


def entry_cards(hand: Hand, entry: Entry) -> str:
    positions = combination_from_index(entry.combination)
    return " ".join(str(hand.board["columns"][c][p]) for c, p in enumerate(positions))


def test_staff_see_players_cards_only_once_the_change_phase_has_ended(
    running_hand: Hand, alice: User, auditor: User
) -> None:
    client = logged_in(auditor)
    entry = Entry.objects.get(hand=running_hand, user=alice)
    cards = entry_cards(running_hand, entry)
    pages = [
        client.get(f"/admin/tables/entry/{entry.pk}/change/"),
        client.get("/admin/tables/entry/"),
        client.get(f"/admin/tables/hand/{running_hand.pk}/change/"),
    ]
    for page in pages:
        assert page.status_code == 200
        text = page.content.decode()
        assert cards not in text
        assert running_hand.server_seed not in text
    assert "hidden until the change phase ends" in pages[0].content.decode()
    history = client.get(f"/history/hands/{running_hand.pk}/")
    assert history.status_code == 200
    assert history.context["entries"] == []
    assert client.get(f"/api/hands/{running_hand.pk}/").json()["entries_visible"] is False

    # The change deadline passes (the clock has not settled it yet): cards show, the seed not.
    Hand.objects.filter(pk=running_hand.pk).update(change_deadline=timezone.now() - timedelta(seconds=1))
    after = client.get(f"/admin/tables/entry/{entry.pk}/change/").content.decode()
    assert cards in after
    assert running_hand.server_seed not in after
    assert len(client.get(f"/history/hands/{running_hand.pk}/").context["entries"]) == 2


def test_a_player_still_sees_his_own_cards_while_the_hand_runs(running_hand: Hand, alice: User, now: datetime) -> None:
    response = logged_in(alice).get(f"/history/hands/{running_hand.pk}/")
    assert response.context["hand"].viewer_entry is not None
    assert [e.player for e in response.context["entries"]] == []


def test_a_holdem_hands_seeds_are_secret_through_any_relation() -> None:
    """A Hold'em hand's seed gives every hole card: no admin lookup may reach it, directly
    or from a table (an oracle even without showing the value)."""
    from tables.models import HoldemHand, Table

    assert lookup_touches_secret(HoldemHand, "server_seed__startswith")
    assert lookup_touches_secret(Table, "holdem_hands__chain_seed__gt")
    assert not lookup_touches_secret(Table, "holdem_hands__number")
