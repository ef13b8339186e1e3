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
from datetime import date
from decimal import Decimal
from typing import Any, Literal

from backoffice.selectors import day_bounds
from tables import games
from tables.holdem import audit as holdem_audit
from tables.widerpoker import audit as widerpoker_audit

GroupBy = Literal["day", "table", "player"]
GROUPINGS: tuple[GroupBy, ...] = ("day", "table", "player")
EXPORT_CHUNK = 2000


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
    game's key (``Table.game``: each game has its own rows); ``hands`` counts
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
    game: str = ""

    @property
    def rtp(self) -> Decimal | None:
        """Prizes over gross (a fraction, four decimals), None when nothing was staked."""
        return rtp(self.prizes_minor, self.gross_minor)

    @property
    def rtp_percent(self) -> Decimal | None:
        """``rtp`` as a percentage with two decimals, for people."""
        value = self.rtp
        return None if value is None else (value * 100).quantize(Decimal("0.01"))


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
    since, until = day_bounds(start, end)
    return widerpoker_audit.terminal_hands(
        since=since, until=until, table_id=table_id, currency=currency, player=player, practice=practice
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
    since, until = day_bounds(start, end)
    return holdem_audit.terminal_hands(
        since=since, until=until, table_id=table_id, currency=currency, player=player, practice=practice
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
    since, until = day_bounds(start, end)
    filters: dict[str, Any] = {
        "since": since,
        "until": until,
        "table_id": table_id,
        "currency": currency,
        "player": player,
        "practice": practice,
    }
    audited = [game for game in games.GAMES.values() if game.audit is not None]
    rows: list[AuditRow] = []
    if group_by == "player":
        for game in audited:
            assert game.audit is not None
            rows += [_player_row(row, game=game.key) for row in game.audit.player_totals(**filters)]
        rows.sort(key=lambda row: row.label)
        rows.sort(key=lambda row: row.prizes_minor, reverse=True)
        return rows
    for game in audited:
        assert game.audit is not None
        rows += [_total_row(row, group_by=group_by, game=game.key) for row in game.audit.totals(group_by, **filters)]
    if group_by == "day":
        order = {key: index for index, key in enumerate(games.GAMES)}
        rows.sort(key=lambda row: (row.currency, order[row.game]))
        rows.sort(key=lambda row: str(row.key), reverse=True)
    else:
        rows.sort(key=lambda row: row.label)
    return rows


def _total_row(row: dict[str, Any], *, group_by: GroupBy, game: str) -> AuditRow:
    """A report line of a game's totals row by day or table (``GameAudit.totals``)."""
    return AuditRow(
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


def _player_row(row: dict[str, Any], *, game: str) -> AuditRow:
    """A report line of a game's player row (``GameAudit.player_totals``)."""
    return AuditRow(
        label=row["username"],
        key=row["user_id"],
        currency=row["currency"],
        hands=row["hands"],
        cancelled=0,
        entries=row["entries"],
        gross_minor=row["paid"],
        rake_minor=None,
        prizes_minor=row["won"],
        game=game,
    )
