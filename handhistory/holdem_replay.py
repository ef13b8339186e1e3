"""A Hold'em hand told street by street (issue 24, item 2): the blinds and antes, each
action with its amount and the stack it left, the board dealt at each street, the pot at
the start of each street, the showdown with the cards shown, the pots (main and side) with
their rake and winners.

Built by stepping the engine through the stored actions (``tables.holdem.records``), so it
says exactly what the verified replay says. Secrecy: the replay itself never writes a hole
card; the only cards in it are the board and those a player showed at the showdown (the
engine's ``show`` events), which every watcher saw at the table. Each player's cards as
the viewer may see them (his own; staff every hand once over) come from
``handhistory.holdem.get_holdem_history``, which applies that rule.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from tables.engine.cards import card_code
from tables.engine.evaluator import category_of_strength
from tables.engine.holdem import HandState, play_showdown, split_pot
from tables.holdem.records import apply_action, start_state
from tables.models import HoldemHand, HoldemHandStatus
from tables.widerpoker.labels import category_name

STREETS = ("preflop", "flop", "turn", "river")


@dataclass(frozen=True, slots=True)
class ActionLine:
    """One thing a player did. ``kind``: ``ante``, ``small_blind``, ``big_blind``, ``fold``,
    ``check``, ``call``, ``bet``, ``raise``, ``timeout_all_in``, ``show``, ``muck``,
    ``returned`` (an uncalled bet back to its owner) or ``wins``. ``amount_minor``: the
    chips a call or a post adds, the street total a bet or raise goes to, what a return
    gives back or a pot pays; ``stack_minor`` the player's chips behind after it."""

    seat: int
    name: str
    kind: str
    amount_minor: int | None = None
    stack_minor: int | None = None
    all_in: bool = False
    cards: tuple[str, ...] = ()
    category_label: str = ""


@dataclass(slots=True)
class StreetView:
    """A betting round (``preflop`` .. ``river``) or the ``showdown``: the board after its
    deal, the cards it dealt, the pot when it began, what was done in it."""

    name: str
    board: tuple[str, ...] = ()
    dealt: tuple[str, ...] = ()
    pot_minor: int = 0
    actions: list[ActionLine] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class PotView:
    """A pot as it was paid: ``number`` 0 for the main pot, 1.. for side pots; its amount
    before rake, its rake and the winners' ``(name, share)``."""

    number: int
    amount_minor: int
    rake_minor: int
    winners: tuple[tuple[str, int], ...]


@dataclass(frozen=True, slots=True)
class HoldemReplay:
    """The streets of a terminal hand and its pots; ``positions`` maps a seat to its marks
    (``button``, ``small_blind``, ``big_blind``)."""

    streets: tuple[StreetView, ...]
    pots: tuple[PotView, ...]
    rake_minor: int
    positions: dict[int, tuple[str, ...]]


def _names(hand: HoldemHand) -> dict[int, str]:
    return {int(p["seat"]): str(p.get("name") or "") for p in hand.players}


def _blind_indices(state: HandState) -> tuple[int, int]:
    """Dealing-order indices of the small and big blind (heads-up: the button, index 1,
    posts the small blind; seed 003, The First round)."""
    return (1, 0) if state.player_count == 2 else (0, 1)


def holdem_replay(hand: HoldemHand) -> HoldemReplay | None:
    """The street-by-street replay of a terminal hand; None for a cancelled hand (nothing was
    played to its end) or a hand still in play. Raises HoldemError if the stored actions do
    not replay (the verification says so; never for a hand the platform wrote)."""
    if hand.status != HoldemHandStatus.SETTLED:
        return None
    names = _names(hand)
    state = start_state(hand)
    seats = state.seats
    small, big = _blind_indices(state)
    positions: dict[int, tuple[str, ...]] = dict.fromkeys(seats, ())
    button = int(hand.setup["button"])
    positions[button] = ("button",)
    positions[seats[small]] = (*positions[seats[small]], "small_blind")
    positions[seats[big]] = (*positions[seats[big]], "big_blind")
    preflop = StreetView("preflop")
    for i, seat in enumerate(seats):
        if state.committed[i]:
            preflop.actions.append(ActionLine(seat, names.get(seat, ""), "ante", state.committed[i]))
    for i in (small, big, *range(state.player_count)):
        if state.bets[i] and not any(a.seat == seats[i] and a.kind.endswith("blind") for a in preflop.actions):
            kind = "small_blind" if i == small else "big_blind"
            preflop.actions.append(
                ActionLine(
                    seats[i], names.get(seats[i], ""), kind, state.bets[i], state.stacks[i], state.stacks[i] == 0
                )
            )
    streets = [preflop]
    for stored in hand.actions:
        previous = state
        state = apply_action(state, str(stored["kind"]), int(stored["seat"]), stored.get("amount"))
        _record(streets, previous, state, names)
    if not hand.setup.get("showdown_choice"):
        previous = state
        state = play_showdown(state)
        _record(streets, previous, state, names)
    pots = []
    for number, result in enumerate(state.pot_results):
        shares = split_pot(result.amount - result.rake, result.winners)
        pots.append(
            PotView(
                number,
                result.amount,
                result.rake,
                tuple((names.get(seats[j], ""), share) for j, share in sorted(shares.items())),
            )
        )
    return HoldemReplay(tuple(streets), tuple(pots), state.rake, positions)


def _record(streets: list[StreetView], previous: HandState, state: HandState, names: dict[int, str]) -> None:
    """Append what happened between ``previous`` and ``state`` (the engine's log) to the
    streets: the action, an uncalled bet returned when the round closed, the board cards
    dealt, the showdown."""
    seats = state.seats
    pot = sum(previous.committed) + sum(previous.bets)
    bets = list(previous.bets)
    closed = False

    def close_round() -> None:
        nonlocal pot, closed
        if closed:
            return
        closed = True
        returned = pot - sum(state.committed) - sum(state.bets)
        if returned > 0:
            j = max(range(len(bets)), key=lambda k: bets[k])
            streets[-1].actions.append(ActionLine(seats[j], names.get(seats[j], ""), "returned", returned))
            pot -= returned

    for event in state.log[len(previous.log) :]:
        if event.kind == "board":
            close_round()
            cards = tuple(card_code(c) for c in event.cards)
            board = (*streets[-1].board, *cards)
            streets.append(StreetView(STREETS[min(len(board) - 2, 3)], board, cards, pot))
            continue
        i = event.player
        seat = seats[i]
        name = names.get(seat, "")
        if event.kind in ("show", "muck"):
            close_round()
            if streets[-1].name != "showdown":
                streets.append(StreetView("showdown", streets[-1].board, (), sum(state.committed)))
            cards = tuple(card_code(c) for c in event.cards)
            label = ""
            if cards and state.hand_strengths:
                label = category_name(int(category_of_strength(int(state.hand_strengths[i]))))
            streets[-1].actions.append(ActionLine(seat, name, event.kind, cards=cards, category_label=label))
            continue
        put_in = 0
        if event.kind in ("bet", "raise"):
            put_in = event.amount - bets[i]
            bets[i] = event.amount
        elif event.kind == "call":
            put_in = event.amount
            bets[i] += event.amount
        pot += put_in
        left = previous.stacks[i] - put_in
        amount = event.amount if event.kind in ("bet", "raise", "call") else None
        streets[-1].actions.append(ActionLine(seat, name, event.kind, amount, left, left == 0 and put_in > 0))
    close_round()


def replay_context(hand: HoldemHand) -> dict[str, Any]:
    """The template's view of ``holdem_replay``: ``{"replay": HoldemReplay | None}``."""
    return {"replay": holdem_replay(hand)}
