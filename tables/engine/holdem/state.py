"""The hand of ring-game Texas Hold'em as an immutable state machine: ``HandState``, one decision
point; ``act`` returns the next. The rules and the doors in (``start_hand``, ``play_showdown``)
are described in tables/engine/holdem/start.py."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, fields
from typing import Final

import numpy as np
import numpy.typing as npt

from .actions import Action, ActionKind, Event, HandSetup, LegalActions, Phase, Street
from .dealing import deal_positions
from .errors import AmountTooLargeError, AmountTooSmallError, HandOverError, IllegalActionError, NotYourTurnError
from .pots import Pot, PotResult, _collect, build_pots, rake_pots, split_pot
from .showdown import best_strengths
from .structure import Betting, Structure
from .tuples import _add, _rotation, _set

__all__ = [
    "Action",
    "ActionKind",
    "Event",
    "HandSetup",
    "HandState",
    "LegalActions",
    "Phase",
    "Street",
]


@dataclass(frozen=True, slots=True)
class HandState:
    """An immutable snapshot of a hand; ``act`` returns the next one.

    Per-player tuples are in dealing order (``seats[k]`` is player ``k``'s table seat):
    ``stacks`` (chips behind), ``bets`` (this street, not yet collected), ``committed``
    (collected into the pots), ``folded``, ``mucked``, ``protected`` (timed out all-in).
    ``winnings``, ``rake`` and ``pot_results`` (each pot's amount, rake and winners, main
    pot first) are set when the phase is ``COMPLETE``; ``runout`` is true
    when the showdown came from an all-in before the river (all hands are then shown);
    ``hand_strengths`` (evaluator scale, higher is better) is filled at the showdown.
    """

    setup: HandSetup
    seats: tuple[int, ...]
    holes: tuple[tuple[int, int], ...]
    stacks: tuple[int, ...]
    bets: tuple[int, ...]
    committed: tuple[int, ...]
    folded: tuple[bool, ...]
    mucked: tuple[bool, ...]
    protected: tuple[bool, ...]
    street: Street = Street.PREFLOP
    phase: Phase = Phase.BETTING
    board: tuple[int, ...] = ()
    actors: tuple[int, ...] = ()
    increment: int = 0
    raise_count: int = 0
    acted: frozenset[int] = frozenset()
    short_all_ins: tuple[int, ...] = ()
    opener: int = 0
    showdown_queue: tuple[int, ...] = ()
    log: tuple[Event, ...] = ()
    winnings: tuple[int, ...] | None = None
    rake: int = 0
    pot_results: tuple[PotResult, ...] = ()
    runout: bool = False
    hand_strengths: tuple[int, ...] = ()
    starting_stacks: tuple[int, ...] = field(default=())

    def _evolve(self, **changes: object) -> HandState:
        """A copy with ``changes`` (as ``dataclasses.replace``, without its per-call overhead)."""
        assert _FIELD_SET.issuperset(changes), f"unknown fields {set(changes) - _FIELD_SET}"
        new = _copy_state(self)
        for name, value in changes.items():
            _SLOT_SETTERS[name](new, value)
        return new

    # -- views ------------------------------------------------------------------------

    @property
    def structure(self) -> Structure:
        """The table's stakes and limits (chips)."""
        return self.setup.structure

    @property
    def player_count(self) -> int:
        """Players dealt in (2..10)."""
        return len(self.seats)

    @property
    def is_over(self) -> bool:
        """True once the pots are awarded."""
        return self.phase is Phase.COMPLETE

    @property
    def actor(self) -> int | None:
        """Dealing-order index of the player to act or to show, or ``None``."""
        if self.phase is Phase.BETTING and self.actors:
            return self.actors[0]
        if self.phase is Phase.SHOWDOWN and self.showdown_queue:
            return self.showdown_queue[0]
        return None

    @property
    def to_act(self) -> int | None:
        """Table seat of the player to act or to show, or ``None`` when the hand is over."""
        actor = self.actor
        return None if actor is None else self.seats[actor]

    @property
    def total_pot(self) -> int:
        """All chips in the middle, collected or not, in chips."""
        return sum(self.committed) + sum(self.bets)

    def pots(self) -> tuple[Pot, ...]:
        """Main and side pots of the chips collected so far (current bets excluded)."""
        return build_pots(self.committed, self._live())

    def player_of(self, seat: int) -> int:
        """Dealing-order index of a seat; raises ``NotYourTurnError`` for a seat not dealt in."""
        try:
            return self.seats.index(seat)
        except ValueError:
            raise NotYourTurnError(f"seat {seat} is not dealt in this hand") from None

    def finishing_stacks(self) -> dict[int, int]:
        """Chips per seat after the hand (only meaningful when ``is_over``)."""
        return dict(zip(self.seats, self.stacks, strict=True))

    # -- legal actions ----------------------------------------------------------------

    def legal_actions(self) -> LegalActions:
        """The actions the player to act may take now, with amounts in chips.

        Fixed limit: a bet or raise is exactly one small bet (pre-flop, flop) or big bet
        (turn, river), at most ``structure.raise_caps[street]`` per round (seed 003, Some
        standard rules). No limit: minimum raise = the previous bet or raise increment,
        maximum = the stack. Pot limit: maximum raise-to = pot + all bets on the table +
        the call (seed 003, Pot-Limit). A raise is refused to a player who already acted
        when only incomplete all-in raises followed (``docs/holdem.md``). Folding is always
        offered, even when checking is free (seed 003, Some standard rules: "Folding can be
        done at any stage of the game"; pokerkit refuses that fold, see
        ``tests/engine/holdem/differential.py``). Raises ``HandOverError`` when the hand is
        complete.
        """
        if self.phase is Phase.COMPLETE:
            raise HandOverError("the hand is over")
        actor = self.actor
        assert actor is not None
        seat = self.seats[actor]
        if self.phase is Phase.SHOWDOWN:
            can_muck = not self.runout and actor != self._first_to_show() and not self._wins_something(actor)
            shows = (ActionKind.SHOW, ActionKind.MUCK) if can_muck else (ActionKind.SHOW,)
            return LegalActions(seat, shows)
        top = max(self.bets)
        stack, bet = self.stacks[actor], self.bets[actor]
        call = min(stack, top - bet)
        if stack < top - bet and not self.structure.call_all_in:
            # Seed 004 (BigHoldem), Rilancio: a player who cannot match the bet "deve passare
            # o abbandonare la mano": no call all-in for less, fold only.
            return LegalActions(seat, (ActionKind.FOLD,))
        # Seed 003, Some standard rules: "Folding can be done at any stage of the game".
        kinds: list[ActionKind] = [ActionKind.FOLD, ActionKind.CHECK if bet >= top else ActionKind.CALL]
        raise_range = self._raise_range(actor)
        all_in_to: int | None = None
        if raise_range is not None:
            kinds.append(ActionKind.BET if top == 0 else ActionKind.RAISE)
            if raise_range[1] == stack + bet:
                all_in_to = stack + bet
        if stack <= top - bet:
            all_in_to = stack + bet
        if all_in_to is not None:
            kinds.append(ActionKind.ALL_IN)
        low, high = raise_range if raise_range is not None else (None, None)
        return LegalActions(seat, tuple(kinds), call, low, high, all_in_to)

    def _active_stack(self, i: int) -> int:
        """Chips player ``i`` can still bet: zero when folded or protected (timed out)."""
        return 0 if self.folded[i] or self.protected[i] else self.stacks[i]

    def _raise_range(self, i: int) -> tuple[int, int] | None:
        """``(min_to, max_to)`` of a bet or raise by player ``i``, or ``None`` if not allowed."""
        top = max(self.bets)
        stack, bet = self.stacks[i], self.bets[i]
        call = min(stack, top - bet)
        cap = self.structure.raise_caps[self.street]
        if call < self.increment:
            return None  # what is left to call is only an incomplete all-in raise: closed
        if cap is not None and self.raise_count >= cap:
            return None
        if self.short_all_ins and sum(self.short_all_ins) < self.increment and i in self.acted:
            return None  # incomplete all-in raises do not reopen the betting
        if stack <= top - bet:
            return None  # covered: can only call (all-in) or fold
        if not any(j != i and self._active_stack(j) + self.bets[j] > top for j in range(self.player_count)):
            return None  # nobody left to call a raise
        street_bet = self.structure.street_bet(self.street)
        everything = stack + bet
        low = min(everything, max(self.increment, street_bet) + top)
        betting = self.structure.betting
        if betting is Betting.FIXED_LIMIT:
            high = low
        elif betting is Betting.POT_LIMIT:
            high = min(everything, max(low, 2 * top - bet + self.total_pot))
        else:
            high = everything
        return low, high

    # -- stepping ---------------------------------------------------------------------

    def act(self, action: Action) -> HandState:
        """The state after ``action``; this state is unchanged.

        Raises ``HandOverError`` (``hand_over``), ``NotYourTurnError``
        (``not_your_turn``), ``IllegalActionError`` (``illegal_action``),
        ``AmountTooSmallError`` (``amount_too_small``) or ``AmountTooLargeError``
        (``amount_too_large``).
        """
        if self.phase is Phase.COMPLETE:
            raise HandOverError("the hand is over")
        actor = self.actor
        assert actor is not None
        if action.seat != self.seats[actor]:
            raise NotYourTurnError(f"seat {self.seats[actor]} is to act, not seat {action.seat}")
        kind = action.kind
        if self.phase is Phase.SHOWDOWN:
            if kind not in self.legal_actions().kinds:
                raise IllegalActionError(f"{kind.value} is not allowed at showdown now")
            return self._show_or_muck(actor, show=kind is ActionKind.SHOW)
        if kind is ActionKind.TIMEOUT_ALL_IN:
            raise IllegalActionError("a timeout is applied by the clock (timed_out_all_in), not played")
        legal = self.legal_actions()
        if kind not in legal.kinds:
            raise IllegalActionError(f"{kind.value} is not allowed now")
        if kind is ActionKind.FOLD:
            return self._fold(actor)
        if kind in (ActionKind.CHECK, ActionKind.CALL):
            return self._check_or_call(actor, kind)
        if kind is ActionKind.ALL_IN:
            assert legal.all_in_to is not None
            if legal.min_to is None or legal.all_in_to <= max(self.bets):
                return self._check_or_call(
                    actor, ActionKind.CALL if max(self.bets) > self.bets[actor] else ActionKind.CHECK
                )
            return self._raise_to(actor, legal.all_in_to, kind)
        assert legal.min_to is not None and legal.max_to is not None
        amount = legal.min_to if action.amount is None else action.amount
        if not isinstance(amount, int) or isinstance(amount, bool):
            raise IllegalActionError(f"amount must be an integer number of chips, got {amount!r}")
        if amount < legal.min_to:
            raise AmountTooSmallError(f"{kind.value} to {amount} is below the minimum {legal.min_to}")
        if amount > legal.max_to:
            raise AmountTooLargeError(f"{kind.value} to {amount} is above the maximum {legal.max_to}")
        return self._raise_to(actor, amount, kind)

    def _fold(self, i: int) -> HandState:
        folded = _set(self.folded, i, True)
        state = self._evolve(
            folded=folded,
            actors=self.actors[1:],
            acted=self.acted | {i},
            log=(*self.log, Event(ActionKind.FOLD.value, i)),
        )
        return state._after_betting_action()

    def timed_out_all_in(self) -> HandState:
        """The player to act timed out with chips in the pot: he stays in for what is in.

        Seed 003, time limits ("the user goes all-in if he has contributed some chips to
        the pot"): he acts no more in this hand and can win only the pots he reached; his
        chips behind stay his. Called by ``clocks.apply_clock``. Raises
        ``HandOverError`` when the hand is over and ``IllegalActionError`` when it is not
        a betting decision or the player has put nothing in (he folds instead).
        """
        if self.phase is Phase.COMPLETE:
            raise HandOverError("the hand is over")
        i = self.actor
        if self.phase is not Phase.BETTING or i is None:
            raise IllegalActionError("a timeout all-in applies only to a betting decision")
        if self.committed[i] + self.bets[i] == 0:
            raise IllegalActionError("a player with no chips in the pot folds on timeout")
        state = self._evolve(
            protected=_set(self.protected, i, True),
            actors=self.actors[1:],
            acted=self.acted | {i},
            log=(*self.log, Event(ActionKind.TIMEOUT_ALL_IN.value, i)),
        )
        return state._after_betting_action()

    def _check_or_call(self, i: int, kind: ActionKind) -> HandState:
        amount = min(self.stacks[i], max(self.bets) - self.bets[i])
        state = self._evolve(
            stacks=_add(self.stacks, i, -amount),
            bets=_add(self.bets, i, amount),
            actors=self.actors[1:],
            acted=self.acted | {i},
            log=(*self.log, Event(kind.value, i, amount)),
        )
        return state._after_betting_action()

    def _raise_to(self, i: int, amount: int, kind: ActionKind) -> HandState:
        top = max(self.bets)
        increment = amount - top
        stacks = _add(self.stacks, i, -(amount - self.bets[i]))
        bets = _set(self.bets, i, amount)
        n = self.player_count
        order = [(i + k) % n for k in range(1, n)]
        actors = tuple(j for j in order if not self.folded[j] and not self.protected[j] and stacks[j] > 0)
        full = increment >= self.increment
        acted = frozenset({i}) if full else self.acted | {i}
        short = () if stacks[i] else (*self.short_all_ins, increment)
        new_increment = max(self.increment, increment)
        if sum(short) >= new_increment:
            short = ()
        name = "raise" if top else "bet"
        state = self._evolve(
            stacks=stacks,
            bets=bets,
            actors=actors,
            acted=acted,
            increment=new_increment,
            raise_count=self.raise_count + 1,
            short_all_ins=short,
            opener=i,
            log=(*self.log, Event(name, i, amount)),
        )
        return state._after_betting_action()

    def _after_betting_action(self) -> HandState:
        if not self.actors or sum(self._live()) <= 1:
            return self._end_betting()
        return self

    def _live(self) -> tuple[bool, ...]:
        return tuple(not f and not m for f, m in zip(self.folded, self.mucked, strict=True))

    def _end_betting(self) -> HandState:
        live = self._live()
        alone = sum(live) == 1
        stacks, committed = _collect(self.stacks, self.bets, self.committed)
        state = self._evolve(stacks=stacks, committed=committed, bets=(0,) * self.player_count, actors=())
        if alone:
            return state._settle()
        movers = sum(1 for i in range(self.player_count) if live[i] and state._active_stack(i) > 0)
        if self.street is Street.RIVER or movers <= 1:
            runout = len(state.board) < 5
            state = state._deal_board(5)
            queue = tuple(j for j in _rotation(self.opener, self.player_count) if live[j])
            state = state._evolve(phase=Phase.SHOWDOWN, showdown_queue=queue, runout=runout)
            return state._evolve(hand_strengths=tuple(int(v) for v in state.strengths()))
        street = Street(self.street + 1)
        state = state._deal_board((0, 3, 4, 5)[street])
        return state._evolve(street=street)._begin_betting(0)

    def _deal_board(self, count: int) -> HandState:
        if len(self.board) >= count:
            return self
        positions = deal_positions(self.player_count).board
        deck = self.setup.deck
        log = list(self.log)
        board = list(self.board)
        for street_cards in ((0, 3), (3, 4), (4, 5)):
            start, stop = street_cards
            if len(board) == start and stop <= count:
                cards = tuple(deck[p] for p in positions[start:stop])
                board.extend(cards)
                log.append(Event("board", -1, 0, cards))
        return self._evolve(board=tuple(board), log=tuple(log))

    def _begin_betting(self, opener: int) -> HandState:
        n = self.player_count
        live = self._live()
        totals = sorted(self._active_stack(j) + self.bets[j] for j in range(n) if live[j])
        second = totals[-2] if len(totals) > 1 else 0

        def effective(j: int) -> int:
            return min(self._active_stack(j), max(0, second - self.bets[j]))

        actors = tuple(j for j in _rotation(opener, n) if self._active_stack(j) > 0 and effective(j) > 0)
        state = self._evolve(
            actors=actors,
            opener=opener,
            increment=0,
            raise_count=0,
            acted=frozenset(),
            short_all_ins=(),
        )
        if not actors or (len(actors) == 1 and self.bets[actors[0]] >= max(self.bets)):
            return state._end_betting()
        return state

    # -- showdown ---------------------------------------------------------------------

    def _first_to_show(self) -> int:
        """Who opened the showdown: seed 003, Showdown (the last aggressor, else first to act)."""
        return next(j for j in _rotation(self.opener, self.player_count) if not self.folded[j])

    def strengths(self) -> npt.NDArray[np.uint16]:
        """Best-hand strength per player (uint16, higher is better); needs the full board."""
        if len(self.board) != 5:
            raise IllegalActionError("hands are compared only with the full board")
        return best_strengths(np.array(self.holes, dtype=np.uint8), np.array(self.board, dtype=np.uint8))

    def _wins_something(self, i: int) -> bool:
        return self.winning_players()[i]

    def winning_players(self) -> tuple[bool, ...]:
        """Per player: whether his hand is the best among the eligible of at least one pot.

        Needs the full board (``IllegalActionError`` otherwise); folded and mucked hands
        are out.
        """
        strengths = self.hand_strengths or tuple(int(v) for v in self.strengths())
        winners = [False] * self.player_count
        for pot in build_pots(self.committed, self._live()):
            best = max(strengths[j] for j in pot.eligible)
            for j in pot.eligible:
                winners[j] = winners[j] or strengths[j] == best
        return tuple(winners)

    def _show_or_muck(self, i: int, *, show: bool) -> HandState:
        event = Event("show", i, 0, self.holes[i]) if show else Event("muck", i)
        state = self._evolve(
            mucked=self.mucked if show else _set(self.mucked, i, True),
            showdown_queue=self.showdown_queue[1:],
            log=(*self.log, event),
        )
        return state if state.showdown_queue else state._settle()

    def _settle(self) -> HandState:
        live = self._live()
        if sum(live) > 1:
            # Losing hands leave first, then the pots are formed among the winning hands:
            # layers with the same contenders are one pot (docs/holdem.md, odd chips).
            live = self.winning_players()
        pots = build_pots(self.committed, live)
        # Each pot is raked on its own and its rake paid by its own winners (docs/holdem.md,
        # rake; as pokerkit): the main pot's winner never pays the side pot's rake.
        s = self.structure
        rakes = rake_pots(
            [p.amount for p in pots], rake_bps=s.rake_bps, rake_cap=s.rake_cap, flop_dealt=len(self.board) >= 3
        )
        winnings = [0] * self.player_count
        results: list[PotResult] = []
        alone = sum(self._live()) == 1
        strengths = () if alone else self.hand_strengths or tuple(int(v) for v in self.strengths())
        for pot, rake in zip(pots, rakes, strict=True):
            if alone:  # everyone else folded: he wins every pot
                winners: tuple[int, ...] = (live.index(True),)
            else:
                best = max(strengths[j] for j in pot.eligible)
                winners = tuple(j for j in pot.eligible if strengths[j] == best)
            for j, share in split_pot(pot.amount - rake, winners).items():
                winnings[j] += share
            results.append(PotResult(pot.amount, rake, winners))
        stacks = tuple(s + w for s, w in zip(self.stacks, winnings, strict=True))
        return self._evolve(
            stacks=stacks,
            phase=Phase.COMPLETE,
            winnings=tuple(winnings),
            rake=sum(rakes),
            pot_results=tuple(results),
            actors=(),
            showdown_queue=(),
        )


_FIELD_NAMES = tuple(f.name for f in fields(HandState))
_FIELD_SET = frozenset(_FIELD_NAMES)
# ``_evolve`` copies a state with one straight-line function over the slot descriptors
# (generated once here: no loop, no per-field name lookups), then sets the changed fields;
# a loop of ``getattr`` and ``object.__setattr__`` over the 27 fields took about a quarter
# of an action's time (issue 23, item 8).
_SLOT_SETTERS: Final[dict[str, Callable[[HandState, object], None]]] = {
    name: HandState.__dict__[name].__set__ for name in _FIELD_NAMES
}


def _make_copier() -> Callable[[HandState], HandState]:
    namespace: dict[str, object] = {"_new": object.__new__, "HandState": HandState}
    lines = ["def _copy_state(state):", "    new = _new(HandState)"]
    for index, name in enumerate(_FIELD_NAMES):
        namespace[f"_set{index}"] = _SLOT_SETTERS[name]
        lines.append(f"    _set{index}(new, state.{name})")
    lines.append("    return new")
    exec("\n".join(lines), namespace)  # the source is built from the dataclass's own field names
    copier = namespace["_copy_state"]
    assert callable(copier)
    return copier


_copy_state: Final = _make_copier()
