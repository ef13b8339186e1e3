"""Reads behind the auditor reports: totals by day, table or player over any date range
(the charts' series are backoffice.audit_charts, the streamed row exports of hands, entries
and ledger legs backoffice.audit_exports).

Only terminal hands count (settled, or cancelled and refunded), by the UTC instant they
ended (``settled_at``): their seeds are public, so nothing here reveals a running hand.
Money is in integer minor units, per currency, never summed across currencies.

Return to player (RTP) is prizes / gross: for a table or a day, the prizes paid (the pool
less the tie-split cents carried to the table's next hand) over everything staked (antes,
draws, redeals); for a player, what they won over what they paid.

Both games count. A Texas Hold'em hand's gross is its pot (every chip the players put in),
its prizes the pot less the rake; a Hold'em player's "paid" is what he put in the pots and
"won" what he took from them (docs/auditing.md). Every report and export narrows to one
player (by username) on request. Practice games (private BigHoldem practice tables, seed
004) are kept apart: left out unless ``practice=True`` asks for them alone.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import UTC, date
from decimal import Decimal
from typing import Any, Literal

from django.db.models import Count, Exists, F, OuterRef, Q, Sum
from django.db.models.functions import Coalesce, TruncDate

from backoffice.selectors import day_bounds
from tables.models import Entry, Hand, HandStatus, HoldemHand, HoldemHandPlayer, HoldemHandStatus, TableGame

GroupBy = Literal["day", "table", "player"]
GROUPINGS: tuple[GroupBy, ...] = ("day", "table", "player")
EXPORT_CHUNK = 2000
_TERMINAL = [HandStatus.SETTLED, HandStatus.CANCELLED]
_SETTLED = Q(status=HandStatus.SETTLED)
_HOLDEM_TERMINAL = [HoldemHandStatus.SETTLED, HoldemHandStatus.CANCELLED]
_HOLDEM_SETTLED = Q(status=HoldemHandStatus.SETTLED)


def rtp(prizes_minor: int, staked_minor: int) -> Decimal | None:
    """Return to player as a fraction with four decimals, None when nothing was staked.

    >>> rtp(8500, 10000)
    Decimal('0.8500')
    >>> rtp(0, 0) is None
    True
    """
    if staked_minor <= 0:
        return None
    return (Decimal(prizes_minor) / Decimal(staked_minor)).quantize(Decimal("0.0001"))


@dataclass(frozen=True, slots=True)
class AuditRow:
    """One line of an auditor report.

    ``label`` is the day (ISO), the table's name or the player's username; ``game`` the
    game (``widerpoker`` or ``holdem``: each game has its own rows); ``hands`` counts
    settled hands (a player's: hands played), ``cancelled`` the refunded ones. For a player,
    ``gross_minor`` is what they paid, ``prizes_minor`` what they won, and ``rake_minor`` is
    None (rake is taken per hand, not per player).
    """

    label: str
    key: int | str
    currency: str
    hands: int
    cancelled: int
    entries: int
    gross_minor: int
    rake_minor: int | None
    prizes_minor: int
    jackpot_contributions_minor: int | None = None
    jackpot_awards_minor: int | None = None
    game: str = TableGame.WIDERPOKER

    @property
    def rtp(self) -> Decimal | None:
        """Prizes over gross (a fraction, four decimals), None when nothing was staked."""
        return rtp(self.prizes_minor, self.gross_minor)

    @property
    def rtp_percent(self) -> Decimal | None:
        """``rtp`` as a percentage with two decimals, for people."""
        value = self.rtp
        return None if value is None else (value * 100).quantize(Decimal("0.01"))


def _narrowed(
    hands: Any,
    dealt_in: Any,
    *,
    start: date,
    end: date,
    table_id: int | None,
    currency: str | None,
    player: str | None,
    practice: bool,
) -> Any:
    """``hands`` (terminal hands of one game) that ended in the range, of real tables (or of
    practice games only, when ``practice``), optionally of one table, currency or player
    (username: the hands he was dealt in, a row of ``dealt_in`` naming him)."""
    since, until = day_bounds(start, end)
    hands = hands.filter(settled_at__gte=since, settled_at__lt=until, table__practice__isnull=not practice)
    if table_id is not None:
        hands = hands.filter(table_id=table_id)
    if currency:
        hands = hands.filter(table__currency=currency)
    if player:
        hands = hands.filter(Exists(dealt_in.filter(hand_id=OuterRef("pk"), user__username=player)))
    return hands


def _terminal_hands(
    *,
    start: date,
    end: date,
    table_id: int | None = None,
    currency: str | None = None,
    player: str | None = None,
    practice: bool = False,
) -> Any:
    """WiderPoker's terminal hands that ended in the range (a player's: those he was dealt
    in). WiderPoker has no practice games, so ``practice=True`` gives none."""
    return _narrowed(
        Hand.objects.filter(status__in=_TERMINAL),
        Entry.objects,
        start=start,
        end=end,
        table_id=table_id,
        currency=currency,
        player=player,
        practice=practice,
    )


def _terminal_holdem_hands(
    *,
    start: date,
    end: date,
    table_id: int | None = None,
    currency: str | None = None,
    player: str | None = None,
    practice: bool = False,
) -> Any:
    """Hold'em's terminal hands that ended in the range, of real tables (or of practice
    games only, when ``practice``); a player's: those he was dealt in."""
    return _narrowed(
        HoldemHand.objects.filter(status__in=_HOLDEM_TERMINAL),
        HoldemHandPlayer.objects,
        start=start,
        end=end,
        table_id=table_id,
        currency=currency,
        player=player,
        practice=practice,
    )


def list_audit_totals(
    *,
    start: date,
    end: date,
    group_by: GroupBy,
    table_id: int | None = None,
    currency: str | None = None,
    player: str | None = None,
    practice: bool = False,
) -> list[AuditRow]:
    """Totals of the terminal hands of both games that ended from ``start`` to ``end`` (UTC
    days, both included), grouped by UTC day, table or player, optionally of one table,
    currency or player (username: the hands he was dealt in; by player, his row alone).
    Practice games are left out, or alone counted with ``practice=True``.

    Days come newest first (WiderPoker before Hold'em on a day); tables by name; players by
    what they won, most first. Each game has its own rows.

    Raises:
        ValueError: ``group_by`` is not one of ``GROUPINGS``.
    """
    if group_by not in GROUPINGS:
        raise ValueError(f"group_by must be one of {GROUPINGS}, not {group_by!r}")
    filters: dict[str, Any] = {
        "start": start,
        "end": end,
        "table_id": table_id,
        "currency": currency,
        "player": player,
        "practice": practice,
    }
    if group_by == "player":
        rows = _player_totals(**filters) + _holdem_player_totals(**filters)
        rows.sort(key=lambda row: row.label)
        rows.sort(key=lambda row: row.prizes_minor, reverse=True)
        return rows
    rows = _game_totals(_terminal_hands(**filters), group_by=group_by, game=TableGame.WIDERPOKER)
    rows += _game_totals(_terminal_holdem_hands(**filters), group_by=group_by, game=TableGame.HOLDEM)
    if group_by == "day":
        rows.sort(key=lambda row: (row.currency, row.game != TableGame.WIDERPOKER))
        rows.sort(key=lambda row: str(row.key), reverse=True)
    else:
        rows.sort(key=lambda row: row.label)
    return rows


def _game_totals(hands: Any, *, group_by: GroupBy, game: str) -> list[AuditRow]:
    """Rows by day or table of one game's terminal hands. Hold'em: gross = pots, prizes =
    pots less rake, entries = players dealt in, no jackpots."""
    holdem = game == TableGame.HOLDEM
    if group_by == "day":
        hands = hands.annotate(group=TruncDate("settled_at", tzinfo=UTC))
        keys = ["group", "table__currency"]
    else:
        hands = hands.annotate(group=F("table_id"), group_name=F("table__name"))
        keys = ["group", "group_name", "table__currency"]
    settled = _HOLDEM_SETTLED if holdem else _SETTLED
    cancelled = HoldemHandStatus.CANCELLED if holdem else HandStatus.CANCELLED
    if holdem:
        # Counted with the players' join (one row per player dealt in), summed without it.
        rows = list(
            hands.values(*keys)
            .annotate(
                hands=Count("id", filter=settled, distinct=True),
                cancelled=Count("id", filter=Q(status=cancelled), distinct=True),
                entries=Count("seat_rows", filter=settled),
            )
            .order_by()
        )
        money = {
            "gross": Coalesce(Sum("pot_minor", filter=settled), 0),
            "rake": Coalesce(Sum("rake_minor", filter=settled), 0),
            "prizes": Coalesce(Sum(F("pot_minor") - F("rake_minor"), filter=settled), 0),
        }
        sums = {tuple(row[k] for k in keys): row for row in hands.values(*keys).annotate(**money).order_by()}
        for row in rows:
            row.update({name: sums[tuple(row[k] for k in keys)][name] for name in ("gross", "rake", "prizes")})
            row["contributions"] = row["awards"] = None
    else:
        rows = list(
            hands.values(*keys)
            .annotate(
                hands=Count("id", filter=settled),
                cancelled=Count("id", filter=Q(status=cancelled)),
                entries=Coalesce(Sum("entry_count", filter=settled), 0),
                gross=Coalesce(Sum("gross_minor", filter=settled), 0),
                rake=Coalesce(Sum("rake_minor", filter=settled), 0),
                prizes=Coalesce(Sum(F("pool_minor") - F("breakage_minor"), filter=settled), 0),
                contributions=Coalesce(Sum("jackpot_contributions_minor", filter=settled), 0),
                awards=Coalesce(Sum("jackpot_awards_minor", filter=settled), 0),
            )
            .order_by()
        )
    return [
        AuditRow(
            label=row["group"].isoformat() if group_by == "day" else row["group_name"],
            key=row["group"].isoformat() if group_by == "day" else row["group"],
            currency=row["table__currency"],
            hands=row["hands"],
            cancelled=row["cancelled"],
            entries=row["entries"],
            gross_minor=row["gross"],
            rake_minor=row["rake"],
            prizes_minor=row["prizes"],
            jackpot_contributions_minor=row["contributions"],
            jackpot_awards_minor=row["awards"],
            game=game,
        )
        for row in rows
    ]


def _player_totals(
    *,
    start: date,
    end: date,
    table_id: int | None,
    currency: str | None,
    player: str | None,
    practice: bool,
) -> list[AuditRow]:
    if practice:
        return []  # WiderPoker has no practice games
    since, until = day_bounds(start, end)
    entries = Entry.objects.filter(
        hand__status=HandStatus.SETTLED, hand__settled_at__gte=since, hand__settled_at__lt=until
    )
    if table_id is not None:
        entries = entries.filter(hand__table_id=table_id)
    if currency:
        entries = entries.filter(hand__table__currency=currency)
    if player:
        entries = entries.filter(user__username=player)
    rows = (
        entries.values("user_id", "user__username", "hand__table__currency")
        .annotate(
            hands=Count("hand_id", distinct=True),
            entries=Count("id"),
            paid=Coalesce(Sum("paid_minor"), 0),
            won=Coalesce(Sum("prize_minor"), 0),
        )
        .order_by("-won", "user__username")
    )
    return [
        AuditRow(
            label=row["user__username"],
            key=row["user_id"],
            currency=row["hand__table__currency"],
            hands=row["hands"],
            cancelled=0,
            entries=row["entries"],
            gross_minor=row["paid"],
            rake_minor=None,
            prizes_minor=row["won"],
        )
        for row in rows
    ]


def _holdem_player_totals(
    *,
    start: date,
    end: date,
    table_id: int | None,
    currency: str | None,
    player: str | None,
    practice: bool,
) -> list[AuditRow]:
    """Hold'em rows by player: hands dealt in, what he put in the pots (``paid``: starting
    less finishing stack plus what he won) and what he won from them (the hand's
    ``results["won"]``), per currency."""
    hands = _terminal_holdem_hands(
        start=start, end=end, table_id=table_id, currency=currency, practice=practice
    ).filter(status=HoldemHandStatus.SETTLED)
    seats = HoldemHandPlayer.objects.filter(hand__in=hands.values("id"))
    if player:
        seats = seats.filter(user__username=player)
    totals: dict[tuple[int, str, str], list[int]] = {}
    rows = seats.values_list(
        "user_id",
        "user__username",
        "hand__table__currency",
        "seat",
        "starting_minor",
        "finishing_minor",
        "hand__results",
    )
    for user_id, username, code, seat, starting, finishing, results in rows.iterator(chunk_size=EXPORT_CHUNK):
        won = int((results or {}).get("won", {}).get(str(seat), 0))
        paid = int(starting) - int(finishing if finishing is not None else starting) + won
        acc = totals.setdefault((user_id, username, code), [0, 0, 0])
        acc[0] += 1
        acc[1] += paid
        acc[2] += won
    return [
        AuditRow(
            label=username,
            key=user_id,
            currency=code,
            hands=count,
            cancelled=0,
            entries=count,
            gross_minor=paid,
            rake_minor=None,
            prizes_minor=won,
            game=TableGame.HOLDEM,
        )
        for (user_id, username, code), (count, paid, won) in totals.items()
    ]
