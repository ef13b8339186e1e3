"""Reads of BigHoldem practice games (seed 004): a game, its banner over the Hold'em screen
and the leaderboard of interactive games. Nothing here changes a game
(``tables.holdem.practice.services``).
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime
from fractions import Fraction

from django.db.models import Count, Sum

from tables.engine.holdem.bigholdem import (
    blind_level,
    leaderboard,
)
from tables.errors import (
    PracticeNotFoundError,
)
from tables.holdem.practice.setup import CURRENCY_LABELS
from tables.models import (
    HoldemHand,
    HoldemHandStatus,
    PracticeEnd,
    PracticeGame,
    PracticeResult,
    PracticeStatus,
    Seat,
    SeatStatus,
)


@dataclass(frozen=True)
class PracticeBanner:
    """What the practice banner shows over the Hold'em screen. Amounts in FUN minor units
    (shown with ``currency_label``); ``seconds_left`` of the maximum duration; ``hands_left``
    None without a hand limit; ``eliminations``: (name, hand) in order."""

    game_id: int
    table_id: int
    interactive: bool
    nickname: str
    status: str
    end_reason: str
    currency_label: str
    felt: str
    players: int
    players_left: int
    level: int
    small_blind_minor: int
    big_blind_minor: int
    ante_minor: int
    hands_played: int
    hands_left: int | None
    seconds_left: int
    eliminations: tuple[tuple[str, int], ...]


def get_practice_game(game_id: int) -> PracticeGame:
    """The practice game or PracticeNotFoundError."""
    game = PracticeGame.objects.select_related("table").filter(pk=game_id).first()
    if game is None:
        raise PracticeNotFoundError(f"no practice game {game_id}", game_id=game_id)
    return game


def get_practice_banner(*, game_id: int, now: datetime) -> PracticeBanner:
    """The banner of a practice game (public: nothing in it is secret). The level counts
    from 1 and rises with each elimination that raises the minimum chip (seed 004,
    *Fiches*). Raises PracticeNotFoundError."""
    game = get_practice_game(game_id)
    left = Seat.objects.filter(table_id=game.table_id, position__isnull=False).exclude(status=SeatStatus.LEFT).count()
    running = game.status == PracticeStatus.RUNNING
    played = HoldemHand.objects.filter(table_id=game.table_id, status=HoldemHandStatus.SETTLED).count()
    minimums = sorted(
        {
            blind_level(
                base_minor=int(game.base_minor), initial_players=game.players, remaining_players=r
            ).minimum_minor
            for r in range(max(left, 1), game.players + 1)
        }
    )
    level = minimums.index(int(game.minimum_minor)) + 1 if int(game.minimum_minor) in minimums else 1
    end = game.ended_at if game.ended_at is not None else now
    seconds_left = max(0, int(game.max_minutes * 60 - (end - game.started_at).total_seconds())) if running else 0
    return PracticeBanner(
        game_id=game.pk,
        table_id=game.table_id,
        interactive=game.interactive,
        nickname=game.nickname,
        status=game.status,
        end_reason=game.end_reason,
        currency_label=CURRENCY_LABELS.get(game.currency_label, game.currency_label),
        felt=game.felt,
        players=game.players,
        players_left=left if running else sum(1 for r in game.results.all() if r.eliminated_at_hand is None),
        level=level,
        small_blind_minor=int(game.minimum_minor),
        big_blind_minor=2 * int(game.minimum_minor),
        ante_minor=int(game.minimum_minor) if game.ante else 0,
        hands_played=played,
        hands_left=None if game.max_hands is None else max(0, game.max_hands - played),
        seconds_left=seconds_left,
        eliminations=tuple((str(e["name"]), int(e["hand"])) for e in game.eliminations),
    )


@dataclass(frozen=True)
class LeaderboardLine:
    """One nickname on the public practice leaderboard: ``score_minor`` is the average win
    per hand in FUN minor units (an exact fraction, rounded only for display)."""

    place: int
    nickname: str
    games: int
    hands: int
    net_minor: int
    score_minor: Fraction


def list_practice_leaderboard(*, limit: int = 100) -> tuple[LeaderboardLine, ...]:
    """The public leaderboard (seed 004, *Termine del gioco*: "Al termine delle partite
    interattive si ottiene l'aggiornamento della classifica ... la vincita totale divisa
    per il numero di mani"): per nickname, the total net winnings of his finished
    interactive games divided by the hands he was dealt in, best first (the engine's
    ``leaderboard``: equal scores share a place). Bots are excluded (they are the house's
    program, not players who "hanno usato il programma"), and so are automatic games and
    games the player stopped (``abandoned``: stopping while ahead must not pay)."""
    rows = (
        PracticeResult.objects.filter(
            is_bot=False, game__status=PracticeStatus.FINISHED, game__nickname__gt="", hands__gt=0
        )
        .exclude(game__end_reason=PracticeEnd.ABANDONED)
        .values("name")
        .annotate(net=Sum("net_minor"), hands_total=Sum("hands"), games=Count("game", distinct=True))
    )
    by_name = {r["name"]: r for r in rows}
    standings = leaderboard(
        {name: int(r["net"]) for name, r in by_name.items()},
        {name: int(r["hands_total"]) for name, r in by_name.items()},
    )
    return tuple(
        LeaderboardLine(
            place=s.place,
            nickname=s.player,
            games=int(by_name[s.player]["games"]),
            hands=s.hands,
            net_minor=s.net_minor,
            score_minor=s.score,
        )
        for s in standings[:limit]
    )
