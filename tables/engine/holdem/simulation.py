"""Matches between simulated players: win rates in big blinds per 100 hands.

Seed 004 (``004_9968266ac0af5695.txt``), *Gioco automatico*: a game "giocata da giocatori
tutti simulati dal programma". ``play_match`` deals ``hands`` no-limit hands (blinds 1/2
and 200-chip stacks reset every hand unless told otherwise) between a hero (seat 0) and
copies of one opponent in the other seats. Each shuffled deck is played once with the
button on every seat, so every player in turn gets every position's cards (duplicate
deals: the luck of the cards largely cancels). The decks come from a ``numpy``
``Generator`` seeded by ``seed``; the hero and the opponents draw from their own
generators spawned from the same seed. ``docs/holdem.md``, *Bots*.

>>> from tables.engine.holdem.bots import calling_station
>>> result = play_match(calling_station, calling_station, hands=4, seed=1)
>>> result.hands, result.hero_net + result.opponents_net
(4, 0)
"""

from __future__ import annotations

import math
from collections.abc import Callable
from dataclasses import dataclass, field

import numpy as np
from numpy.random import Generator, SeedSequence, default_rng

from .bots import DEFAULT_SAMPLES, Personality, decide
from .start import start_hand
from .state import Action, HandSetup, HandState
from .structure import Structure

__all__ = ["BotPlayer", "MatchResult", "Player", "play_match"]

Player = Callable[[HandState, Generator], Action]
"""A decision function: the state with this player to act and his random stream -> an action."""


@dataclass(frozen=True, slots=True)
class BotPlayer:
    """A ``Player`` that calls ``decide`` with a personality and a Monte Carlo sample size."""

    personality: Personality
    samples: int = DEFAULT_SAMPLES

    def __call__(self, state: HandState, rng: Generator) -> Action:
        return decide(state, self.personality, rng, samples=self.samples)


@dataclass(frozen=True, slots=True)
class MatchResult:
    """The hero's result over a match, in chips and in big blinds per 100 hands.

    ``hero_net``: chips won (negative: lost) over all hands; ``opponents_net`` the others'
    total (the two sum to zero without rake). ``bb_per_100``: the hero's win rate;
    ``std_error``: its standard error (bb/100) over the deck groups (each deck played
    once per button position). ``hero_decisions``: betting decisions the hero made;
    ``vpip``: share of hands the hero put chips in voluntarily pre-flop; ``aggression``:
    his bets and raises per call (all streets).
    """

    hands: int
    hero_net: int
    opponents_net: int
    big_blind: int
    bb_per_100: float
    std_error: float
    hero_decisions: int
    vpip: float
    aggression: float
    group_nets: tuple[int, ...] = field(repr=False, default=())


def play_match(
    hero: Player,
    opponent: Player,
    *,
    hands: int,
    seed: int,
    players: int = 2,
    structure: Structure | None = None,
    stack: int = 200,
) -> MatchResult:
    """Play ``hands`` hands (rounded up to a multiple of ``players``) and measure the hero.

    ``hero`` sits in seat 0, ``opponent`` in seats ``1 .. players - 1`` (2..10 players);
    every hand starts from ``stack`` chips each (default 200) with ``structure`` (default
    no limit 1/2). Deck ``k`` is ``Generator.permutation(52)`` of the deck stream and is
    dealt ``players`` times, the button on seat 0, 1, ...; showdowns go through the
    players' own show/muck decisions. Streams: ``SeedSequence(seed).spawn(3)`` gives the
    decks, the hero and the opponents. Same arguments, same result. Raises ``ValueError``
    for ``hands < 1`` or a bad player count.
    """
    if hands < 1 or not 2 <= players <= 10:
        raise ValueError(f"need hands >= 1 and 2..10 players, got {hands} and {players}")
    structure = structure or Structure.no_limit(1, 2)
    deck_seq, hero_seq, opponent_seq = SeedSequence(seed).spawn(3)
    decks, hero_rng, opponent_rng = (default_rng(s) for s in (deck_seq, hero_seq, opponent_seq))
    groups = math.ceil(hands / players)
    group_nets: list[int] = []
    hero_net = opponents_net = decisions = voluntary = raises = calls = 0
    for _ in range(groups):
        deck = tuple(int(c) for c in decks.permutation(52))
        group = 0
        for button in range(players):
            state = start_hand(HandSetup(structure, (stack,) * players, button, deck))
            put_in = False
            while not state.is_over:
                if state.to_act == 0:
                    action = hero(state, hero_rng)
                    kind = action.kind.value
                    if kind in ("bet", "raise", "call", "all_in", "check", "fold"):
                        decisions += 1
                        raises += kind in ("bet", "raise", "all_in")
                        calls += kind == "call"
                        put_in = put_in or (state.street == 0 and kind in ("bet", "raise", "call", "all_in"))
                else:
                    action = opponent(state, opponent_rng)
                state = state.act(action)
            finish = state.finishing_stacks()
            net = finish[0] - stack
            hero_net += net
            opponents_net += sum(finish[s] - stack for s in range(1, players))
            group += net
            voluntary += put_in
        group_nets.append(group)
    played = groups * players
    per_hand = np.array(group_nets, dtype=np.float64) / players
    scale = 100 / structure.big_blind
    error = float(per_hand.std(ddof=1) / math.sqrt(groups)) * scale if groups > 1 else math.inf
    return MatchResult(
        hands=played,
        hero_net=hero_net,
        opponents_net=opponents_net,
        big_blind=structure.big_blind,
        bb_per_100=hero_net / played * scale,
        std_error=error,
        hero_decisions=decisions,
        vpip=voluntary / played,
        aggression=raises / calls if calls else math.inf,
        group_nets=tuple(group_nets),
    )
