"""Differential driver: the same random hands through our engine and through pokerkit.

Each hand gets a random table (2..10 players, empty seats, a random button), unequal
stacks (some shorter than the blinds or the ante), antes, one of the three betting
structures and a shuffled deck. Our engine picks a random legal action; the same action is
applied to a pokerkit ``State`` built with the same streets, caps and blinds, dealt the same
cards by the dealing contract. At every decision the actor, the fold/check/call options
and the bet/raise range must agree; at showdown the pots must agree; at the end the
finishing stacks must agree chip for chip.

Pokerkit is configured, not patched: its ``FixedLimitTexasHoldem`` allows four raises
over the big blind pre-flop, so the fixed-limit state is built from ``Street`` objects
with our caps (``SEED_LIMIT_CAPS``: three raises pre-flop, the blind being the first of
the four bets, seed 003 Some standard rules); ante trimming is on (antes are ordinary
contributions to the pots). Rake is off by default; with a rake pokerkit rakes each pot
with our rounding, no-flop-no-drop and per-hand cap (``docs/holdem.md``, rake), and the
finishing stacks must agree on every hand, side pots included.
"""

from __future__ import annotations

import random
from dataclasses import dataclass, field

import pokerkit as pk

from tables.engine.cards import card_code
from tables.engine.holdem import (
    Action,
    ActionKind,
    Betting,
    HandSetup,
    HandState,
    Phase,
    Structure,
    build_pots,
    deal_positions,
    play_showdown,
    start_hand,
)

_BETTING = {
    Betting.FIXED_LIMIT: pk.BettingStructure.FIXED_LIMIT,
    Betting.NO_LIMIT: pk.BettingStructure.NO_LIMIT,
    Betting.POT_LIMIT: pk.BettingStructure.POT_LIMIT,
}

_AUTOMATIONS = (
    pk.Automation.ANTE_POSTING,
    pk.Automation.BET_COLLECTION,
    pk.Automation.BLIND_OR_STRADDLE_POSTING,
    pk.Automation.HAND_KILLING,
    pk.Automation.CHIPS_PUSHING,
    pk.Automation.CHIPS_PULLING,
)


class DisagreementError(AssertionError):
    """Our engine and pokerkit disagree; the message says where."""


@dataclass
class HandReport:
    """One compared hand: its seed, our final state, pokerkit's stacks and what was checked."""

    seed: int
    state: HandState
    pokerkit_stacks: tuple[int, ...]
    decisions: int = 0
    pots_compared: bool = False
    notes: list[str] = field(default_factory=list)


def random_setup(rng: random.Random, betting: Betting | None = None) -> HandSetup:
    """A random table: 2..10 players among up to 10 seats, unequal stacks, antes half the time."""
    betting = betting or rng.choice(list(Betting))
    players = rng.randint(2, 10)
    seat_count = rng.randint(players, 10)
    occupied = sorted(rng.sample(range(seat_count), players))
    big = rng.choice([2, 4, 10, 20])
    small = rng.choice([0, big // 4, big // 2, big // 2, big // 2, big])
    ante = rng.choice([0, 0, 1, big // 4, big // 2])
    if betting is Betting.FIXED_LIMIT:
        structure = Structure.fixed_limit(big, 2 * big, small_blind=small, ante=ante)
    elif betting is Betting.NO_LIMIT:
        structure = Structure.no_limit(small, big, ante=ante)
    else:
        structure = Structure.pot_limit(small, big, ante=ante)
    stacks: list[int | None] = [None] * seat_count
    for seat in occupied:
        roll = rng.random()
        if roll < 0.1:
            stacks[seat] = rng.randint(1, big + ante + 1)  # shorter than the forced bets
        elif roll < 0.5:
            stacks[seat] = rng.randint(big, 20 * big)
        else:
            stacks[seat] = rng.randint(20 * big, 200 * big)
    deck = list(range(52))
    rng.shuffle(deck)
    return HandSetup(structure, tuple(stacks), rng.choice(occupied), tuple(deck))


def random_action(rng: random.Random, state: HandState) -> Action:
    """A random legal action, weighted towards playable hands (few folds, some all-ins)."""
    legal = state.legal_actions()
    weights = {
        ActionKind.FOLD: 2,
        ActionKind.CHECK: 5,
        ActionKind.CALL: 5,
        ActionKind.BET: 3,
        ActionKind.RAISE: 3,
        ActionKind.ALL_IN: 1,
    }
    # Seed 003 lets a player fold when checking is free; pokerkit refuses that fold
    # ("There is no reason for this player to fold"), so the driver never plays it
    # (``_check_decision`` accounts for the option itself).
    free_fold = ActionKind.CHECK in legal.kinds
    kinds = [k for k in legal.kinds if k in weights and not (free_fold and k is ActionKind.FOLD)]
    kind = rng.choices(kinds, [weights[k] for k in kinds])[0]
    amount = None
    if kind in (ActionKind.BET, ActionKind.RAISE):
        assert legal.min_to is not None and legal.max_to is not None
        amount = rng.choice([legal.min_to, legal.max_to, rng.randint(legal.min_to, legal.max_to)])
    return Action(kind, legal.seat, amount)


def pokerkit_state(setup: HandSetup, n: int) -> pk.State:
    """A pokerkit state with our structure: same streets, caps, blinds, antes and stacks.

    With a rake, pokerkit gets a rake function applied to each pot, written here from the
    rule of docs/holdem.md (not from our engine): ``floor(pot * bps / 10000)``, nothing
    without a flop, and when 5% of the hand's whole pot passes the cap, each pot pays
    ``floor(cap * pot / whole pot)``. The whole pot is what the players put in and did not
    take back (bets not yet collected excluded), read from pokerkit's own state.
    """
    structure = setup.structure

    def rake(amount: int, state: pk.State) -> tuple[int, int]:
        if not any(state.board_cards) or not structure.rake_bps:
            return 0, amount
        whole = sum(state.starting_stacks) - sum(state.stacks) - sum(state.bets)
        cap = structure.rake_cap
        if cap is not None and whole * structure.rake_bps // 10_000 > cap:
            taken = cap * amount // whole
        else:
            taken = amount * structure.rake_bps // 10_000
        return taken, amount - taken

    streets = tuple(
        pk.Street(
            street > 0,
            (False, False) if street == 0 else (),
            (0, 3, 1, 1)[street],
            False,
            pk.Opening.POSITION,
            structure.street_bet(street),
            structure.raise_caps[street],
        )
        for street in range(4)
    )
    seats = sorted(
        (s for s, v in enumerate(setup.stacks) if v is not None and s not in setup.waiting),
        key=lambda s: (s - setup.button - 1) % len(setup.stacks),
    )
    stacks = [int(setup.stacks[s] or 0) for s in seats]
    blinds = [structure.small_blind, structure.big_blind] + [0] * (n - 2)
    return pk.State(
        _AUTOMATIONS,
        pk.Deck.STANDARD,
        (pk.StandardHighHand,),
        streets,
        _BETTING[structure.betting],
        True,
        structure.ante,
        blinds,
        0,
        stacks,
        n,
        rake=rake,
    )


def _advance(game: pk.State, setup: HandSetup, n: int, final: HandState | None) -> None:
    """Run pokerkit's dealer steps (and, once our showdown is known, its show-or-muck)."""
    positions = deal_positions(n)
    deck = setup.deck
    burns = list(positions.burns)
    board = [positions.flop, (positions.turn,), (positions.river,)]
    while True:
        if game.can_deal_hole():
            i = game.hole_dealee_index
            assert i is not None
            position = positions.holes[i][len(game.hole_cards[i])]
            game.deal_hole(card_code(deck[position]))
        elif game.can_burn_card():
            game.burn_card(card_code(deck[burns[len(game.burn_cards)]]))
        elif game.can_deal_board():
            dealt = len(game.board_cards)
            street = {0: 0, 3: 1, 4: 2}[dealt]
            game.deal_board("".join(card_code(deck[p]) for p in board[street]))
        elif final is not None and game.can_show_or_muck_hole_cards():
            i = game.showdown_index
            assert i is not None
            game.show_or_muck_hole_cards(not final.mucked[i], i)
        else:
            return


def _check_decision(game: pk.State, state: HandState) -> None:
    legal = state.legal_actions()
    actor = state.actor
    if game.actor_index != actor:
        raise DisagreementError(f"actor: pokerkit {game.actor_index}, ours {actor}")
    ours_fold = ActionKind.FOLD in legal.kinds
    # Seed 003 (Some standard rules): "Folding can be done at any stage of the game", also
    # when checking is free, where pokerkit refuses the fold. Everywhere else they agree.
    # So: pokerkit offers the fold exactly when there is something to call, and we always do.
    if game.can_fold() != (legal.call_amount > 0) or not ours_fold:
        raise DisagreementError(f"fold allowed: pokerkit {game.can_fold()}, ours {ours_fold}")
    if game.checking_or_calling_amount != legal.call_amount:
        raise DisagreementError(f"call amount: pokerkit {game.checking_or_calling_amount}, ours {legal.call_amount}")
    theirs = (game.min_completion_betting_or_raising_to_amount, game.max_completion_betting_or_raising_to_amount)
    if theirs != (legal.min_to, legal.max_to):
        raise DisagreementError(f"raise range: pokerkit {theirs}, ours {(legal.min_to, legal.max_to)}")


def _apply(game: pk.State, state: HandState, action: Action) -> None:
    kind = action.kind
    legal = state.legal_actions()
    if kind is ActionKind.FOLD:
        game.fold()
    elif kind in (ActionKind.CHECK, ActionKind.CALL):
        game.check_or_call()
    elif kind is ActionKind.ALL_IN:
        assert legal.all_in_to is not None
        if legal.min_to is None or legal.all_in_to <= max(state.bets):
            game.check_or_call()
        else:
            game.complete_bet_or_raise_to(legal.all_in_to)
    else:
        game.complete_bet_or_raise_to(action.amount if action.amount is not None else legal.min_to)


def compare_hand(
    seed: int, betting: Betting | None = None, *, rake_bps: int = 0, rake_cap: int | None = None
) -> HandReport:
    """Play hand ``seed`` through both engines; raise ``DisagreementError`` on any difference.

    With a rake both engines rake pot by pot, so the finishing stacks are compared on every
    hand, side pots included; the one documented difference left (a fold-win's final-street
    bet, docs/holdem.md) is checked to be exactly that and noted in ``report.notes``.
    """
    rng = random.Random(seed)
    setup = random_setup(rng, betting)
    if rake_bps:
        s = setup.structure
        structure = Structure(
            s.betting, s.small_blind, s.big_blind, s.small_bet, s.big_bet, s.ante, s.raise_caps, rake_bps, rake_cap
        )
        setup = HandSetup(structure, setup.stacks, setup.button, setup.deck)
    state = start_hand(setup)
    n = state.player_count
    game = pokerkit_state(setup, n)
    _advance(game, setup, n, None)
    report = HandReport(seed, state, ())
    while state.phase is Phase.BETTING:
        _check_decision(game, state)
        action = random_action(rng, state)
        _apply(game, state, action)
        state = state.act(action)
        report.decisions += 1
        _advance(game, setup, n, None)
    if state.phase is Phase.SHOWDOWN:
        ours = build_pots(state.committed, [not f for f in state.folded])
        theirs = tuple((p.amount, p.player_indices) for p in game.pots)
        if theirs != tuple((p.amount, p.eligible) for p in ours):
            raise DisagreementError(f"pots: pokerkit {theirs}, ours {ours}")
        report.pots_compared = True
        state = play_showdown(state, muck_losers=rng.random() < 0.5)
    _advance(game, setup, n, state)
    if game.status:
        raise DisagreementError("pokerkit's hand is not over when ours is")
    report.state = state
    report.pokerkit_stacks = tuple(game.stacks)
    if state.rake and sum(not f for f in state.folded) == 1 and report.pokerkit_stacks != state.stacks:
        # Documented difference (docs/holdem.md, rake): when everyone else folds, pokerkit
        # leaves the winner's whole final-street bet out of the raked pot; we rake the part
        # of it that was called. Everyone else agrees; the winner differs by that rake only.
        winner = state.folded.index(False)
        theirs_rake = sum(state.starting_stacks) - sum(report.pokerkit_stacks)
        others_agree = all(
            a == b for k, (a, b) in enumerate(zip(report.pokerkit_stacks, state.stacks, strict=True)) if k != winner
        )
        if not (others_agree and 0 <= theirs_rake < state.rake):
            raise DisagreementError(f"raked fold-win: pokerkit {report.pokerkit_stacks}, ours {state.stacks}")
        if report.pokerkit_stacks[winner] - state.stacks[winner] != state.rake - theirs_rake:
            raise DisagreementError("raked fold-win: the winner differs by more than the rake difference")
        report.notes.append("fold-win rake: pokerkit does not rake the winner's called final-street bet")
        return report
    if report.pokerkit_stacks != state.stacks:
        raise DisagreementError(f"finishing stacks: pokerkit {report.pokerkit_stacks}, ours {state.stacks}")
    return report
