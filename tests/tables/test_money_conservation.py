"""Money is conserved through any sequence of sign-ups, deposits, withdrawals, hands, draws,
redeals, free draws and redeals, jackpot contributions, spin awards and resets, sit-outs,
disconnections and duplicated clock ticks (Hypothesis)."""

from __future__ import annotations

import itertools
from collections.abc import Callable
from datetime import datetime, timedelta
from typing import Any

import pytest
from django.contrib.auth.models import User
from django.utils import timezone
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from config.infra.errors import DomainError
from jackpots import services as jackpot_services
from jackpots.models import Jackpot
from tables.clock import advance_due_tables
from tables.models import Hand, Seat, Table
from tables.widerpoker.services import powerups
from tables.widerpoker.services.create import create_table
from tables.widerpoker.services.play import buy_draw, buy_redeal, set_hold
from tables.widerpoker.services.seating import join_table, leave_table, sit_in, sit_out
from tests.conftest import make_player
from wallet import services as wallet_services
from wallet.models import Account, Currency
from wallet.selectors import check_books

pytestmark = pytest.mark.django_db
_names = itertools.count()

OPERATIONS = (
    "free_draw",
    "free_redeal",
    "sign_up",
    "deposit",
    "withdraw",
    "join",
    "hold",
    "buy_draw",
    "redeal",
    "sit_out",
    "sit_in",
    "leave",
    "disconnect",
    "tick",
    "tick",
    "tick_twice",
)


class World:
    """Two tables (FUN and EUR cash), a croupier, players, and an injected clock."""

    def __init__(self) -> None:
        n = next(_names)
        self.now: datetime = timezone.now()
        self.croupier = User.objects.create_user(username=f"staff{n}", password="x", is_staff=True)
        self.tables: list[Table] = [
            create_table(
                name=f"Fun {n}",
                mode="fun",
                currency="FUN",
                ante_minor=100,
                draw_price_bps=4000,
                redeal_price_minor=70,
                change_seconds=20,
                results_seconds=3,
                redeal_seconds=10,
                rake_bps=700,
            ),
            create_table(
                name=f"Cash {n}",
                mode="cash",
                currency="EUR",
                ante_minor=250,
                draw_price_bps=5200,
                redeal_price_minor=190,
                change_seconds=20,
                results_seconds=3,
                redeal_seconds=10,
                rake_bps=1000,
                paid_fraction_bps=3000,
                min_prize_minor=10,
            ),
        ]
        self.players: list[User] = []
        self.disconnected: set[int] = set()
        # Jackpots on both tables, a spin drawn one hand in three, and free items every hand
        # or two, so the sequences cross contributions, spin awards, resets and promotions.
        for table in self.tables:
            royal = Jackpot.objects.create(
                name=f"Royal {table.pk}", kind="royal", currency=table.currency, contribution_bps=150, reset_minor=300
            )
            bronze = Jackpot.objects.create(
                name=f"Bronze {table.pk}",
                kind="bronze",
                currency=table.currency,
                contribution_bps=80,
                reset_minor=120,
                one_in=3,
                spin_overrides={"max_redeals": 1},
            )
            table.jackpots.set([royal, bronze])
        jackpot_services.fund_house_account(
            kind="reserve", currency="EUR", amount_minor=500, reference=f"reserve-{n}", staff_user_id=self.croupier.pk
        )
        jackpot_services.fund_house_account(
            kind="promotions", currency="EUR", amount_minor=400, reference=f"promo-{n}", staff_user_id=self.croupier.pk
        )
        powerups.save_rules(draw_every_hands=1, redeal_every_hands=2, draw_step=0, redeal_step=0)

    def player(self, who: int) -> User | None:
        return self.players[who % len(self.players)] if self.players else None

    def apply(self, operation: str, who: int, arg: int) -> None:
        table = self.tables[arg % 2]
        player = self.player(who)
        common: dict[str, Any] = {"table_id": table.pk, "now": self.now}
        if operation == "sign_up":
            self.players.append(make_player(f"pl{next(_names)}"))
        elif operation == "tick":
            self.advance(1 + arg * 9)
        elif operation == "tick_twice":
            self.advance(25)
            advance_due_tables(now=self.now)  # a duplicated tick changes nothing
        elif player is None:
            return
        elif operation == "deposit":
            wallet_services.deposit_cash(
                user_id=player.pk,
                currency=Currency.EUR,
                amount_minor=100 * (arg + 1) + 37,
                reason="test deposit",
                staff_user_id=self.croupier.pk,
            )
        elif operation == "withdraw":
            wallet_services.withdraw_cash(
                user_id=player.pk,
                currency=Currency.EUR,
                amount_minor=50 * (arg + 1),
                reason="test withdrawal",
                staff_user_id=self.croupier.pk,
            )
        elif operation == "join":
            join_table(user_id=player.pk, **common)
            self.disconnected.discard(player.pk)
        elif operation == "hold":
            set_hold(user_id=player.pk, hold=[bool(arg & 1), bool(who & 1), True, False, bool(arg & 2)], **common)
        elif operation == "disconnect":
            self.disconnected.add(player.pk)
        elif operation == "free_draw":
            buy_draw(user_id=player.pk, free=True, **common)
        elif operation == "free_redeal":
            buy_redeal(user_id=player.pk, free=True, **common)
        else:
            actions: dict[str, Callable[..., object]] = {
                "buy_draw": buy_draw,
                "redeal": buy_redeal,
                "sit_out": sit_out,
                "sit_in": sit_in,
                "leave": leave_table,
            }
            actions[operation](user_id=player.pk, **common)

    def advance(self, seconds: int) -> None:
        self.now += timedelta(seconds=seconds)
        Seat.objects.exclude(user_id__in=self.disconnected).update(last_seen_at=self.now)
        advance_due_tables(now=self.now)


def balances() -> dict[str, int]:
    return dict(Account.objects.values_list("key", "balance_minor"))


operations = st.lists(
    st.tuples(st.sampled_from(OPERATIONS), st.integers(0, 7), st.integers(0, 3)), min_size=5, max_size=45
)


@settings(
    max_examples=30,
    deadline=None,
    derandomize=True,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(steps=operations)
def test_money_is_conserved_through_any_sequence(db: Any, steps: list[tuple[str, int, int]]) -> None:
    world = World()
    for who in range(4):  # four funded players seated at both tables: hands get dealt
        world.apply("sign_up", who, 0)
        world.apply("deposit", who, 20)
        world.apply("join", who, 0)
        world.apply("join", who, 1)
    for operation, who, arg in steps:
        before = balances()
        try:
            world.apply(operation, who, arg)
        except DomainError:
            assert balances() == before, f"a refused {operation} moved money"
        books = check_books()
        assert books.ok, (operation, books)
    world.advance(60)
    world.advance(60)
    assert Hand.objects.filter(table__in=world.tables).exists(), "the sequence played no hand"
    books = check_books()
    assert books.ok, books
    for account in Account.objects.filter(kind="escrow"):
        settled = not Table.objects.filter(current_hand_id=int(account.key.split(":")[-1]), phase="change").exists()
        if settled:
            assert account.balance_minor == 0, account.key
