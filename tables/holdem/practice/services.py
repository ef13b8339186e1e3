"""BigHoldem practice games (seed 004, ``004_9968266ac0af5695.txt``): a player against 1-9
house bots, or an automatic game of bots only, on a private fun Hold'em table played on the
shared clock like any Hold'em table (``tables.holdem.services.deal``).

* **Setup** (*assetto*): players (*giocatori*, 2-10), hands (*mani*), maximum duration
  (*durata*), raises per betting round (*rilanci*, default 3), currency label (*moneta*:
  a label on play chips; the table's currency is always FUN), the action timer (*timer*),
  ante (*ante*), limit (*limite*: the betting structure, and the stakes as the starting
  depth), show probabilities (*probabilità*) and the table's felt (*tavolo*). An empty
  nickname is an automatic game (*Gioco automatico*).
* **Chips**: each player starts with the engine's ``starting_stack_minor`` (seed 004,
  *Somma*) in FUN chips of 100 minor units (``UNIT_MINOR``). They are issued by the FUN
  cashier into the table's escrow and go back to it when a player is eliminated and at
  the end (ledger transfers of kinds ``buy_in``/``cash_out`` with ``practice:``
  references): no wallet of the player is ever debited or credited (seed 004: "Non si
  vincono soldi, ma nemmeno si perdono").
* **Levels**: before every hand the minimum chip is the engine's ``blind_level`` for the
  players left (seed 004, *Fiches*, *Eliminazione*: the chip value rises as players are
  eliminated); small blind one minimum, big blind two, ante one if set; the fixed-limit
  upper stake is twice the big blind.
* **Elimination** (*Eliminazione*): the engine's ``eliminate`` before every hand; the seat
  leaves the table and its chips return to the cashier.
* **End** (*PRE-FLOP*, *Termine del gioco*): one player left, the hands played, the time
  up (the engine's ``is_over``), the person eliminated, or the person stops.
* **Leaderboard** (*Termine del gioco*): interactive games only, people only, by average
  win per hand (the engine's ``leaderboard``); see ``list_practice_leaderboard``.

``prepare_practice_hand`` is called by the clock (``deal._start_hand_or_wait``) with the
table row locked and no hand running. docs/holdem-tables.md, "Practice games (BigHoldem)".
"""

from __future__ import annotations

import uuid
from datetime import datetime, timedelta

from django.conf import settings
from django.contrib.auth.models import User
from django.db import transaction
from django.db.models import Count, Sum

from tables.engine.holdem import PERSONALITIES
from tables.engine.holdem.bigholdem import (
    TableState,
    blind_level,
    eliminate,
    is_over,
    practice_draws,
    starting_stack_minor,
)
from tables.errors import (
    PracticeFullError,
    PracticeLimitError,
    PracticeNotFoundError,
    PracticeNotYoursError,
    PracticeOverError,
    PracticeSetupError,
)
from tables.holdem.practice.setup import (
    STAKES,
    UNIT_MINOR,
    PracticeSetup,
    validate_practice_setup,
)
from tables.holdem.services import hands, money
from tables.holdem.services.conditions import open_holdem_table
from tables.holdem.services.table_row import save_holdem_table
from tables.models import (
    HoldemConditions,
    HoldemHand,
    HoldemHandPlayer,
    HoldemHandStatus,
    PracticeEnd,
    PracticeGame,
    PracticeResult,
    PracticeStatus,
    Seat,
    SeatStatus,
    SeedChain,
    Table,
    TableMode,
    TablePhase,
)
from tables.services.presence import is_connected
from wallet import protection
from wallet import services as wallet_services
from wallet.models import AccountKind, Currency, TransferKind

BOT_PREFIX = "practicebot-"
"""Practice bots are inactive users ``practicebot-1 .. practicebot-10`` (they cannot log in)."""

ABANDON_AFTER = timedelta(minutes=5)
"""An interactive game whose player has been away this long ends (``abandoned``) at the
next deal instead of letting the bots play on without him."""


def _bot_user(k: int) -> User:
    user = User.objects.filter(username=f"{BOT_PREFIX}{k}").first()
    if user is None:
        user = User.objects.create_user(username=f"{BOT_PREFIX}{k}", password=None, is_active=False)
    return user


def _chips_reference(table: Table, seat: Seat, what: str) -> str:
    return f"practice:{what}:{table.pk}:{seat.pk}:{uuid.uuid4().hex[:12]}"


def _issue_chips(table: Table, seat: Seat, amount_minor: int) -> None:
    """Practice chips from the FUN cashier into the table's escrow, onto the seat's stack."""
    wallet_services.transfer_between(
        source=wallet_services.ensure_house_account(kind=AccountKind.CASHIER, currency=Currency.FUN),
        destination=money.table_escrow(table),
        amount_minor=amount_minor,
        kind=TransferKind.BUY_IN,
        reference=_chips_reference(table, seat, "issue"),
        memo=f"Practice chips at {table.name} (from the FUN cashier, no wallet involved)",
    )
    Seat.objects.filter(pk=seat.pk).update(stack_minor=amount_minor)
    seat.stack_minor = amount_minor


def _return_chips(table: Table, seat: Seat) -> None:
    """The seat's practice chips back from the escrow to the FUN cashier."""
    amount = int(seat.stack_minor)
    if amount > 0:
        wallet_services.transfer_between(
            source=money.table_escrow(table),
            destination=wallet_services.ensure_house_account(kind=AccountKind.CASHIER, currency=Currency.FUN),
            amount_minor=amount,
            kind=TransferKind.CASH_OUT,
            reference=_chips_reference(table, seat, "return"),
            memo=f"Practice chips returned from {table.name} to the FUN cashier",
        )
    Seat.objects.filter(pk=seat.pk).update(stack_minor=0)
    seat.stack_minor = 0


def _check_practice_caps(user_id: int | None, *, now: datetime) -> None:
    """Refuse a new practice game (see ``start_practice_game``): the player's protection
    first, then his running games (his user row locked), then the site's."""
    running = PracticeGame.objects.filter(status=PracticeStatus.RUNNING)
    if user_id is not None:
        list(User.objects.select_for_update().filter(pk=user_id).values_list("pk", flat=True))
        protection.check_can_play(user_id=user_id, currency=Currency.FUN, stake_minor=0, now=now)
        mine = running.filter(owner_id=user_id).count()
        if mine >= settings.PRACTICE_GAMES_PER_PLAYER:
            raise PracticeLimitError(
                f"you already run {mine} practice game(s), the most one account may: stop one first",
                limit=settings.PRACTICE_GAMES_PER_PLAYER,
            )
    if running.count() >= settings.PRACTICE_GAMES_MAX:
        raise PracticeFullError(
            "the site runs as many practice games as it takes: try again when one ends",
            limit=settings.PRACTICE_GAMES_MAX,
        )


@transaction.atomic(durable=True)
def start_practice_game(
    *, user_id: int | None, nickname: str = "", setup: PracticeSetup, now: datetime
) -> PracticeGame:
    """Open a practice game and seat everyone at once: with a ``nickname`` the player
    (``user_id``) plays one seat against ``players - 1`` bots (*Gioco interattivo*); with
    none, ``players`` bots play an automatic game (*Gioco automatico*) that anyone may
    watch. The person's seat and the bots' personalities are drawn from the table's published
    chain anchor (``bigholdem.practice_draws``: the set-up replays from public data, as every
    hand and bot decision replays from its hand's seed) and the first button is seat 0, so the
    first dealer is random (seed 004, *PRE-FLOP*: "Nella prima mano il cartaio è scelto
    casualmente"; ``deal._freeze`` keeps seat 0 for a practice table). The first hand is
    frozen at the clock's next tick and dealt at its beacon round.

    A player who may not play now is refused as at any table (``protection.check_can_play``
    with no stake: SuspendedError, SelfExcludedError, TimeOutError, SessionLimitError;
    security audit L4). Running games are capped (security audit M2): per player
    (``PRACTICE_GAMES_PER_PLAYER``, PracticeLimitError ``practice_limit``; his user row is
    locked, so concurrent starts cannot pass it) and on the site (``PRACTICE_GAMES_MAX``,
    PracticeFullError ``practice_full``; counted without a lock, so concurrent starts may
    pass it by at most the number of requests in flight).

    Raises PracticeFunOnlyError, PracticeSetupError (``field``: the item, or ``nickname``
    when it is too long or there is no player to give it to), the protection errors above,
    PracticeLimitError, PracticeFullError."""
    validate_practice_setup(setup)
    name = nickname.strip()
    if len(name) > 24:
        raise PracticeSetupError("the nickname is at most 24 characters", field="nickname")
    if name and user_id is None:
        raise PracticeSetupError("log in to play; leave the nickname empty to watch bots", field="nickname")
    _check_practice_caps(user_id, now=now)
    stack = starting_stack_minor(setup.players) * UNIT_MINOR
    base = max(1, stack // (2 * STAKES[setup.stakes]))
    level = blind_level(
        base_minor=base, initial_players=setup.players, remaining_players=setup.players, ante=setup.ante
    )
    table = open_holdem_table(
        name=f"Practice {uuid.uuid4().hex[:10]}",
        mode=TableMode.FUN,
        currency=Currency.FUN,
        betting=setup.betting,
        small_blind_minor=level.small_blind_minor,
        big_blind_minor=level.big_blind_minor,
        big_bet_minor=2 * level.big_blind_minor,
        seats=setup.players,
        min_buy_in_minor=level.big_blind_minor,
        max_buy_in_minor=stack * setup.players,
        rake_bps=0,  # BigHoldem takes no rake (seed 004: the whole pot goes to the winner)
        time_bank_seconds=setup.action_seconds - 10,
        show_probabilities=setup.show_probabilities,
        ante_minor=level.ante_minor,
        max_raises=setup.max_raises,
    )
    game = PracticeGame.objects.create(
        table=table,
        owner_id=user_id,
        nickname=name,
        players=setup.players,
        max_hands=setup.max_hands,
        max_minutes=setup.max_minutes,
        max_raises=setup.max_raises,
        currency_label=setup.currency_label,
        action_seconds=setup.action_seconds,
        ante=setup.ante,
        betting=setup.betting,
        stakes=setup.stakes,
        show_probabilities=setup.show_probabilities,
        felt=setup.felt,
        starting_stack_minor=stack,
        base_minor=base,
        minimum_minor=level.minimum_minor,
        started_at=now,
    )
    anchor = SeedChain.objects.filter(table=table).values_list("anchor", flat=True).get()
    draws = practice_draws(
        bytes.fromhex(anchor), setup.players, interactive=bool(name), personalities=len(PERSONALITIES)
    )
    bot = 0
    for position in range(setup.players):
        if position == draws.person:
            assert user_id is not None
            user_for_seat, is_bot, personality = User.objects.get(pk=user_id), False, ""
        else:
            user_for_seat = _bot_user(bot + 1)
            is_bot, personality = True, PERSONALITIES[draws.personalities[bot]].name
            bot += 1
        seat = Seat.objects.create(
            table=table,
            user=user_for_seat,
            status=SeatStatus.ACTIVE,
            joined_at=now,
            last_seen_at=now,
            position=position,
            is_bot=is_bot,
            bot_personality=personality,
        )
        _issue_chips(table, seat, stack)
    Table.objects.filter(pk=table.pk).update(phase_deadline=now, version=1)
    return game


def _seated(table: Table) -> list[Seat]:
    return list(
        Seat.objects.filter(table=table, position__isnull=False)
        .exclude(status=SeatStatus.LEFT)
        .select_related("user")
        .order_by("position")
    )


def _person(game: PracticeGame, seats: list[Seat]) -> Seat | None:
    return next((s for s in seats if not s.is_bot and s.user_id == game.owner_id), None) if game.interactive else None


def prepare_practice_hand(table: Table, conditions: HoldemConditions, *, now: datetime) -> bool:
    """Between two hands of a practice game (the clock holds the table's lock): eliminate
    the stacks that cannot post the big blind (engine ``eliminate``), end the game when
    it is over (returns False: the table is closed), else set the next hand's level
    (engine ``blind_level``) on the table's conditions and return True. The person, back
    after a disconnection, is dealt in again."""
    game = PracticeGame.objects.select_for_update().get(table=table)
    seats = _seated(table)
    stacks = {str(s.pk): int(s.stack_minor) for s in seats}
    out = eliminate(stacks, base_minor=int(game.base_minor), initial_players=game.players)
    settled = HoldemHand.objects.filter(table=table, status=HoldemHandStatus.SETTLED).count()
    for key in out:
        seat = next(s for s in seats if str(s.pk) == key)
        game.eliminations = [
            *game.eliminations,
            {
                "name": _display_name(seat),
                "seat_id": seat.pk,
                "seat": seat.position,
                "hand": settled,
                "stack_minor": int(seat.stack_minor),
            },
        ]
        _return_chips(table, seat)
        hands.release_seat(table, seat, now=now, reason="eliminated")
        table.version += 1
    seats = [s for s in seats if str(s.pk) not in out]
    game.hands_played = settled
    person = _person(game, seats)
    reason = _end_reason(game, seats, person, now=now)
    if reason is not None:
        _finish(game, table, reason, now=now)
        return False
    if person is not None and person.status == SeatStatus.SITTING_OUT and is_connected(person, now=now):
        Seat.objects.filter(pk=person.pk).update(status=SeatStatus.ACTIVE, status_reason="")
    level = blind_level(
        base_minor=int(game.base_minor), initial_players=game.players, remaining_players=len(seats), ante=game.ante
    )
    if level.minimum_minor != game.minimum_minor:
        table.version += 1
    game.minimum_minor = level.minimum_minor
    game.save(update_fields=["eliminations", "hands_played", "minimum_minor"])
    conditions.small_blind_minor = level.small_blind_minor
    conditions.big_blind_minor = level.big_blind_minor
    conditions.big_bet_minor = 2 * level.big_blind_minor
    conditions.ante_minor = level.ante_minor
    conditions.save(update_fields=["small_blind_minor", "big_blind_minor", "big_bet_minor", "ante_minor"])
    return True


def _end_reason(game: PracticeGame, seats: list[Seat], person: Seat | None, *, now: datetime) -> str | None:
    """Why the game ends before the next hand, or None (seed 004, *Termine del gioco*)."""
    state = TableState(
        initial_players=game.players,
        base_minor=int(game.base_minor),
        ante=game.ante,
        stacks=tuple((str(s.pk), int(s.stack_minor)) for s in seats),
        eliminated=(),
        hands=(),
        net_minor=(),
        hands_dealt=game.hands_played,
    )
    elapsed = (now - game.started_at).total_seconds()
    if state.finished:
        return PracticeEnd.ONE_LEFT
    if game.interactive and person is None:
        return PracticeEnd.PLAYER_OUT
    if person is not None and not is_connected(person, now=now) and now - person.last_seen_at > ABANDON_AFTER:
        return PracticeEnd.ABANDONED
    if is_over(state, max_hands=game.max_hands, elapsed_seconds=elapsed, max_seconds=game.max_minutes * 60):
        return (
            PracticeEnd.HANDS
            if game.max_hands is not None and game.hands_played >= game.max_hands
            else PracticeEnd.TIME
        )
    return None


def _display_name(seat: Seat) -> str:
    if seat.is_bot:
        return f"Bot {seat.user.username.removeprefix(BOT_PREFIX)} ({seat.bot_personality})"
    practice = getattr(seat.table, "practice", None)
    return practice.nickname if practice is not None and practice.nickname else seat.user.username


def _finish(game: PracticeGame, table: Table, reason: str, *, now: datetime) -> None:
    """Store every player's result, return the chips to the FUN cashier, free the seats
    and close the table (the caller holds its lock)."""
    everyone = list(Seat.objects.filter(table=table).select_related("user", "table"))
    rows = HoldemHandPlayer.objects.filter(hand__table=table, hand__status=HoldemHandStatus.SETTLED)
    totals = {
        r["user_id"]: r
        for r in rows.values("user_id").annotate(
            hands=Count("id"), finishing=Sum("finishing_minor"), starting=Sum("starting_minor")
        )
    }
    by_pk = {s.pk: s for s in everyone}
    survivors = sorted(
        (s for s in everyone if s.position is not None and s.status != SeatStatus.LEFT),
        key=lambda s: (-int(s.stack_minor), s.position),
    )
    # The last one eliminated places best among the eliminated.
    eliminated = [(by_pk[int(e["seat_id"])], e) for e in reversed(game.eliminations)]
    standings = [(s, int(s.position or 0), None) for s in survivors] + [
        (s, int(e["seat"]), int(e["hand"])) for s, e in eliminated
    ]
    results = []
    for place, (seat, position, out_at) in enumerate(standings, start=1):
        row = totals.get(seat.user_id)
        results.append(
            PracticeResult(
                game=game,
                name=_display_name(seat),
                user_id=None if seat.is_bot else seat.user_id,
                is_bot=seat.is_bot,
                seat=position,
                hands=0 if row is None else row["hands"],
                net_minor=0 if row is None else int(row["finishing"] or 0) - int(row["starting"] or 0),
                final_stack_minor=int(seat.stack_minor),
                place=place,
                eliminated_at_hand=out_at,
            )
        )
    PracticeResult.objects.bulk_create(results)
    for seat in survivors:
        _return_chips(table, seat)
        hands.release_seat(table, seat, now=now, reason="game over")
    game.status = PracticeStatus.FINISHED
    game.end_reason = reason
    game.ended_at = now
    game.save()
    table.is_open = False
    table.phase = TablePhase.CLOSED
    table.phase_deadline = None
    table.version += 1


def _lock_game(game_id: int, user_id: int | None) -> tuple[PracticeGame, Table]:
    """The running game and its table row-locked (table first: the global lock order).
    Raises PracticeNotFoundError, PracticeNotYoursError, PracticeOverError."""
    found = PracticeGame.objects.filter(pk=game_id).values_list("table_id", flat=True).first()
    if found is None:
        raise PracticeNotFoundError(f"no practice game {game_id}", game_id=game_id)
    table = Table.objects.select_for_update().get(pk=found)
    game = PracticeGame.objects.select_for_update().get(pk=game_id)
    if game.owner_id is None or game.owner_id != user_id:
        raise PracticeNotYoursError("only the player who started this game may do that", game_id=game_id)
    if game.status != PracticeStatus.RUNNING:
        raise PracticeOverError("this practice game has ended", game_id=game_id)
    return game, table


@transaction.atomic(durable=True)
def stop_practice_game(*, game_id: int, user_id: int, now: datetime) -> PracticeGame:
    """The player who started the game stops it now (*assetto* is shown again): a hand in
    play is cancelled (the stacks go back to the hand's start, as every cancelled Hold'em
    hand), the results are stored with the end ``abandoned`` (not on the leaderboard) and
    the chips return to the FUN cashier. Raises PracticeNotFoundError,
    PracticeNotYoursError, PracticeOverError."""
    from tables.realtime.push import broadcast_table_on_commit

    game, table = _lock_game(game_id, user_id)
    _stop(game, table, now=now)
    save_holdem_table(table)
    broadcast_table_on_commit(table.pk, refresh_private=True)
    return game


def _stop(game: PracticeGame, table: Table, *, now: datetime) -> None:
    """Stop a running game now (both locks held): cancel the hand in play, store the results
    as ``abandoned``, return the chips, close the table (``is_open`` written here; the
    caller saves the rest of the table row)."""
    hands.cancel_holdem_hand(table=table, reason="practice game stopped", now=now)
    game.hands_played = HoldemHand.objects.filter(table=table, status=HoldemHandStatus.SETTLED).count()
    _finish(game, table, PracticeEnd.ABANDONED, now=now)
    Table.objects.filter(pk=table.pk).update(is_open=False)


def leave_practice_table(table: Table, *, user_id: int, now: datetime) -> None:
    """``leave_holdem_table`` at a practice game's table (the table row locked by the
    caller): the player who started the running game stops it, as ``stop_practice_game``
    (so a suspension, which makes him leave every table, ends his practice game too).
    Raises NotSeatedError for anyone else or a game already over."""
    from tables.errors import NotSeatedError

    game = PracticeGame.objects.select_for_update().get(table=table)
    if game.owner_id != user_id or game.status != PracticeStatus.RUNNING:
        raise NotSeatedError("you do not play this practice game", table_id=table.pk)
    _stop(game, table, now=now)


@transaction.atomic(durable=True)
def resume_practice_game(*, game_id: int, user_id: int, now: datetime) -> None:
    """The player opens his running game: he is seen (presence), dealt in again from the
    next hand if he had been sat out as disconnected, and a table waiting for him deals.
    Raises PracticeNotFoundError, PracticeNotYoursError, PracticeOverError."""
    from tables.realtime.push import broadcast_table_on_commit

    _, table = _lock_game(game_id, user_id)
    Seat.objects.filter(table=table, user_id=user_id).update(last_seen_at=now)
    seat = Seat.objects.filter(table=table, user_id=user_id, status=SeatStatus.SITTING_OUT).first()
    if seat is not None and seat.stack_minor > 0:
        Seat.objects.filter(pk=seat.pk).update(status=SeatStatus.ACTIVE, status_reason="")
    if table.phase == TablePhase.WAITING:
        table.phase_deadline = now
        table.version += 1
        save_holdem_table(table)
        broadcast_table_on_commit(table.pk, refresh_private=True)
