"""Benchmark: the cost of stepping a Hold'em hand (random legal play, showdown included).

Run from the repository root:

    .venv/bin/python bench/holdem_step.py --hands 3000

Plays random hands (2..10 players, all three betting structures, the setups of
``tests/engine/holdem/differential.py``) with our engine alone. Prints the mean cost per
action (``legal_actions`` plus ``act``), per showdown, and hands per second; the random
choice of actions is timed separately and excluded.
"""

from __future__ import annotations

import argparse
import random
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tables.engine.holdem import Phase, play_showdown, start_hand  # noqa: E402
from tests.engine.holdem.differential import random_action, random_setup  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=3_000)
    args = parser.parse_args()
    rng = random.Random(7)
    setups = [random_setup(rng) for _ in range(args.hands)]
    actions = 0
    step_s = choose_s = showdown_s = start_s = 0.0
    wall = time.perf_counter()
    for setup in setups:
        t0 = time.perf_counter()
        state = start_hand(setup)
        start_s += time.perf_counter() - t0
        while state.phase is Phase.BETTING:
            t0 = time.perf_counter()
            action = random_action(rng, state)
            t1 = time.perf_counter()
            state.legal_actions()
            state = state.act(action)
            t2 = time.perf_counter()
            choose_s += t1 - t0
            step_s += t2 - t1
            actions += 1
        t0 = time.perf_counter()
        state = play_showdown(state)
        showdown_s += time.perf_counter() - t0
    wall = time.perf_counter() - wall
    engine_s = start_s + step_s + showdown_s
    print(f"hands: {args.hands}, actions: {actions} ({actions / args.hands:.1f} per hand)")
    print(f"start_hand: {1e6 * start_s / args.hands:.1f} us per hand")
    print(f"step (legal_actions + act): {1e6 * step_s / max(1, actions):.1f} us per action")
    print(f"showdown and settlement: {1e6 * showdown_s / args.hands:.1f} us per hand")
    print(f"engine only: {args.hands / engine_s:.0f} hands/s; with the random player: {args.hands / wall:.0f} hands/s")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
