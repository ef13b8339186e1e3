"""How often a WiderPoker deal reads its players (issue 23, item 2: "fewer reads of the
100,000 players"), through the clock, in real transactions.

Algorithm 3 deals in two clock steps: the freeze (who is dealt in, their names and client
seeds) and, at the deal round, the deal (wallets locked, antes taken). The freeze takes the
names and client seeds from the seat read instead of reading every player again; the deal
finds, locks and reads the wallets by one statement and asks which frozen players left by
one array parameter, not one placeholder per player. The hand itself, its seed and the
books are what they were."""

from __future__ import annotations

import re
from datetime import datetime, timedelta

import pytest
from django.contrib.auth.models import User
from django.db import connection
from django.test.utils import CaptureQueriesContext, override_settings

from handhistory.verification import verify_hand
from tables.clock import advance_table
from tables.engine import fairness
from tables.models import Entry, Hand, HandFreeze, HandStatus, SeedChain, Table
from tables.services import beacon
from tables.services.seating import touch_presence
from tables.widerpoker.services.seating import leave_table
from tests.conftest import make_player
from tests.helpers import create_fun_table, seat_players
from wallet.chain import verify_chain
from wallet.selectors import check_books

ALGORITHM_3 = override_settings(DEAL_ALGORITHM=3)


def _reads(queries: list[dict[str, str]], table: str) -> list[str]:
    """The SELECT statements of ``queries`` that read ``table`` (joined or not)."""
    return [q["sql"] for q in queries if q["sql"].lstrip().upper().startswith(("SELECT", "WITH")) and table in q["sql"]]


def _ids_listed(sql: str) -> int:
    """The most integers one list of ``sql`` holds: an array parameter (``ANY('{…}')`` on
    PostgreSQL, ``json_each('[…]')`` on SQLite) or one placeholder per id (``IN (…)``)."""
    lists = re.findall(r"ANY\('\{([0-9,]*)\}'|json_each\('\[([0-9, ]*)\]'|IN \(([0-9, ]*)\)", sql)
    return max((len([x for x in "".join(found).split(",") if x.strip()]) for found in lists), default=0)


def _step(table: Table, at: datetime) -> list[dict[str, str]]:
    """One clock step of ``table`` at ``at``; the statements it sent."""
    with CaptureQueriesContext(connection) as captured:
        assert advance_table(table_id=table.pk, now=at)
    return captured.captured_queries


def _settle_and_verify(table: Table, hand: Hand) -> None:
    """Settle ``hand`` at its change deadline; the books hold and the hand verifies."""
    assert advance_table(table_id=table.pk, now=hand.change_deadline + timedelta(seconds=3))
    hand.refresh_from_db()
    assert hand.status == HandStatus.SETTLED and check_books().ok
    report = verify_hand(hand_id=hand.pk)
    assert report.ok, report.mismatches


@ALGORITHM_3
@pytest.mark.django_db(transaction=True)
def test_an_algorithm_3_deal_reads_names_seeds_and_wallets_once_per_step(table: Table, now: datetime) -> None:
    players = [make_player(name) for name in ("ana", "ben", "cy", "dee")]
    seat_players(table, players, now)

    freeze_step = _step(table, now)
    freeze = HandFreeze.objects.get(table=table, abandoned_at__isnull=True)
    # The names and client seeds come with the seats: one read of the users (the seat read's
    # join; on PostgreSQL the freeze's one statement, which aggregates them where they are).
    assert len(_reads(freeze_step, "auth_user")) == 1
    assert len(_reads(freeze_step, "tables_playerclientseed")) == 1
    # Who can pay is read without a row lock written into every wallet (no ante is taken then).
    wallets = [sql for sql in _reads(freeze_step, "wallet_account") if _ids_listed(sql) >= 3]
    assert len(wallets) == (1 if connection.vendor == "postgresql" else 2), wallets
    assert not [sql for sql in wallets if "FOR NO KEY UPDATE" in sql or "FOR UPDATE" in sql]

    leave_table(table_id=table.pk, user_id=players[3].pk, now=now)
    at = beacon.time_of(int(freeze.deal_round))
    for user in players[:3]:
        touch_presence(table_id=table.pk, user_id=user.pk, now=at)
    deal_step = _step(table, at)
    # The wallets found, locked and read by one statement on PostgreSQL (``lock_and_read_players``;
    # SQLite finds them, locks them, and the ante locks them again); the frozen players asked
    # about as one array.
    wallet_reads = [sql for sql in _reads(deal_step, "wallet_account") if _ids_listed(sql) >= 3]
    assert len(wallet_reads) == (1 if connection.vendor == "postgresql" else 3), wallet_reads
    if connection.vendor == "postgresql":  # the deal round locks them until the ante is taken
        assert "FOR NO KEY UPDATE" in wallet_reads[0]
    # Who left or sat out during the wait: the table's seats sitting out or left since the
    # freeze, not the frozen players' seats asked by id.
    seat_reads = _reads(deal_step, "tables_seat")
    assert seat_reads and not [sql for sql in seat_reads if _ids_listed(sql) >= 3], seat_reads

    table.refresh_from_db()
    hand = table.current_hand
    assert hand is not None
    # The player who left during the wait pays nothing and stays in the seed; the others' cards hold.
    assert sorted(Entry.objects.filter(hand=hand).values_list("user_id", flat=True)) == sorted(
        u.pk for u in players[:3]
    )
    assert [row["player"] for row in hand.not_dealt] == ["dee"]
    chain = SeedChain.objects.get(pk=freeze.chain_id)
    element = fairness.chain_seed(bytes.fromhex(chain.terminal_seed), chain.length, freeze.chain_index)
    value = beacon.local_value(int(freeze.deal_round))
    assert (
        hand.server_seed
        == fairness.deal_seed(element, table.pk, hand.number, bytes.fromhex(freeze.digest), value).hex()
    )
    names = {int(row[0]): (str(row[1]), str(row[2])) for row in freeze.players}
    assert fairness.client_seeds_digest(list(names.values())).hex() == freeze.digest
    assert {u.username for u in players} == {name for name, _ in names.values()}
    assert verify_chain() == [] and check_books().ok
    _settle_and_verify(table, hand)


@ALGORITHM_3
@pytest.mark.django_db(transaction=True)
def test_a_frozen_player_without_a_client_seed_gets_one_at_the_freeze(
    table: Table, alice: User, bob: User, now: datetime
) -> None:
    """A seat older than joining making the client seed: the freeze gives its player one (stored)
    and freezes it, as reading the players again did."""
    from tables.models import PlayerClientSeed

    seat_players(table, [alice, bob], now)
    PlayerClientSeed.objects.filter(user=bob).delete()
    _step(table, now)
    freeze = HandFreeze.objects.get(table=table, abandoned_at__isnull=True)
    stored = PlayerClientSeed.objects.get(user=bob).seed
    assert [str(row[2]) for row in freeze.players if int(row[0]) == bob.pk] == [stored]


def _drain(user: User, *, leave_minor: int) -> None:
    """Leave ``user`` ``leave_minor`` FUN in his wallet (the rest goes to the house)."""
    from wallet import services as wallet_services
    from wallet.models import AccountKind, Currency, TransferKind
    from wallet.selectors import get_balance_minor

    wallet = wallet_services.ensure_player_account(user_id=user.pk, currency=Currency.FUN)
    rake = wallet_services.ensure_house_account(kind=AccountKind.RAKE, currency=Currency.FUN)
    amount = get_balance_minor(user_id=user.pk, currency=Currency.FUN) - leave_minor
    wallet_services.transfer_between(
        source=wallet, destination=rake, amount_minor=amount, kind=TransferKind.ANTE, reference=f"drain {user.pk}"
    )


@ALGORITHM_3
@pytest.mark.django_db(transaction=True)
def test_the_freeze_reads_a_few_wallets_and_the_deal_round_leaves_out_who_cannot_pay(
    table: Table, now: datetime
) -> None:
    """Issue 23: the freeze asks whether two of the first players can play, not every
    wallet; a frozen player who cannot pay is left out at the deal round, sat out, charged
    nothing, and nobody else's cards change (docs/provably-fair.md 1.9)."""
    from tables.engine.widerpoker import initial_combination_indices
    from tables.models import Seat, SeatStatus
    from tables.widerpoker.services.freezing import FREEZE_SAMPLE
    from wallet.selectors import get_balance_minor

    players = [make_player(f"p{i:02d}") for i in range(FREEZE_SAMPLE + 4)]
    seat_players(table, players, now)
    broke = players[-1]  # past the sample: the freeze cannot know
    _drain(broke, leave_minor=table.widerpoker.ante_minor - 1)

    freeze_step = _step(table, now)
    freeze = HandFreeze.objects.get(table=table, abandoned_at__isnull=True)
    assert len(freeze.players) == len(players)  # the broke player is frozen too
    for read in ("wallet_account", "wallet_suspension", "wallet_exclusion", "wallet_playerlimit"):
        listed = [_ids_listed(sql) for sql in _reads(freeze_step, read)]
        assert listed and max(listed) <= FREEZE_SAMPLE, (read, listed)
    assert Seat.objects.get(table=table, user=broke).status == SeatStatus.ACTIVE

    # During the wait one frozen player sits out; one who had left long before comes back
    # and leaves again (not frozen: nothing to leave out).
    from tables.widerpoker.services.seating import join_table, sit_out

    sit_out(table_id=table.pk, user_id=players[0].pk, now=now)
    late = make_player("late")
    join_table(table_id=table.pk, user_id=late.pk, now=now)
    leave_table(table_id=table.pk, user_id=late.pk, now=now)
    at = beacon.time_of(int(freeze.deal_round))
    for user in players:
        touch_presence(table_id=table.pk, user_id=user.pk, now=at)
    _step(table, at)
    table.refresh_from_db()
    hand = table.current_hand
    assert hand is not None and hand.entry_count == len(players) - 2
    assert not Entry.objects.filter(hand=hand, user__in=[players[0], late]).exists()
    assert get_balance_minor(user_id=broke.pk, currency="FUN") == table.widerpoker.ante_minor - 1
    seat = Seat.objects.get(table=table, user=broke)
    assert (seat.status, seat.status_reason) == (SeatStatus.SITTING_OUT, "insufficient funds")
    assert sorted((row["player"], row["reason"], row["frozen"]) for row in hand.not_dealt) == sorted(
        [(broke.username, "insufficient funds", True), (players[0].username, "sitting out", True)]
    )
    # Everyone else holds the cards of the full frozen list.
    everyone = [str(name) for _, name, _ in freeze.players]
    seed = bytes.fromhex(hand.server_seed)
    combos = initial_combination_indices(seed, len(everyone)).tolist()
    full = {everyone[i]: combos[at] for at, i in enumerate(fairness.entry_order(seed, everyone))}
    dealt = dict(Entry.objects.filter(hand=hand).values_list("user__username", "initial_combination"))
    assert dealt == {name: combo for name, combo in full.items() if name not in (broke.username, players[0].username)}
    assert check_books().ok
    _settle_and_verify(table, hand)


@ALGORITHM_3
@pytest.mark.django_db(transaction=True)
def test_when_the_first_players_cannot_play_every_wallet_is_read_and_they_sit_out_at_the_freeze(
    table: Table, now: datetime
) -> None:
    """Fewer than two of the first ``FREEZE_SAMPLE`` can pay: the freeze reads every wallet
    (as before issue 23), sits out who cannot pay and freezes the others; with fewer than two
    payers in all, the table waits and freezes nothing."""
    from tables.models import Seat, SeatStatus
    from tables.widerpoker.services.freezing import FREEZE_SAMPLE

    players = [make_player(f"q{i:02d}") for i in range(FREEZE_SAMPLE + 2)]
    seat_players(table, players, now)
    ante = table.widerpoker.ante_minor
    for user in players[1:FREEZE_SAMPLE]:
        _drain(user, leave_minor=ante - 1)
    payers = [players[0], *players[FREEZE_SAMPLE:]]

    _step(table, now)
    freeze = HandFreeze.objects.get(table=table, abandoned_at__isnull=True)
    assert sorted(int(row[0]) for row in freeze.players) == sorted(user.pk for user in payers)
    sat_out = Seat.objects.filter(table=table, status=SeatStatus.SITTING_OUT, status_reason="insufficient funds")
    assert sat_out.count() == FREEZE_SAMPLE - 1

    # A table of one payer: nothing freezes, and who cannot pay sits out.
    other = create_fun_table(name="Other Rail")
    few = [make_player(f"r{i}") for i in range(3)]
    seat_players(other, few, now)
    for user in few[1:]:
        _drain(user, leave_minor=ante - 1)
    _step(other, now)
    assert not HandFreeze.objects.filter(table=other).exists()
    assert dict(Seat.objects.filter(table=other).values_list("user_id", "status")) == {
        few[0].pk: SeatStatus.ACTIVE,
        few[1].pk: SeatStatus.SITTING_OUT,
        few[2].pk: SeatStatus.SITTING_OUT,
    }


@ALGORITHM_3
@pytest.mark.django_db(transaction=True)
def test_a_leave_stamped_a_little_before_the_freeze_by_a_lagging_clock_still_counts(
    table: Table, now: datetime
) -> None:
    """Another process's clock may lag the clock's: a frozen player's leave stamped seconds
    before ``frozen_at`` still leaves him out (``AWAY_CLOCK_MARGIN``)."""
    players = [make_player(name) for name in ("ann", "bo", "cid")]
    seat_players(table, players, now)
    _step(table, now)
    freeze = HandFreeze.objects.get(table=table, abandoned_at__isnull=True)
    leave_table(table_id=table.pk, user_id=players[2].pk, now=now - timedelta(seconds=3))
    at = beacon.time_of(int(freeze.deal_round))
    for user in players[:2]:
        touch_presence(table_id=table.pk, user_id=user.pk, now=at)
    _step(table, at)
    table.refresh_from_db()
    assert table.current_hand is not None
    assert sorted(Entry.objects.filter(hand=table.current_hand).values_list("user_id", flat=True)) == sorted(
        u.pk for u in players[:2]
    )
    assert [(row["player"], row["reason"]) for row in table.current_hand.not_dealt] == [("cid", "left")]


@ALGORITHM_3
@pytest.mark.django_db(transaction=True)
def test_the_freeze_made_in_postgresql_equals_the_freeze_made_in_python(
    now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Differential: the same seats frozen by the database's one statement
    (``_freeze_in_database``) and by the general path in Python give the same frozen players
    in the same order, the same digest (names sorted by code point, non-ASCII ones included)
    and the same ``not_dealt``; a player without a client seed gets one either way."""
    from tables.models import PlayerClientSeed, Seat, SeatStatus
    from tables.widerpoker.services import lifecycle
    from tables.widerpoker.services.seating import sit_out

    if connection.vendor != "postgresql":
        pytest.skip("the freeze in the database is PostgreSQL's")
    names = ["zoë", "Ωmega", "ana", "Émile", "bob", "ñandú", "carl", "dee", "ed"]
    players = [make_player(name) for name in names]
    tables = [create_fun_table(name="Made in SQL"), create_fun_table(name="Made in Python")]
    for table in tables:
        seat_players(table, players, now)
        sit_out(table_id=table.pk, user_id=players[3].pk, now=now)  # "Émile" sits out
        Seat.objects.filter(table=table, user=players[5]).update(last_seen_at=now - timedelta(minutes=5))
    PlayerClientSeed.objects.filter(user=players[7]).delete()  # "dee": a seat older than joining's seed

    _step(tables[0], now)
    monkeypatch.setattr(lifecycle, "_freeze_in_database", lambda table, *, now, not_before=None: False)
    _step(tables[1], now)
    made = [HandFreeze.objects.get(table=table, abandoned_at__isnull=True) for table in tables]

    assert made[0].players == made[1].players
    assert [row[1] for row in made[0].players] == [n for n in names if n not in ("Émile", "ñandú")]
    assert made[0].digest == made[1].digest
    frozen = [(str(row[1]), str(row[2])) for row in made[0].players]
    assert made[0].digest == fairness.client_seeds_digest(frozen).hex()
    assert (
        made[0].not_dealt
        == made[1].not_dealt
        == [
            {"player": "ñandú", "reason": "disconnected"},
            {"player": "Émile", "reason": "sit out"},
        ]
    )
    for table in tables:
        seat = Seat.objects.get(table=table, user=players[5])
        assert (seat.status, seat.status_reason, seat.left_at) == (SeatStatus.LEFT, "disconnected", now)
    assert PlayerClientSeed.objects.filter(user=players[7]).count() == 1


@ALGORITHM_3
@pytest.mark.django_db(transaction=True)
def test_a_freeze_given_up_at_its_insert_gives_back_its_chain_index(
    now: datetime, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Players leaving between the freeze's first look and its insert leave fewer than two:
    the chain index taken for that freeze goes back (a savepoint), so the freeze made next
    takes the same index a table without the race takes, and no chain element is skipped."""
    from tables.widerpoker.services import freezing

    if connection.vendor != "postgresql":
        pytest.skip("the freeze in the database is PostgreSQL's")
    players = [make_player(name) for name in ("fay", "gus")]
    raced, plain = create_fun_table(name="Raced"), create_fun_table(name="Plain")
    for table in (raced, plain):
        seat_players(table, players, now)
    _step(plain, now)

    def none_left(table: Table, params: dict[str, object], *, now: datetime) -> None:
        raise freezing._NotFrozenError

    with monkeypatch.context() as patch:
        patch.setattr(freezing, "_insert_freeze", none_left)
        # The database path gives up at its insert; the general path, run next, freezes.
        _step(raced, now)
    frozen = {table: HandFreeze.objects.get(table=table, abandoned_at__isnull=True) for table in (raced, plain)}
    assert frozen[raced].chain_index == frozen[plain].chain_index
    assert SeedChain.objects.get(table=raced).next_index == SeedChain.objects.get(table=plain).next_index
