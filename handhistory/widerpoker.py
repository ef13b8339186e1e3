"""WiderPoker's hand history for players and auditors (seed 000, Glossary, Hand History):
a hand, its entries, a player's hands. Its export is handhistory.export, the public
commitments page handhistory.selectors, Hold'em's hands handhistory.holdem.

Access rule: a player sees only the hands he played; staff holding ``tables.view_hand``
(croupiers, auditors) see every hand. Anyone else gets HandNotFoundError, exactly as for a
hand that does not exist.

Secrets rule: the server seed and the change keys appear only once the hand is terminal
(settled or cancelled), for every viewer, staff included (docs/provably-fair.md). While a
hand is running, a player sees his own entry and nobody else's; staff see every entry only
once the change phase has ended (security audit F2).
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import QuerySet

from handhistory.errors import HandNotFoundError
from handhistory.selectors import Viewer, can_view_all_hands
from tables.engine.widerpoker import (
    category_of_strength,
    combination_from_index,
    draw_positions,
    hold_code,
    hold_from_mask,
)
from tables.models import Entry, Hand, HandStatus
from tables.widerpoker.labels import category_name


def category_label(category: int | None) -> str:
    """The category's human label ("Two pair"), or an empty string when there is none."""
    return category_name(category)


@dataclass(frozen=True, slots=True)
class DrawView:
    """One of an entry's five draws (seed 001, C.1): bought or not, all are shown after the
    hand. ``number`` is 1..5 and uses change key ``number``."""

    number: int
    key: tuple[int, ...]
    cards: tuple[str, ...]
    strength: int
    category: int
    category_label: str
    bought: bool
    best: bool


@dataclass(frozen=True, slots=True)
class RedealView:
    """A redeal bought by the entry: the hand's redeal ``number`` (seed stream
    ``redeal:<number>``) and the new initial combination it gave."""

    number: int
    combination: tuple[int, ...]
    cards: tuple[str, ...]


@dataclass(frozen=True, slots=True)
class EntryView:
    """One entry of a hand as the history shows it. Draw results are empty until the hand is
    settled; ``net_minor`` is prize less paid (0 for a cancelled, refunded hand; None while
    the hand runs)."""

    id: int
    player: str
    join_order: int
    initial_combination: tuple[int, ...]
    initial_cards: tuple[str, ...]
    redeals: tuple[RedealView, ...]
    combination: tuple[int, ...]
    cards: tuple[str, ...]
    hold_chosen: str | None
    hold_used: str | None
    connected_at_end: bool | None
    draws_bought: int
    draws: tuple[DrawView, ...]
    best_draw: int | None
    final_cards: tuple[str, ...]
    strength: int | None
    category: int | None
    category_label: str
    place: int | None
    prize_minor: int
    paid_minor: int
    net_minor: int | None


@dataclass(frozen=True, slots=True)
class HandHistory:
    """A hand as one viewer may see it. ``server_seed`` and ``change_keys`` are None until
    the hand is terminal; so are the settlement totals (rake, pool, carry, breakage)."""

    id: int
    table_id: int
    table_name: str
    number: int
    status: str
    status_label: str
    is_terminal: bool
    started_at: datetime
    change_deadline: datetime
    redeal_deadline: datetime
    settled_at: datetime | None
    config: dict[str, Any]
    currency: str
    commitment: str
    board: dict[str, Any]
    server_seed: str | None
    change_keys: list[list[int]] | None
    entry_count: int
    redeal_count: int
    antes_minor: int
    draws_minor: int
    redeals_minor: int
    gross_minor: int
    rake_minor: int | None
    carry_in_minor: int | None
    pool_minor: int | None
    breakage_minor: int | None
    prizes_minor: int | None
    leaderboard: list[dict[str, Any]]
    jackpots: list[dict[str, Any]]
    cancel_reason: str
    viewer_entry: EntryView | None
    viewer_sees_all: bool
    change_phase_over: bool

    @property
    def board_rows(self) -> list[tuple[str, ...]]:
        """The board read across: row p holds position p of each of the five columns."""
        return list(zip(*self.board["columns"], strict=True))

    @property
    def entries_visible(self) -> bool:
        """Whether the viewer may list every entry: players once the hand is terminal, staff
        once its change phase has ended (nobody sees another player's cards before)."""
        return self.is_terminal or (self.viewer_sees_all and self.change_phase_over)


@dataclass(frozen=True, slots=True)
class PlayerHandRow:
    """A line of a player's own hand list."""

    hand_id: int
    table_id: int
    table_name: str
    number: int
    status: str
    started_at: datetime
    currency: str
    category: int | None
    category_label: str
    place: int | None
    entry_count: int
    paid_minor: int
    prize_minor: int
    net_minor: int | None


def _load_hand(hand_id: int, viewer: Viewer) -> tuple[Hand, Entry | None, bool]:
    hand = Hand.objects.select_related("table").filter(pk=hand_id).first()
    if hand is None or not viewer.is_authenticated:
        raise HandNotFoundError(f"no hand {hand_id}", hand_id=hand_id)
    sees_all = can_view_all_hands(viewer)
    own = Entry.objects.select_related("user").filter(hand=hand, user_id=viewer.pk).first()
    if own is None and not sees_all:
        raise HandNotFoundError(f"no hand {hand_id}", hand_id=hand_id)
    return hand, own, sees_all


def _net_minor(hand: Hand, entry: Entry) -> int | None:
    if hand.status == HandStatus.SETTLED:
        return entry.prize_minor - entry.paid_minor
    if hand.status == HandStatus.CANCELLED:
        return 0
    return None


def _cards(board: dict[str, Any], positions: Iterable[int]) -> tuple[str, ...]:
    return tuple(str(board["columns"][c][p]) for c, p in enumerate(positions))


def describe_entry(hand: Hand, entry: Entry) -> EntryView:
    """Everything the history shows about one entry, computed from the stored board, keys
    and choices (seed 000, 3. Change procedure: a discarded card of column c becomes
    position (p_c + key[c]) mod 10)."""
    board = hand.board
    initial = combination_from_index(entry.initial_combination)
    current = combination_from_index(entry.combination)
    draws: list[DrawView] = []
    final: tuple[str, ...] = ()
    if hand.status == HandStatus.SETTLED and entry.hold_used is not None:
        hold = hold_from_mask(entry.hold_used)
        for index, (key, strength) in enumerate(zip(hand.change_keys or [], entry.draw_strengths or [], strict=True)):
            cards = _cards(board, draw_positions(current, hold, key))
            category = category_of_strength(int(strength))
            is_best = index == entry.best_draw
            draws.append(
                DrawView(
                    number=index + 1,
                    key=tuple(key),
                    cards=cards,
                    strength=int(strength),
                    category=int(category),
                    category_label=category_name(category),
                    bought=index < entry.draws_bought,
                    best=is_best,
                )
            )
            if is_best:
                final = cards
    return EntryView(
        id=entry.pk,
        player=entry.user.username,
        join_order=entry.join_order,
        initial_combination=initial,
        initial_cards=_cards(board, initial),
        redeals=tuple(
            RedealView(
                number=int(number),
                combination=combination_from_index(int(index)),
                cards=_cards(board, combination_from_index(int(index))),
            )
            for number, index in entry.redeals
        ),
        combination=current,
        cards=_cards(board, current),
        hold_chosen=None if entry.hold_mask is None else hold_code(hold_from_mask(entry.hold_mask)),
        hold_used=None if entry.hold_used is None else hold_code(hold_from_mask(entry.hold_used)),
        connected_at_end=entry.connected_at_end,
        draws_bought=entry.draws_bought,
        draws=tuple(draws),
        best_draw=None if entry.best_draw is None else entry.best_draw + 1,
        final_cards=final,
        strength=entry.strength,
        category=entry.category,
        category_label=category_label(entry.category),
        place=entry.place,
        prize_minor=entry.prize_minor,
        paid_minor=entry.paid_minor,
        net_minor=_net_minor(hand, entry),
    )


def get_hand_history(*, hand_id: int, viewer: Viewer) -> HandHistory:
    """The hand as ``viewer`` may see it; HandNotFoundError if it does not exist or the
    viewer neither played it nor may view every hand (access and secrets rules above)."""
    hand, own, sees_all = _load_hand(hand_id, viewer)
    terminal = hand.is_terminal
    settled = hand.status == HandStatus.SETTLED
    return HandHistory(
        id=hand.pk,
        table_id=hand.table_id,
        table_name=hand.table.name,
        number=hand.number,
        status=hand.status,
        status_label=str(HandStatus(hand.status).label),
        is_terminal=terminal,
        started_at=hand.started_at,
        change_deadline=hand.change_deadline,
        redeal_deadline=hand.redeal_deadline,
        settled_at=hand.settled_at,
        config=dict(hand.config),
        currency=hand.currency,
        commitment=hand.commitment,
        board=hand.board,
        server_seed=hand.server_seed if terminal else None,
        change_keys=hand.change_keys if terminal else None,
        entry_count=hand.entry_count,
        redeal_count=hand.redeal_count,
        antes_minor=hand.antes_minor,
        draws_minor=hand.draws_minor,
        redeals_minor=hand.redeals_minor,
        gross_minor=hand.gross_minor,
        rake_minor=hand.rake_minor if settled else None,
        carry_in_minor=hand.carry_in_minor if settled else None,
        pool_minor=hand.pool_minor if settled else None,
        breakage_minor=hand.breakage_minor if settled else None,
        prizes_minor=hand.pool_minor - hand.breakage_minor if settled else None,
        leaderboard=[
            {**row, "category_label": category_label(row.get("category"))}
            for row in (hand.leaderboard if terminal else [])
        ],
        jackpots=_jackpot_lines(hand, settled=settled),
        cancel_reason=hand.cancel_reason,
        viewer_entry=describe_entry(hand, own) if own is not None else None,
        viewer_sees_all=sees_all,
        change_phase_over=hand.change_phase_over(),
    )


def list_hand_entries(*, hand_id: int, viewer: Viewer) -> QuerySet[Entry]:
    """The entries of a hand the viewer may list, best place first once settled (join order
    before). Players get every entry of a terminal hand and only their own before."""
    hand, own, sees_all = _load_hand(hand_id, viewer)
    entries = Entry.objects.filter(hand=hand).select_related("user")
    if not (hand.is_terminal or (sees_all and hand.change_phase_over())):
        entries = entries.filter(pk=own.pk) if own is not None else entries.none()
    return entries.order_by("place", "join_order")


def find_hand_entry(*, hand_id: int, entry_id: int, viewer: Viewer) -> EntryView | None:
    """One entry of a hand as ``describe_entry`` tells it, if the viewer may list it
    (``list_hand_entries``: every entry once the hand is over, else his own); None if not.
    Raises HandNotFoundError as ``list_hand_entries``."""
    entry = list_hand_entries(hand_id=hand_id, viewer=viewer).filter(pk=entry_id).first()
    return None if entry is None else describe_entry(entry.hand, entry)


def describe_entries(*, hand_id: int, entries: Iterable[Entry]) -> list[EntryView]:
    """EntryView of each entry (one page of ``list_hand_entries``)."""
    hand = Hand.objects.get(pk=hand_id)
    return [describe_entry(hand, entry) for entry in entries]


def list_player_hands(*, user_id: int) -> QuerySet[Entry]:
    """The player's entries, most recent hand first, with their hands and tables.

    "Most recent" is the order of hand ids: a hand gets its id when it is dealt, so ids
    follow the deals (``started_at``) at every table. Ordering by the id lets PostgreSQL
    read one page straight from the ``entry_user_recent`` index (user, hand descending)
    instead of sorting all of a player's entries: 50,000 hands of one player, docs/benchmarks.md.
    """
    return Entry.objects.filter(user_id=user_id).select_related("hand", "hand__table").order_by("-hand_id")


def summarize_player_hand(entry: Entry) -> PlayerHandRow:
    """One line of the player's hand list (an entry from ``list_player_hands``)."""
    hand = entry.hand
    return PlayerHandRow(
        hand_id=hand.pk,
        table_id=hand.table_id,
        table_name=hand.table.name,
        number=hand.number,
        status=hand.status,
        started_at=hand.started_at,
        currency=hand.currency,
        category=entry.category,
        category_label=category_label(entry.category),
        place=entry.place,
        entry_count=hand.entry_count,
        paid_minor=entry.paid_minor,
        prize_minor=entry.prize_minor,
        net_minor=_net_minor(hand, entry),
    )


def _jackpot_lines(hand: Hand, *, settled: bool) -> list[dict[str, Any]]:
    """Each jackpot of the hand's conditions with what the hand did to it: the spin drawn
    (public from the deal), the contribution and any royal award (once settled)."""
    results = hand.jackpot_results or {}
    royal = {str(award["key"]): award for award in results.get("royal", [])}
    lines = []
    for feed in hand.config.get("jackpots", ()):
        lines.append(
            {
                "name": feed.get("name", feed["key"]),
                "kind": feed["kind"],
                "contribution_minor": results.get("contributions", {}).get(feed["key"]) if settled else None,
                "spin_award_minor": hand.spin_award_minor if feed["id"] == hand.spin_jackpot_id else None,
                "royal": royal.get(feed["key"]) if settled else None,
            }
        )
    return lines
