"""Hold'em test helpers: decks that deal chosen cards by the dealing contract, quick hands."""

from __future__ import annotations

from collections.abc import Sequence

from tables.engine.cards import card_id
from tables.engine.holdem import (
    Action,
    ActionKind,
    HandSetup,
    HandState,
    Phase,
    Street,
    Structure,
    deal_positions,
    start_hand,
)


def stacked_deck(holes: Sequence[str], board: str = "") -> tuple[int, ...]:
    """A deck dealing ``holes[k]`` (e.g. ``"AcKd"``) to player k and ``board`` as the board.

    Player k is in dealing order (0 = first left of the button; heads-up the big blind).
    Every other position gets the unused cards in ascending order.
    """
    n = len(holes)
    positions = deal_positions(n)
    deck: list[int | None] = [None] * 52
    for k, hole in enumerate(holes):
        for slot, code in zip(positions.holes[k], (hole[:2], hole[2:]), strict=True):
            deck[slot] = card_id(code)
    for slot, k in zip(positions.board, range(0, len(board), 2), strict=False):
        deck[slot] = card_id(board[k : k + 2])
    spare = iter(sorted(set(range(52)) - {c for c in deck if c is not None}))
    return tuple(c if c is not None else next(spare) for c in deck)


def new_hand(
    structure: Structure,
    stacks: Sequence[int | None],
    *,
    button: int,
    holes: Sequence[str] | None = None,
    board: str = "",
) -> HandState:
    """Start a hand; ``holes`` in dealing order (default: any cards)."""
    players = sum(s is not None for s in stacks)
    deck = stacked_deck(holes, board) if holes is not None else tuple(range(52))
    assert holes is None or len(holes) == players
    return start_hand(HandSetup(structure, tuple(stacks), button, deck))


def act(state: HandState, kind: ActionKind, amount: int | None = None) -> HandState:
    """The player to act takes ``kind`` (raise-to ``amount``)."""
    seat = state.to_act
    assert seat is not None
    return state.act(Action(kind, seat, amount))


def check_down_to(state: HandState, street: Street) -> HandState:
    """Everyone checks or calls until ``street`` begins."""
    while state.street < street and state.phase is Phase.BETTING:
        kinds = state.legal_actions().kinds
        state = act(state, ActionKind.CHECK if ActionKind.CHECK in kinds else ActionKind.CALL)
    return state


def check_down(state: HandState) -> HandState:
    """Everyone checks or calls until the hand reaches showdown or ends."""
    while state.phase is Phase.BETTING:
        kinds = state.legal_actions().kinds
        state = act(state, ActionKind.CHECK if ActionKind.CHECK in kinds else ActionKind.CALL)
    return state
