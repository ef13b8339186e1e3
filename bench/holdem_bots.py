"""Benchmark: the simulated Hold'em players' win rates against the baselines, and their speed.

Run from the repository root:

    .venv/bin/python bench/holdem_bots.py --hands 100000

Every personality of ``tables.engine.holdem.bots`` plays ``--hands`` heads-up no-limit
hands (blinds 1/2, 200-chip stacks reset every hand, duplicate deals: each deck once with
each player on the button) against the random player and against the calling station,
one match per pair on ``--workers`` processes. ``--players 6`` seats the bot against five
copies of each baseline instead. Prints two markdown tables ready for
``docs/holdem.md``, *Bots*: win rates in big blinds per 100 hands with their standard
error (a personality passes when it beats both baselines by at least 2 standard errors),
and decisions per second (in the matches, with the equity cache as play fills it; and
cold post-flop decisions, every one a fresh Monte Carlo equity).
"""

from __future__ import annotations

import argparse
import os
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from numpy.random import Generator

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tables.engine.holdem import (  # noqa: E402
    PERSONALITIES,
    Action,
    BotPlayer,
    HandSetup,
    HandState,
    MatchResult,
    Phase,
    Street,
    Structure,
    bots,
    calling_station,
    decide,
    play_match,
    random_action,
    start_hand,
)
from tables.engine.holdem.bots import DEFAULT_SAMPLES  # noqa: E402

BASELINES = {"random": random_action, "station": calling_station}


@dataclass
class TimedPlayer:
    """A bot whose decisions are timed (the engine has no clock; the bench has)."""

    bot: BotPlayer
    seconds: float = 0.0

    def __call__(self, state: HandState, rng: Generator) -> Action:
        start = time.perf_counter()
        action = self.bot(state, rng)
        self.seconds += time.perf_counter() - start
        return action


def run_match(job: tuple[int, str, int, int, int, int]) -> tuple[int, str, MatchResult, float, float]:
    """One personality against one baseline: its result, decision seconds and wall seconds."""
    index, baseline, hands, seed, samples, players = job
    hero = TimedPlayer(BotPlayer(PERSONALITIES[index], samples))
    start = time.perf_counter()
    result = play_match(hero, BASELINES[baseline], hands=hands, seed=seed, players=players)
    return index, baseline, result, hero.seconds, time.perf_counter() - start


def cold_postflop_rate(samples: int, count: int = 2_000) -> float:
    """Decisions per second on distinct post-flop states (equity never cached)."""
    rng = np.random.default_rng(404)
    states: list[HandState] = []
    while len(states) < count:
        deck = tuple(int(c) for c in rng.permutation(52))
        state = start_hand(HandSetup(Structure.no_limit(1, 2), (200, 200), 0, deck))
        while not state.is_over:
            if state.phase is Phase.BETTING and state.street is not Street.PREFLOP:
                states.append(state)
            state = state.act(calling_station(state, rng))
    states = states[:count]
    personality = PERSONALITIES[2]
    bots._postflop_equity.cache_clear()
    seconds = 0.0
    for k, state in enumerate(states):
        start = time.perf_counter()
        decide(state, personality, np.random.default_rng(k), samples=samples)
        seconds += time.perf_counter() - start
    return count / seconds


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=100_000)
    parser.add_argument("--seed", type=int, default=2026)
    parser.add_argument("--samples", type=int, default=DEFAULT_SAMPLES)
    parser.add_argument("--players", type=int, default=2, help="2 (heads-up) .. 10: the bot against players - 1 copies")
    parser.add_argument("--workers", type=int, default=os.cpu_count() or 1)
    args = parser.parse_args()
    jobs = [
        (i, name, args.hands, args.seed, args.samples, args.players)
        for i in range(len(PERSONALITIES))
        for name in BASELINES
    ]
    results: dict[tuple[int, str], tuple[MatchResult, float, float]] = {}
    with ProcessPoolExecutor(max_workers=args.workers) as pool:
        for index, name, result, seconds, wall in pool.map(run_match, jobs):
            results[index, name] = (result, seconds, wall)
    table = "heads-up" if args.players == 2 else f"{args.players}-handed (the bot against {args.players - 1} copies)"
    print(f"{args.hands:,} hands per match, {table}, no limit 1/2, 200 chips, seed {args.seed}\n")
    print("| personality | vs random (bb/100) | margin | vs calling station (bb/100) | margin | VPIP | ok |")
    print("| --- | --- | --- | --- | --- | --- | --- |")
    for i, personality in enumerate(PERSONALITIES):
        cells = []
        passed = True
        for name in BASELINES:
            result = results[i, name][0]
            margin = result.bb_per_100 / result.std_error
            passed = passed and margin >= 2
            cells += [f"{result.bb_per_100:+.1f} ± {result.std_error:.1f}", f"{margin:.1f} SE"]
        vpip = results[i, "station"][0].vpip
        verdict = "yes" if passed else "NO"
        print(f"| {personality.name} | {' | '.join(cells)} | {vpip:.0%} | {verdict} |")
    decisions = sum(r.hero_decisions for r, _, _ in results.values())
    seconds = sum(s for _, s, _ in results.values())
    wall = sum(w for _, _, w in results.values())
    hands = sum(r.hands for r, _, _ in results.values())
    print("\n| figure | target | measured |")
    print("| --- | --- | --- |")
    print(f"| bot decisions per second in the matches | >= 1,000 | {decisions / seconds:,.0f} |")
    print(f"| bot decisions per second, cold post-flop ({args.samples} deals) | (info) | ", end="")
    print(f"{cold_postflop_rate(args.samples):,.0f} |")
    print(f"| hands per second per worker (engine + both players) | (info) | {hands / wall:,.0f} |")


if __name__ == "__main__":
    main()
