"""Helpers of the tournament tests: many funded players at once, a tournament scheduled as
staff schedule one, and the production clock (the Celery beat's task) driven tick by tick
with an injected time."""

from __future__ import annotations

import itertools
from collections.abc import Iterator
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import pytest
from django.contrib.auth.hashers import make_password
from django.contrib.auth.models import User

from tables import clock, tasks
from tables.tournaments import services as tournaments
from tables.tournaments.models import Tournament, TournamentState
from wallet import services as wallet_services
from wallet.models import AccountKind, TransferKind

_batches = itertools.count()


def funded_players(count: int, *, currency: str, amount_minor: int, prefix: str = "p") -> list[User]:
    """``count`` players with ``amount_minor`` each in ``currency``, deposited in one
    transfer from the cashier (a test's shortcut for ``count`` sign-ups and deposits)."""
    batch = next(_batches)
    password = make_password(None)
    users = User.objects.bulk_create(
        [User(username=f"{prefix}{batch}x{i}", password=password) for i in range(count)], batch_size=2000
    )
    accounts = wallet_services.ensure_player_accounts(user_ids=[user.pk for user in users], currency=currency)
    cashier = wallet_services.ensure_house_account(kind=AccountKind.CASHIER, currency=currency)
    wallet_services.post_transfer_arrays(
        reference=f"test:funding:{batch}",
        kind=TransferKind.DEPOSIT,
        currency=currency,
        account_ids=np.array([cashier.pk, *(accounts[user.pk] for user in users)], dtype=np.int64),
        deltas=np.array([-amount_minor * count, *([amount_minor] * count)], dtype=np.int64),
        memo="test funding",
    )
    return users


def schedule(*, now: datetime, staff_user_id: int | None = None, **overrides: Any) -> Tournament:
    """A cash tournament starting in a minute: buy-in 10.00 + 1.00 fee, 100.00 chips, five
    hands of 5 s with 2 s of standings between them, antes 20.00 then 40.00 from hand 3."""
    values: dict[str, Any] = {
        "name": "Sunday Wide",
        "starts_at": now + timedelta(minutes=1),
        "mode": "cash",
        "currency": "EUR",
        "buy_in_minor": 1000,
        "fee_minor": 100,
        "starting_chips_minor": 10_000,
        "hands": 5,
        "change_seconds": 5,
        "results_seconds": 2,
        "redeal_seconds": 5,
        "antes": [{"from_hand": 1, "ante_minor": 2000}, {"from_hand": 3, "ante_minor": 4000}],
        "draw_price_bps": 5000,
        "redeal_price_minor": 1000,
        "min_entrants": 2,
        "max_entrants": 20_000,
    } | overrides
    return tournaments.schedule_tournament(staff_user_id=staff_user_id, now=now, **values)


class BeatClock:
    """The production clock's task (``tables.tasks.advance_due_tables``, what Celery beat
    sends every second) called with a time the test moves: ``tables.clock.tick`` reads
    ``timezone.now()``, replaced in that module only."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, start: datetime) -> None:
        self.now = start
        outer = self

        class _Zone:
            @staticmethod
            def now() -> datetime:
                return outer.now

        monkeypatch.setattr(clock, "timezone", _Zone)

    def tick(self, seconds: float = 1.0) -> int:
        """Move the time by ``seconds`` and run one beat."""
        self.now += timedelta(seconds=seconds)
        return int(tasks.advance_due_tables())

    def run_until_over(self, tournament_id: int, *, max_ticks: int = 2000) -> Iterator[datetime]:
        """Tick until the tournament is finished or cancelled, yielding the time before each
        tick (the test may act between ticks)."""
        for _ in range(max_ticks):
            state = Tournament.objects.values_list("state", flat=True).get(pk=tournament_id)
            if state in (TournamentState.FINISHED, TournamentState.CANCELLED):
                return
            yield self.now
            self.tick()
        raise AssertionError(f"tournament {tournament_id} still {state} after {max_ticks} ticks")
