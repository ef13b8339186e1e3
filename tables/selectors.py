"""Reads of tables, hands and entries shaped for the lobby, the game screen and the API.

Public state never contains a secret of a running hand: the server seed and the change keys
appear only once the hand is settled or cancelled.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping, Sequence
from datetime import datetime
from typing import Any

from django.db.models import Count, Min, Q, QuerySet

from tables.errors import TableNotFoundError
from tables.models import Entry, Hand, HandStatus, Seat, SeatStatus, Table
from wallet.models import Account


def _iso(moment: datetime | None) -> str | None:
    return moment.isoformat() if moment is not None else None


def get_table(table_id: int, *, lock: bool = False, rows: QuerySet[Table] | None = None) -> Table:
    """Table ``table_id`` (every game's), read with a row lock (``SELECT ... FOR UPDATE``,
    inside the caller's transaction) when ``lock``, from ``rows`` when given (a queryset of
    tables narrowed with ``only`` or widened with ``select_related``). Raises
    TableNotFoundError: the one "table or TableNotFoundError" of the house and its games."""
    queryset = Table.objects.all() if rows is None else rows
    if lock:
        queryset = queryset.select_for_update()
    table = queryset.filter(pk=table_id).first()
    if table is None:
        raise TableNotFoundError(f"no table {table_id}", table_id=table_id)
    return table


def count_players(*, table_id: int) -> int:
    """Players seated at the table (playing or sitting out)."""
    return Seat.objects.filter(table_id=table_id).exclude(status=SeatStatus.LEFT).count()


_PUBLIC_FRAME_READERS: list[Callable[[int], Mapping[str, Any]]] = []
"""The reader ``get_public_state`` asks (at most one): registered by the registry of games
(tables/games.py) when it is imported, so the house's reads name no game."""


def register_public_frame_reader(read: Callable[[int], Mapping[str, Any]]) -> None:
    """Make ``read(table_id) -> frame`` the reader of every table's public frame (the
    registry of games registers its ``game_of(table_id).public_frame`` at import; a second
    call replaces the first)."""
    _PUBLIC_FRAME_READERS[:] = [read]


def get_public_state(*, table_id: int) -> Mapping[str, Any]:
    """The public frame of a table of any game, what the pushes and the snapshot carry:
    ``table_state`` (WiderPoker) or ``holdem_state`` (tables/holdem/selectors.py), read by
    the table's game (``Game.public_frame``, through the reader tables/games.py registers).
    Raises TableNotFoundError; LookupError when no reader is registered (tables.games not
    imported: the tables app imports it when ready)."""
    if not _PUBLIC_FRAME_READERS:
        raise LookupError("no public frame reader: tables.games registers it when imported")
    return _PUBLIC_FRAME_READERS[0](table_id)


def table_version(*, table_id: int) -> int | None:
    """The table's current ``version`` (None for no such table): one indexed read, what a
    cached public frame is checked against (tables/realtime/hub.py, ``public_snapshot``)."""
    return Table.objects.filter(pk=table_id).values_list("version", flat=True).first()


_LOBBY_ROW_READERS: list[Callable[[Table], Mapping[str, Any]]] = []
"""The reader of a lobby line's game side (at most one): registered by the registry of games
(tables/games.py) when it is imported, so the house's reads name no game."""


_CONDITIONS_READERS: list[Callable[[Table], Mapping[str, Any]]] = []
"""The reader of a table's conditions in force (at most one), registered by the registry of
games (``Game.conditions.current``), so the house's reads name no game."""


_CONDITIONS_RELATIONS: list[Callable[[], tuple[str, ...]]] = []
"""What lists the registered games' conditions relations (``table.<relation>``), at most one."""


def register_conditions_reader(
    read: Callable[[Table], Mapping[str, Any]], relations: Callable[[], tuple[str, ...]]
) -> None:
    """Make ``read(table) -> {field: value}`` the reader of a table's conditions in force (what
    the details page adds to the lobby line) and ``relations()`` the games' one-to-one
    relations to their conditions rows, which the lobby's reads ``select_related`` (one query
    for every line, not one per table). A second call replaces the first."""
    _CONDITIONS_READERS[:] = [read]
    _CONDITIONS_RELATIONS[:] = [relations]


def _with_conditions(rows: QuerySet[Table]) -> QuerySet[Table]:
    """``rows`` with each game's conditions row joined (``_CONDITIONS_RELATIONS``)."""
    return rows.select_related(*_CONDITIONS_RELATIONS[0]()) if _CONDITIONS_RELATIONS else rows


def register_lobby_row_reader(read: Callable[[Table], Mapping[str, Any]]) -> None:
    """Make ``read(table) -> {"next_special": str | None, "pool_minor": int | None}`` the
    reader of a lobby line's game side (the registry of games registers the table's
    ``Game.lobby_row`` at import; a second call replaces the first)."""
    _LOBBY_ROW_READERS[:] = [read]


def get_lobby_table(*, table_id: int) -> dict[str, Any]:
    """One table's line in the lobby."""
    table = get_table(table_id, rows=_with_conditions(Table.objects.select_related("current_hand")))
    return lobby_table_row(table, players=count_players(table_id=table.pk))


def lobby_table_row(table: Table, *, players: int) -> dict[str, Any]:
    """``get_lobby_table`` of a table its caller holds as saved, with its ``players``
    (``count_players``) counted by the caller: only its jackpots are read (at most two
    statements; none of the table, its hand or its seats)."""
    return _lobby_row(table, players, table_jackpots([table])[table.pk])


def get_table_details(*, table_id: int) -> dict[str, Any]:
    """A table's lobby line plus the conditions the lobby has no room for: results time, the
    draw price as a share of the ante, pending staff changes (applied after the running
    hand), and the next special hand. Raises TableNotFoundError."""
    row = get_lobby_table(table_id=table_id)
    table = Table.objects.get(pk=table_id)
    if _CONDITIONS_READERS:
        row.update(_CONDITIONS_READERS[0](table))
    row.update(pending_changes=dict(table.pending_changes or {}))
    return row


def table_jackpots(tables: Sequence[Table]) -> dict[int, list[dict[str, Any]]]:
    """The active jackpots of each table with their live balances, in two queries: what the
    lobby's jackpot icon and the game screen show (seed 001, Jackpots: "indicated in the game
    lobby with an identifying icon")."""
    links = list(
        Table.jackpots.through.objects.filter(table__in=tables, jackpot__is_active=True).select_related("jackpot")
    )
    balances = dict(
        Account.objects.filter(key__in=[link.jackpot.account_key for link in links]).values_list("key", "balance_minor")
    )
    result: dict[int, list[dict[str, Any]]] = {table.pk: [] for table in tables}
    for link in sorted(links, key=lambda link: ("royal", "gold", "silver", "bronze").index(link.jackpot.kind)):
        jackpot = link.jackpot
        result[link.table_id].append(
            {
                "id": jackpot.pk,
                "name": jackpot.name,
                "kind": jackpot.kind,
                "balance_minor": int(balances.get(jackpot.account_key, 0)),
                "one_in": jackpot.one_in,
                "contribution_bps": jackpot.contribution_bps,
            }
        )
    return result


def _lobby_row(table: Table, players: int, jackpots: list[dict[str, Any]]) -> dict[str, Any]:
    """The lobby line of ``table``: the house's fields, then the game side (its conditions,
    ``next_special``, ``pool_minor``) read by the registered reader (None without one)."""
    hand = table.current_hand
    row = {
        "id": table.pk,
        "name": table.name,
        "game": table.game,
        "mode": table.mode,
        "currency": table.currency,
        "jackpots": jackpots,
        "next_special": None,
        "players": players,
        "phase": table.phase,
        "deadline": _iso(table.phase_deadline),
        "hand_number": hand.number if hand is not None else None,
        "pool_minor": None,
        "is_open": table.is_open,
        "version": table.version,
    }
    if _LOBBY_ROW_READERS:
        row.update(_LOBBY_ROW_READERS[0](table))
    return row


def speed_label(change_seconds: int) -> str:
    """The table's speed as players name it, from the length of the change phase."""
    if change_seconds <= 15:
        return "turbo"
    if change_seconds <= 30:
        return "fast"
    if change_seconds <= 60:
        return "normal"
    return "slow"


def list_lobby_tables() -> list[dict[str, Any]]:
    """Every table's lobby line, cheapest ante first (the game side's ``ante_minor``; a line
    without one first), then by name. Practice games (private tables of
    one player, tables/holdem/practice/services.py) and tournaments' tables (listed as
    tournaments: tables/tournaments) are not listed."""
    tables = (
        _with_conditions(Table.objects.select_related("current_hand"))
        .filter(practice__isnull=True, tournament__isnull=True)
        .order_by("name")
        .annotate(player_count=Count("seats", filter=~Q(seats__status=SeatStatus.LEFT)))
    )
    tables_list = list(tables)
    jackpots = table_jackpots(tables_list)
    rows = [_lobby_row(table, table.player_count, jackpots[table.pk]) for table in tables_list]
    rows.sort(key=lambda row: int(row.get("ante_minor") or 0))  # stable: by name within an ante
    return rows


def list_seated_players(*, table_id: int) -> list[dict[str, Any]]:
    """Who is seated at the table and in what state (for the game screen and the back-office)."""
    return [
        dict(row)
        for row in Seat.objects.filter(table_id=table_id)
        .exclude(status=SeatStatus.LEFT)
        .order_by("joined_at")
        .values("user__username", "status", "ws_connections", "last_seen_at")
    ]


RECALL_HANDS = 10


def list_recent_hands(*, table_id: int, user_id: int, limit: int = RECALL_HANDS) -> list[dict[str, Any]]:
    """Game recall (GLI-19 style): the table's last ``limit`` finished hands, newest first,
    with their number, end, status, entries, pool, the best final hand's player, and the
    viewer's own place and prize when he played. Only public facts of finished hands."""
    hands = list(
        Hand.objects.filter(table_id=table_id, status__in=(HandStatus.SETTLED, HandStatus.CANCELLED))
        .order_by("-number")
        .only("id", "number", "status", "settled_at", "entry_count", "pool_minor", "leaderboard", "config")[:limit]
    )
    own = {
        row["hand_id"]: row
        for row in Entry.objects.filter(hand__in=hands, user_id=user_id).values(
            "hand_id", "place", "prize_minor", "jackpot_minor"
        )
    }
    return [
        {
            "id": hand.pk,
            "number": hand.number,
            "status": hand.status,
            "ended_at": _iso(hand.settled_at),
            "entries": hand.entry_count,
            "pool_minor": hand.pool_minor if hand.status == HandStatus.SETTLED else None,
            "currency": hand.currency,
            "winner": (hand.leaderboard or [{}])[0].get("player"),
            "mine": own.get(hand.pk),
            "url": f"/history/hands/{hand.pk}/",
        }
        for hand in hands
    ]


def find_missed_result(*, table_id: int, user_id: int, since: datetime) -> dict[str, Any] | None:
    """The newest hand at this table that finished while the player was disconnected (rules
    Notes 2: "the result ... will be visible through the Hand History link"), settled after
    ``since``: what the game screen tells him on return."""
    # The table's first hand settled since then (``hand_table_settled``) bounds the player's entries to read: his
    # entries newest first (``entry_user_recent``) down to that hand, a day of play at most,
    # however long his history (10^7 entries, docs/benchmarks.md).
    first = Hand.objects.filter(table_id=table_id, settled_at__gte=since).aggregate(first=Min("pk"))["first"]
    if first is None:
        return None
    entry = (
        Entry.objects.filter(
            user_id=user_id,
            hand_id__gte=first,
            hand__table_id=table_id,
            connected_at_end=False,
            hand__settled_at__gte=since,
        )
        .select_related("hand")
        .order_by("-hand_id")  # = -number at one table
        .first()
    )
    if entry is None:
        return None
    return {
        "hand_id": entry.hand_id,
        "number": entry.hand.number,
        "place": entry.place,
        "entries": entry.hand.entry_count,
        "prize_minor": entry.prize_minor + entry.jackpot_minor,
        "currency": entry.hand.currency,
        "url": f"/history/hands/{entry.hand_id}/",
    }
