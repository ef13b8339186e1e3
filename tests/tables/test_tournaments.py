"""WiderPoker tournaments on the production path: PostgreSQL, the Celery beat's task, and
transactions committed for real (``transaction=True``). docs/tournaments.md."""

from __future__ import annotations

from collections import defaultdict
from datetime import datetime, timedelta
from typing import Any

import numpy as np
import pytest
from django.contrib.auth.models import User
from django.utils import timezone

from jackpots import services as jackpot_services
from tables.clock import recover_table
from tables.engine.allocation import AllocationConfig, allocate_pool
from tables.models import Entry, Hand, HandStatus, Seat, SeatStatus, Table, TablePhase
from tables.tournaments import services as tournaments
from tables.tournaments.errors import (
    AlreadyRegisteredError,
    NotRegisteredError,
    ReentryLimitError,
    RegistrationClosedError,
    TournamentOverError,
)
from tables.tournaments.models import Entrant, EntrantStatus, Tournament, TournamentRound, TournamentState
from tables.widerpoker.services.play import buy_draw, buy_redeal, set_hold
from tables.widerpoker.services.seating import sit_in, sit_out
from tests.conftest import postgres_only
from tests.tables.tournament_helpers import BeatClock, funded_players, schedule
from wallet import protection
from wallet.errors import InsufficientFundsError, LossLimitError, TimeOutError
from wallet.models import Account, AccountKind, FundsHold, chip_currency
from wallet.selectors import check_books

BANKROLL = 5_000


def _wallets(users: list[User], currency: str = "EUR") -> dict[int, tuple[int, int]]:
    """(balance, held) of each player's wallet."""
    return {
        user_id: (balance, held)
        for user_id, balance, held in Account.objects.filter(
            kind=AccountKind.PLAYER, currency=currency, user__in=users
        ).values_list("user_id", "balance_minor", "held_minor")
    }


def _table(tournament: Tournament) -> int:
    """The id of the tournament's table (every tournament has one from its scheduling)."""
    assert tournament.table_id is not None
    return tournament.table_id


def _assert_books() -> None:
    books = check_books()
    assert books.ok, books


def _chip_histories(tournament: Tournament) -> dict[int, list[tuple[int, int]]]:
    """Each entrant's (hand number, chips after it) from the recorded standings."""
    history: dict[int, list[tuple[int, int]]] = defaultdict(list)
    for number, standings in (
        TournamentRound.objects.filter(tournament=tournament).order_by("number").values_list("number", "standings")
    ):
        for entrant_id, chips, _ in standings:
            history[entrant_id].append((number, chips))
    return history


@postgres_only()
@pytest.mark.django_db(transaction=True)
def test_a_thousand_entrants_play_to_the_end_through_the_beat(monkeypatch: pytest.MonkeyPatch) -> None:
    """1,000 entrants register (buy-ins held), the beat's task starts the tournament, deals
    its hands on one board each, eliminates those whose chips no longer cover the ante,
    ends it after its hands and pays the prizes: the books balance, every entrant's chips
    follow his entries hand by hand, the prizes are the engine's allocation of the pool."""
    now = timezone.now().replace(microsecond=0)
    staff = User.objects.create_user(username="croupier-t", password="x", is_staff=True)
    players = funded_players(1000, currency="EUR", amount_minor=BANKROLL)
    tournament = schedule(now=now, staff_user_id=staff.pk)
    for player in players:
        tournaments.register(tournament_id=tournament.pk, user_id=player.pk, now=now)
    assert {held for _, held in _wallets(players).values()} == {1100}
    _assert_books()

    clock = BeatClock(monkeypatch, now)
    buyers = players[:40]
    for moment in clock.run_until_over(tournament.pk):
        table = Table.objects.select_related("current_hand").get(pk=_table(tournament))
        hand = table.current_hand
        if table.phase == TablePhase.CHANGE and hand is not None and hand.number == 2 and moment < hand.redeal_deadline:
            # Players play through the platform's own purchases, in chips.
            dealt = set(Entry.objects.filter(hand=hand).values_list("user_id", flat=True))
            for player in buyers:
                if player.pk in dealt and not Entry.objects.filter(hand=hand, user=player, draws_bought__gt=1).exists():
                    set_hold(table_id=table.pk, user_id=player.pk, hold=[True, False, True, False, False], now=moment)
                    buy_draw(table_id=table.pk, user_id=player.pk, now=moment)
                    if player.pk % 3 == 0:
                        buy_redeal(table_id=table.pk, user_id=player.pk, now=moment)

    tournament.refresh_from_db()
    assert tournament.state == TournamentState.FINISHED
    assert tournament.hands_played == 5
    _assert_books()

    hands = list(Hand.objects.filter(table_id=_table(tournament)).order_by("number"))
    assert [hand.status for hand in hands] == [HandStatus.SETTLED] * 5
    assert hands[1].draws_minor > 0 and hands[1].redeals_minor > 0
    # Every entrant plays the same board each hand: one hand, one board, every entry in it.
    entries: dict[int, dict[int, tuple[int, int]]] = defaultdict(dict)
    for hand_id, user_id, paid, prize in Entry.objects.filter(hand__in=hands).values_list(
        "hand_id", "user_id", "paid_minor", "prize_minor"
    ):
        entries[hand_id][user_id] = (paid, prize)
    entrants = {entrant.pk: entrant for entrant in Entrant.objects.filter(tournament=tournament)}
    by_user = {entrant.user_id: entrant.pk for entrant in entrants.values()}
    assert hands[0].entry_count == 1000

    # Each entrant's chip history is his entries' story: chips after hand n = chips after
    # hand n-1 - what he paid in hand n (ante, draws, redeals) + what he won in it.
    histories = _chip_histories(tournament)
    eliminated_seen = 0
    for entrant_id, history in histories.items():
        user_id = entrants[entrant_id].user_id
        chips = tournament.starting_chips_minor
        for number, after in history:
            paid, prize = entries[hands[number - 1].pk].get(user_id, (0, 0))
            chips = chips - paid + prize
            assert after == chips, (entrant_id, number)
        entrant = entrants[entrant_id]
        if entrant.status == EntrantStatus.ELIMINATED:
            eliminated_seen += 1
            fell = entrant.eliminated_at_hand
            assert fell is not None and history[-1][0] == fell
            assert history[-1][1] < tournament.ante_for(fell + 1)
            assert not Entry.objects.filter(
                hand__table_id=_table(tournament), hand__number__gt=fell, user_id=user_id
            ).exists()
    assert eliminated_seen > 0
    dealt_per_hand = [hand.entry_count for hand in hands]
    assert dealt_per_hand == sorted(dealt_per_hand, reverse=True) and dealt_per_hand[-1] < 1000

    # The prizes: the engine's allocation of the pool over the final standing.
    assert tournament.prize_pool_minor == 1000 * 1000
    final = sorted(
        entrants.values(),
        key=lambda e: (e.status != EntrantStatus.FINISHED, -(e.eliminated_at_hand or 0), -e.chips_minor),
    )
    keys = [(e.status != EntrantStatus.FINISHED, -(e.eliminated_at_hand or 0), -e.chips_minor) for e in final]
    strengths = np.array([len(set(keys)) - sorted(set(keys)).index(key) for key in keys], dtype=np.int64)
    expected = allocate_pool(tournament.prize_pool_minor, strengths, AllocationConfig(tournament.paid_fraction_bps))
    assert [e.prize_minor for e in final] == expected.prizes_minor.tolist()
    assert [e.place for e in final] == expected.places.tolist()
    assert sum(e.prize_minor for e in final) + tournament.results["breakage_minor"] == tournament.prize_pool_minor
    assert tournament.results["paid_places"] == 150
    wallets = _wallets(players)
    for player in players:
        prize = entrants[by_user[player.pk]].prize_minor
        assert wallets[player.pk] == (BANKROLL - 1100 + prize, 0)
    # The chips are retired: nothing of the tournament's currency is left anywhere.
    assert not Account.objects.filter(currency=chip_currency(tournament.pk)).exclude(balance_minor=0).exists()
    assert Table.objects.get(pk=_table(tournament)).phase == TablePhase.CLOSED


@pytest.mark.django_db(transaction=True)
def test_cancellation_before_the_start_releases_every_hold(now: datetime) -> None:
    players = funded_players(3, currency="EUR", amount_minor=BANKROLL)
    tournament = schedule(now=now)
    for player in players:
        tournaments.register(tournament_id=tournament.pk, user_id=player.pk, now=now)
    tournaments.unregister(tournament_id=tournament.pk, user_id=players[0].pk, now=now)
    with pytest.raises(NotRegisteredError):
        tournaments.unregister(tournament_id=tournament.pk, user_id=players[0].pk, now=now)
    assert _wallets(players)[players[0].pk] == (BANKROLL, 0)
    assert _wallets(players)[players[1].pk] == (BANKROLL, 1100)
    _assert_books()
    tournaments.cancel_tournament(
        tournament_id=tournament.pk, reason="no croupier tonight", staff_user_id=None, now=now
    )
    assert set(_wallets(players).values()) == {(BANKROLL, 0)}
    assert not FundsHold.objects.filter(transfer__isnull=True).exists()
    with pytest.raises(TournamentOverError):
        tournaments.cancel_tournament(tournament_id=tournament.pk, reason="again", staff_user_id=None, now=now)
    assert Table.objects.get(pk=_table(tournament)).phase == TablePhase.CLOSED
    _assert_books()


@pytest.mark.django_db(transaction=True)
def test_cancellation_mid_hand_refunds_buy_ins_fees_and_the_hand(
    monkeypatch: pytest.MonkeyPatch, now: datetime
) -> None:
    players = funded_players(4, currency="EUR", amount_minor=BANKROLL)
    tournament = schedule(now=now, guaranteed_minor=10_000)
    for player in players:
        tournaments.register(tournament_id=tournament.pk, user_id=player.pk, now=now)
    staff = User.objects.create_user(username="cashier-t", password="x", is_staff=True)
    jackpot_services.fund_house_account(
        kind=AccountKind.PROMOTIONS, currency="EUR", amount_minor=20_000, reference="test:promo", staff_user_id=staff.pk
    )
    clock = BeatClock(monkeypatch, tournament.starts_at)
    clock.tick(0)
    table = Table.objects.get(pk=_table(tournament))
    assert table.phase == TablePhase.CHANGE
    tournament.refresh_from_db()
    assert tournament.state == TournamentState.RUNNING
    assert tournament.prize_pool_minor == 10_000  # the guarantee: 4 x 10.00 topped up to 100.00
    buy_draw(table_id=table.pk, user_id=players[0].pk, now=clock.now)
    _assert_books()
    tournaments.cancel_tournament(
        tournament_id=tournament.pk, reason="malfunction of the room", staff_user_id=None, now=clock.now
    )
    assert set(_wallets(players).values()) == {(BANKROLL, 0)}
    hand = Hand.objects.get(table_id=table.pk)
    assert hand.status == HandStatus.CANCELLED
    assert not Account.objects.filter(currency=chip_currency(tournament.pk)).exclude(balance_minor=0).exists()
    assert set(Entrant.objects.filter(tournament=tournament).values_list("status", flat=True)) == {"refunded"}
    assert Table.objects.get(pk=table.pk).phase == TablePhase.CLOSED
    # Every seat left when the table closed, with the time it left (the lobby's and the
    # history's "left" reads order by it).
    seats = list(Seat.objects.filter(table_id=table.pk).values_list("status", "left_at"))
    assert seats and all(status == SeatStatus.LEFT and left == clock.now for status, left in seats)
    _assert_books()


@pytest.mark.django_db(transaction=True)
def test_too_few_entrants_cancel_at_the_start(monkeypatch: pytest.MonkeyPatch, now: datetime) -> None:
    players = funded_players(2, currency="EUR", amount_minor=BANKROLL)
    tournament = schedule(now=now, min_entrants=3)
    for player in players:
        tournaments.register(tournament_id=tournament.pk, user_id=player.pk, now=now)
    clock = BeatClock(monkeypatch, tournament.starts_at - timedelta(seconds=2))
    clock.tick()
    assert Tournament.objects.get(pk=tournament.pk).state == TournamentState.REGISTERING
    clock.tick()
    tournament.refresh_from_db()
    assert tournament.state == TournamentState.CANCELLED
    assert "fewer than 3" in tournament.cancel_reason
    assert set(_wallets(players).values()) == {(BANKROLL, 0)}
    _assert_books()


@pytest.mark.django_db(transaction=True)
def test_registration_refusals(now: datetime) -> None:
    rich, excluded, careful = funded_players(3, currency="EUR", amount_minor=BANKROLL)
    (poor,) = funded_players(1, currency="EUR", amount_minor=500)  # below the price
    protection.set_limit(user_id=careful.pk, kind="loss", currency="EUR", value=1000, now=now)
    tournament = schedule(now=now)
    tournaments.register(tournament_id=tournament.pk, user_id=rich.pk, now=now)
    with pytest.raises(AlreadyRegisteredError):
        tournaments.register(tournament_id=tournament.pk, user_id=rich.pk, now=now)
    protection.take_break(user_id=excluded.pk, kind="time_out", days=1, now=now - timedelta(minutes=1))
    with pytest.raises(TimeOutError):
        tournaments.register(tournament_id=tournament.pk, user_id=excluded.pk, now=now)
    assert not Entrant.objects.filter(user=excluded).exists()
    # His loss limit counts the entry's price (11.00) as staked, as a cash table's ante.
    with pytest.raises(LossLimitError):
        tournaments.register(tournament_id=tournament.pk, user_id=careful.pk, now=now)
    with pytest.raises(InsufficientFundsError):
        tournaments.register(tournament_id=tournament.pk, user_id=poor.pk, now=now)
    _assert_books()
    later = schedule(now=now, registration_opens_at=now + timedelta(seconds=30))
    with pytest.raises(RegistrationClosedError):
        tournaments.register(tournament_id=later.pk, user_id=rich.pk, now=now)
    assert later.state == TournamentState.SCHEDULED
    tournaments.register(tournament_id=later.pk, user_id=rich.pk, now=now + timedelta(seconds=31))
    assert Tournament.objects.get(pk=later.pk).state == TournamentState.REGISTERING


def _fun_tournament(now: datetime, **overrides: Any) -> Tournament:
    values: dict[str, Any] = {
        "mode": "fun",
        "currency": "FUN",
        "buy_in_minor": 100,
        "fee_minor": 0,
        "starting_chips_minor": 2000,
        "hands": 4,
        "antes": [{"from_hand": 1, "ante_minor": 1000}, {"from_hand": 2, "ante_minor": 2000}],
        "hand_paid_fraction_bps": 5000,
        "paid_fraction_bps": 3000,
    } | overrides
    return schedule(now=now, **values)


@pytest.mark.django_db(transaction=True)
def test_elimination_late_registration_and_re_entry(monkeypatch: pytest.MonkeyPatch, now: datetime) -> None:
    """Half of ten entries win hand 1's chip pool; the others (1000 chips left, the ante of
    hand 2 is 2000) are eliminated before hand 2. One re-enters during hand 2 and is dealt
    hand 3; a newcomer registers late; once hand 3 is dealt, registration is closed."""
    players = funded_players(12, currency="FUN", amount_minor=BANKROLL)
    entrants, newcomer, too_late = players[:10], players[10], players[11]
    tournament = _fun_tournament(now, late_registration_hands=3, max_reentries=1)
    for player in entrants:
        tournaments.register(tournament_id=tournament.pk, user_id=player.pk, now=now)
    clock = BeatClock(monkeypatch, tournament.starts_at)
    clock.tick(0)  # the start and hand 1
    while Table.objects.get(pk=_table(tournament)).hands_dealt < 2:
        clock.tick()
    out = list(Entrant.objects.filter(tournament=tournament, status=EntrantStatus.ELIMINATED))
    assert out and all(entrant.eliminated_at_hand == 1 and entrant.chips_minor < 2000 for entrant in out)
    assert all(Seat.objects.get(table_id=_table(tournament), user_id=e.user_id).status == SeatStatus.LEFT for e in out)
    hand2 = Hand.objects.get(table_id=_table(tournament), number=2)
    assert hand2.entry_count == 10 - len(out)
    assert not Entry.objects.filter(hand=hand2, user_id__in=[e.user_id for e in out]).exists()

    again = tournaments.register(tournament_id=tournament.pk, user_id=out[0].user_id, now=clock.now)
    assert again.entry_number == 2 and again.status == EntrantStatus.REGISTERED  # admitted below
    again.refresh_from_db()
    assert again.status == EntrantStatus.PLAYING and again.joined_hand == 3 and again.chips_minor == 2000
    with pytest.raises(AlreadyRegisteredError):
        tournaments.register(tournament_id=tournament.pk, user_id=out[0].user_id, now=clock.now)
    late = tournaments.register(tournament_id=tournament.pk, user_id=newcomer.pk, now=clock.now)
    while Table.objects.get(pk=_table(tournament)).hands_dealt < 3:
        clock.tick()
    hand3 = Hand.objects.get(table_id=_table(tournament), number=3)
    dealt = set(Entry.objects.filter(hand=hand3).values_list("user_id", flat=True))
    assert {out[0].user_id, newcomer.pk} <= dealt
    with pytest.raises(RegistrationClosedError):
        tournaments.register(tournament_id=tournament.pk, user_id=too_late.pk, now=clock.now)
    for _ in clock.run_until_over(tournament.pk):
        pass
    tournament.refresh_from_db()
    assert tournament.state == TournamentState.FINISHED
    # 10 entries, a re-entry and a late one: 12 buy-ins in the pool.
    assert tournament.prize_pool_minor == 12 * 100
    assert (
        sum(Entrant.objects.filter(tournament=tournament).values_list("prize_minor", flat=True))
        + int(tournament.results["breakage_minor"])
        == 1200
    )
    assert Entrant.objects.get(pk=late.pk).place is not None
    seats = Seat.objects.filter(table_id=_table(tournament))
    assert seats.exists() and not seats.exclude(status=SeatStatus.LEFT).exists()
    assert not seats.filter(left_at__isnull=True).exists()
    _assert_books()


@pytest.mark.django_db(transaction=True)
def test_re_entries_are_limited(monkeypatch: pytest.MonkeyPatch, now: datetime) -> None:
    players = funded_players(10, currency="FUN", amount_minor=BANKROLL)
    tournament = _fun_tournament(now, late_registration_hands=3, max_reentries=0)
    for player in players:
        tournaments.register(tournament_id=tournament.pk, user_id=player.pk, now=now)
    clock = BeatClock(monkeypatch, tournament.starts_at)
    clock.tick(0)
    while Table.objects.get(pk=_table(tournament)).hands_dealt < 2:
        clock.tick()
    out = Entrant.objects.filter(tournament=tournament, status=EntrantStatus.ELIMINATED).first()
    assert out is not None
    with pytest.raises(ReentryLimitError):
        tournaments.register(tournament_id=tournament.pk, user_id=out.user_id, now=clock.now)
    _assert_books()


@pytest.mark.django_db(transaction=True)
def test_a_buy_in_the_wallet_cannot_cover_is_refused(now: datetime) -> None:
    (player,) = funded_players(1, currency="EUR", amount_minor=1000)
    tournament = schedule(now=now)
    with pytest.raises(InsufficientFundsError):
        tournaments.register(tournament_id=tournament.pk, user_id=player.pk, now=now)
    assert not Entrant.objects.filter(tournament=tournament).exists()
    assert _wallets([player])[player.pk] == (1000, 0)


@pytest.mark.django_db(transaction=True)
def test_a_guarantee_the_house_cannot_pay_cancels_at_the_start(monkeypatch: pytest.MonkeyPatch, now: datetime) -> None:
    players = funded_players(2, currency="EUR", amount_minor=BANKROLL)
    tournament = schedule(now=now, guaranteed_minor=1_000_000)
    for player in players:
        tournaments.register(tournament_id=tournament.pk, user_id=player.pk, now=now)
    BeatClock(monkeypatch, tournament.starts_at).tick(0)
    tournament.refresh_from_db()
    assert tournament.state == TournamentState.CANCELLED
    assert "guaranteed" in tournament.cancel_reason
    assert set(_wallets(players).values()) == {(BANKROLL, 0)}
    assert Table.objects.get(pk=_table(tournament)).phase == TablePhase.CLOSED
    _assert_books()


@pytest.mark.django_db(transaction=True)
def test_a_hand_that_fails_is_refunded_in_chips_and_does_not_count(
    monkeypatch: pytest.MonkeyPatch, now: datetime
) -> None:
    """A malfunction during a tournament's hand (the clock's recovery, seed 001 Notes 3):
    the hand is cancelled and every chip wagered in it returned; the tournament goes on and
    still plays its number of settled hands."""
    players = funded_players(3, currency="FUN", amount_minor=BANKROLL)
    tournament = _fun_tournament(now, hands=2, antes=[{"from_hand": 1, "ante_minor": 1000}])
    for player in players:
        tournaments.register(tournament_id=tournament.pk, user_id=player.pk, now=now)
    clock = BeatClock(monkeypatch, tournament.starts_at)
    clock.tick(0)
    recover_table(table_id=_table(tournament), now=clock.now, reason="malfunction in the test")
    first = Hand.objects.get(table_id=_table(tournament), number=1)
    assert first.status == HandStatus.CANCELLED
    chips = Account.objects.filter(currency=chip_currency(tournament.pk), kind=AccountKind.PLAYER)
    assert set(chips.values_list("balance_minor", flat=True)) == {2000}
    for _ in clock.run_until_over(tournament.pk):
        pass
    tournament.refresh_from_db()
    assert tournament.state == TournamentState.FINISHED and tournament.hands_played == 2
    statuses = list(
        Hand.objects.filter(table_id=_table(tournament)).order_by("number").values_list("status", flat=True)
    )
    assert statuses == [HandStatus.CANCELLED, HandStatus.SETTLED, HandStatus.SETTLED]
    standings = TournamentRound.objects.get(tournament=tournament, number=1).standings
    assert [row[1] for row in standings] == [2000, 2000, 2000]
    _assert_books()


@pytest.mark.django_db(transaction=True)
def test_a_player_sitting_out_is_not_dealt_and_pays_no_ante(monkeypatch: pytest.MonkeyPatch, now: datetime) -> None:
    """Seed 000, Glossary "Sit out": the screen's Sit out keeps a tournament player out of
    the next hands without an ante; Sit in brings him back."""
    players = funded_players(3, currency="FUN", amount_minor=BANKROLL)
    tournament = _fun_tournament(now, hands=3, antes=[{"from_hand": 1, "ante_minor": 500}])
    for player in players:
        tournaments.register(tournament_id=tournament.pk, user_id=player.pk, now=now)
    clock = BeatClock(monkeypatch, tournament.starts_at)
    clock.tick(0)
    resting = players[0]
    sit_out(table_id=_table(tournament), user_id=resting.pk, now=clock.now)
    while Table.objects.get(pk=_table(tournament)).hands_dealt < 2:
        clock.tick()
    hand2 = Hand.objects.get(table_id=_table(tournament), number=2)
    assert hand2.entry_count == 2 and not Entry.objects.filter(hand=hand2, user=resting).exists()
    sit_in(table_id=_table(tournament), user_id=resting.pk, now=clock.now)
    while Table.objects.get(pk=_table(tournament)).hands_dealt < 3:
        clock.tick()
    assert Entry.objects.filter(hand__table_id=_table(tournament), hand__number=3, user=resting).exists()
    entrant = Entrant.objects.get(tournament=tournament, user=resting)
    after = {
        number: {row[0]: row[1] for row in standings}
        for number, standings in TournamentRound.objects.filter(tournament=tournament).values_list(
            "number", "standings"
        )
    }
    hand1 = Entry.objects.get(hand__table_id=_table(tournament), hand__number=1, user=resting)
    assert after[1][entrant.pk] == 2000 - hand1.paid_minor + hand1.prize_minor
    assert after[2][entrant.pk] == after[1][entrant.pk]  # hand 2 cost him nothing
    _assert_books()
