"""A WiderPoker entry told step by step, as a slot machine's history (issue 24, item 2): the
deal with the initial combination on the payline of the five reels, each redeal, the hold,
each of the five draws with the cards it changed, the final hand, the place and the prize.

Columns are numbered 1..5 and a reel's rows 1..10 (seed 000, 1. Board and 2. Initial
combination: "as if the columns were reels of a slot machine"); the stored combinations
and keys stay 0-based in the export. Everything here is computed from an ``EntryView``
(``handhistory.widerpoker.describe_entry``), which already applies the access and secrets
rules: a running hand has no draws, so no step reveals a change key before its time.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

from handhistory.widerpoker import EntryView, HandHistory
from tables.engine.widerpoker import COLUMN_HEIGHT, evaluate
from tables.widerpoker.labels import category_name

PAYLINE_ROW = 4
"""The reel row (0-based) the player's cards stop on: row 5 of 10, as on the game screen
(static/js/table.js, ``CENTER_ROW``)."""


@dataclass(frozen=True, slots=True)
class Slot:
    """One column's card in a step: ``column`` 1..5, the card code, whether it changed in
    this step (a redeal's new card, a draw's replacement) and whether it is held."""

    column: int
    code: str
    changed: bool = False
    held: bool = False


@dataclass(frozen=True, slots=True)
class Step:
    """One step of the replay. ``kind``: ``deal``, ``redeal``, ``hold``, ``draw`` or
    ``result``; ``number`` the redeal's or the draw's number (1-based); ``slots`` the five
    cards on the payline after the step; ``category_label`` the hand they make, in words."""

    kind: str
    number: int
    slots: tuple[Slot, ...]
    category_label: str
    bought: bool = True
    best: bool = False

    @property
    def changed_columns(self) -> list[int]:
        """The columns (1..5) whose card changed in this step."""
        return [slot.column for slot in self.slots if slot.changed]

    @property
    def held_columns(self) -> list[int]:
        """The columns (1..5) whose card is held."""
        return [slot.column for slot in self.slots if slot.held]


@dataclass(frozen=True, slots=True)
class Reel:
    """A board column as a reel stopped on the entry's initial card: ``column`` 1..5 and its
    ten cards from the top row, the initial card on row ``PAYLINE_ROW``."""

    column: int
    cards: tuple[str, ...]

    @property
    def rows(self) -> list[dict[str, Any]]:
        """The reel's rows, each ``{"code", "payline"}``."""
        return [{"code": code, "payline": row == PAYLINE_ROW} for row, code in enumerate(self.cards)]


@dataclass(frozen=True, slots=True)
class EntryReplay:
    """The steps of one entry, with the reels of its deal and the hand's cards out."""

    player: str
    reels: tuple[Reel, ...]
    cards_out: tuple[str, ...]
    steps: tuple[Step, ...]
    hold_note: str
    final: Step | None
    place: int | None
    entry_count: int
    prize_minor: int
    paid_minor: int
    net_minor: int | None
    settled: bool


def _category(cards: Sequence[str]) -> str:
    return category_name(int(evaluate(list(cards)).category))


def reels_on(board: dict[str, Any], combination: Sequence[int]) -> tuple[Reel, ...]:
    """The five reels turned so that position ``combination[c]`` of each column sits on the
    payline (row ``PAYLINE_ROW``), the column's order kept (seed 000, figures 2-3)."""
    return tuple(
        Reel(
            column=c + 1,
            cards=tuple(
                str(board["columns"][c][(p - PAYLINE_ROW + row) % COLUMN_HEIGHT]) for row in range(COLUMN_HEIGHT)
            ),
        )
        for c, p in enumerate(combination)
    )


def _line(cards: Sequence[str], *, before: Sequence[str] | None = None, held: Sequence[bool] = ()) -> tuple[Slot, ...]:
    return tuple(
        Slot(
            column=c + 1,
            code=code,
            changed=before is not None and (before[c] != code or (bool(held) and not held[c])),
            held=bool(held) and held[c],
        )
        for c, code in enumerate(cards)
    )


def entry_replay(hand: HandHistory, entry: EntryView) -> EntryReplay:
    """The replay of ``entry`` in ``hand`` (see the module doc). A draw's changed cards are
    the columns not held: a changed card always moves (a change key is 1..9)."""
    from django.utils.translation import gettext as _

    steps: list[Step] = []
    initial = entry.initial_cards
    steps.append(Step("deal", 0, _line(initial), _category(initial)))
    previous = initial
    for number, redeal in enumerate(entry.redeals, start=1):
        # The player's first, second .. redeal (``redeal.number`` is the hand's stream number).
        steps.append(Step("redeal", number, _line(redeal.cards, before=previous), _category(redeal.cards)))
        previous = redeal.cards
    code = entry.hold_used or entry.hold_chosen
    held = [flag == "H" for flag in code] if code else [False] * 5
    if entry.hold_used is None and entry.hold_chosen is None:
        note = _("No hold chosen yet.") if not hand.is_terminal else ""
    elif entry.hold_chosen is None and entry.hold_used is not None:
        note = (
            _("No choice reached the table: all cards changed.")
            if entry.connected_at_end
            else _("Disconnected without a choice: all cards kept.")
        )
    else:
        note = ""
    if code:
        steps.append(Step("hold", 0, _line(entry.cards, held=held), _category(entry.cards)))
    final: Step | None = None
    for draw in entry.draws:
        step = Step(
            "draw",
            draw.number,
            _line(draw.cards, before=entry.cards, held=held),
            draw.category_label,
            bought=draw.bought,
            best=draw.best,
        )
        steps.append(step)
        if draw.best:
            final = step
    return EntryReplay(
        player=entry.player,
        reels=reels_on(hand.board, entry.initial_combination),
        cards_out=tuple(str(code) for code in hand.board.get("out", ())),
        steps=tuple(steps),
        hold_note=note,
        final=final,
        place=entry.place,
        entry_count=hand.entry_count,
        prize_minor=entry.prize_minor,
        paid_minor=entry.paid_minor,
        net_minor=entry.net_minor,
        settled=hand.status == "settled",
    )
