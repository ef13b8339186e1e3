"""One hand of ring-game Texas Hold'em as an explicitly stepped, immutable state machine.

``start_hand(setup)`` posts antes and blinds, deals by the contract of ``dealing.py`` and
returns the first ``HandState``; ``state.act(action)`` returns the next state and never
changes the one it is called on; an illegal action raises a ``HoldemError`` subclass with
a stable ``code``. Players are numbered in dealing order (index 0 is the first dealt seat
left of the button; heads-up the big blind), which is also PHH's ``p1 .. pn``; actions
and public views speak table seat numbers.

The rules are seed 003 (``003_c848e011f7df0184.txt``): The First round (button, blinds,
a new player's big blind), The Second .. Fourth Round (street order and fixed-limit
sizes), Some standard rules (four-bet cap, table stakes, all-in and side pots), the
No-Limit and Pot-Limit betting structures, and Showdown. Decisions where the seed is
silent are in ``docs/holdem.md``, "Rules as implemented". The betting-round bookkeeping
(who may still act, when an incomplete all-in raise reopens the betting) follows the
standard rule as pokerkit implements it, against which ``tests/engine/holdem`` runs a
differential test.
"""

from __future__ import annotations

from ..cards import DECK_SIZE
from .actions import Action, ActionKind, HandSetup, Phase
from .dealing import MAX_PLAYERS, MIN_PLAYERS, deal_positions
from .errors import SetupError
from .pots import _collect
from .state import HandState

__all__ = ["play_showdown", "start_hand"]


def _check_setup(setup: HandSetup) -> list[int]:
    """Validate a setup and return the dealt seats in dealing order."""
    seat_count = len(setup.stacks)
    if not MIN_PLAYERS <= seat_count <= MAX_PLAYERS:
        raise SetupError(f"a table has {MIN_PLAYERS}..{MAX_PLAYERS} seats, got {seat_count}")
    deck = setup.deck
    if len(deck) != DECK_SIZE or sorted(deck) != list(range(DECK_SIZE)):
        raise SetupError("the deck must hold the 52 card ids 0..51 once each")
    dealt = [s for s, stack in enumerate(setup.stacks) if stack is not None and s not in setup.waiting]
    for s in dealt:
        stack = setup.stacks[s]
        if not isinstance(stack, int) or isinstance(stack, bool) or stack <= 0:
            raise SetupError(f"seat {s} must have a positive integer stack, got {stack!r}")
    if setup.button not in dealt:
        raise SetupError(f"the button seat {setup.button} must be dealt in")
    if not setup.posting <= set(dealt):
        raise SetupError("posting seats must be dealt in")
    if len(dealt) < MIN_PLAYERS:
        raise SetupError("a hand needs at least two players dealt in")
    return sorted(dealt, key=lambda s: (s - setup.button - 1) % seat_count)


def start_hand(setup: HandSetup) -> HandState:
    """Post antes and blinds, deal the hole cards and return the first decision point.

    Seed 003, The First round: the player left of the button posts the small blind, the
    next the big blind (heads-up: the button posts the small blind and acts first
    pre-flop); antes (if any) come first; a short stack posts what it has. Seats in
    ``setup.posting`` post a live big blind out of position. Raises ``SetupError`` for an
    invalid setup.
    """
    order = _check_setup(setup)
    structure = setup.structure
    n = len(order)
    starting = tuple(int(setup.stacks[s] or 0) for s in order)
    positions = deal_positions(n)
    holes = tuple((setup.deck[a], setup.deck[b]) for a, b in positions.holes)
    antes = tuple(min(structure.ante, s) for s in starting)
    stacks = tuple(s - a for s, a in zip(starting, antes, strict=True))
    stacks, committed = _collect(stacks, antes, (0,) * n)
    small, big = (1, 0) if n == 2 else (0, 1)
    blind_amounts = [0] * n
    blind_amounts[small] = structure.small_blind
    blind_amounts[big] = structure.big_blind
    for k, seat in enumerate(order):
        if seat in setup.posting and k not in (small, big):
            blind_amounts[k] = structure.big_blind
    bets = tuple(min(b, s) for b, s in zip(blind_amounts, stacks, strict=True))
    stacks = tuple(s - b for s, b in zip(stacks, bets, strict=True))
    configured = {small: structure.small_blind, big: structure.big_blind}
    top = max(range(n), key=lambda j: (bets[j] if configured.get(j, 0) > 0 else 0, j))
    state = HandState(
        setup=setup,
        seats=tuple(order),
        holes=holes,
        stacks=stacks,
        bets=bets,
        committed=committed,
        folded=(False,) * n,
        mucked=(False,) * n,
        protected=(False,) * n,
        starting_stacks=starting,
    )
    return state._begin_betting((top + 1) % n)


def play_showdown(state: HandState, *, muck_losers: bool = True) -> HandState:
    """Step through the showdown: every player shows, except losers who muck when allowed.

    Seed 003, Showdown: the first player in order must show; afterwards a player may keep
    his cards hidden when they win nothing, except after an all-in run-out, where every
    hand is turned up (``docs/holdem.md``). Returns the state unchanged when it is not at
    showdown.
    """
    while state.phase is Phase.SHOWDOWN:
        legal = state.legal_actions()
        kind = ActionKind.MUCK if muck_losers and ActionKind.MUCK in legal.kinds else ActionKind.SHOW
        state = state.act(Action(kind, legal.seat))
    return state
