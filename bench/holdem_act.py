"""Benchmark: one Hold'em action, our engine's ``act`` against pokerkit's action call.

Run from the repository root (pokerkit is a dev dependency):

    .venv/bin/python bench/holdem_act.py --hands 1500 --rounds 3

Plays random hands (2..10 players, the three betting structures, antes and short stacks:
``tests/engine/holdem/differential.py``) once, untimed, recording each action; then, in
every round, replays the same actions through ``HandState.act`` and through pokerkit's
``fold`` / ``check_or_call`` / ``complete_bet_or_raise_to`` (its dealing steps are run
untimed: our ``act`` deals the board itself, so pokerkit's figure is its action call alone,
the comparison least favourable to us). Prints µs per action, min / median over rounds,
and pokerkit / ours per round (issue 23, item 8; the audit measured 43-67 µs against 39 µs).
"""

from __future__ import annotations

import argparse
import random
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from tables.engine.holdem import ActionKind, Phase, start_hand  # noqa: E402
from tests.engine.holdem.differential import _advance, pokerkit_state, random_action, random_setup  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=1_500)
    parser.add_argument("--rounds", type=int, default=3)
    args = parser.parse_args()
    rng = random.Random(11)
    hands = []  # (setup, [(state before, action, pokerkit call name, amount)])
    for _ in range(args.hands):
        setup = random_setup(rng)
        state = start_hand(setup)
        steps = []
        while state.phase is Phase.BETTING:
            action = random_action(rng, state)
            legal = state.legal_actions()
            if action.kind is ActionKind.FOLD:
                call, amount = "fold", None
            elif action.kind in (ActionKind.CHECK, ActionKind.CALL):
                call, amount = "check_or_call", None
            elif action.kind is ActionKind.ALL_IN:
                assert legal.all_in_to is not None
                if legal.min_to is None or legal.all_in_to <= max(state.bets):
                    call, amount = "check_or_call", None
                else:
                    call, amount = "complete_bet_or_raise_to", legal.all_in_to
            else:
                call, amount = "complete_bet_or_raise_to", action.amount if action.amount is not None else legal.min_to
            steps.append((state, action, call, amount))
            state = state.act(action)
        hands.append((setup, steps))
    actions = sum(len(steps) for _, steps in hands)

    def ours() -> float:
        total = 0.0
        for _, steps in hands:
            for state, action, _, _ in steps:
                start = time.perf_counter()
                state.act(action)
                total += time.perf_counter() - start
        return total

    def theirs() -> float:
        total = 0.0
        for setup, steps in hands:
            n = steps[0][0].player_count if steps else 2
            game = pokerkit_state(setup, n)
            _advance(game, setup, n, None)
            for _, _, call, amount in steps:
                method: Callable[..., object] = getattr(game, call)
                start = time.perf_counter()
                method() if amount is None else method(amount)
                total += time.perf_counter() - start
                _advance(game, setup, n, None)
        return total

    ours_us: list[float] = []
    theirs_us: list[float] = []
    for _ in range(args.rounds):
        ours_us.append(1e6 * ours() / actions)
        theirs_us.append(1e6 * theirs() / actions)
    ratios = [t / o for o, t in zip(ours_us, theirs_us, strict=True)]
    load = Path("/proc/loadavg").read_text().split()[0]
    print(f"hands {args.hands}, actions {actions}, load {load}")
    print(f"ours act: {min(ours_us):.1f} / {statistics.median(ours_us):.1f} us per action (min / median)")
    print(f"pokerkit action call: {min(theirs_us):.1f} / {statistics.median(theirs_us):.1f} us per action")
    print(f"pokerkit / ours per round: {min(ratios):.2f}x / {statistics.median(ratios):.2f}x (min / median)")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
