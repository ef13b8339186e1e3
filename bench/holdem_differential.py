"""Differential run: our Hold'em engine against pokerkit on N random hands.

Run from the repository root:

    .venv/bin/python bench/holdem_differential.py --hands 10000
    .venv/bin/python bench/holdem_differential.py --hands 10000 --rake-bps 500 --rake-cap 40

Each hand is played through both engines with the same cards and the same random legal
actions (see ``tests/engine/holdem/differential.py``); a hand agrees when every decision
(actor, options, bet/raise range), the pots at showdown and the finishing stacks agree.
Prints the agreement figure per betting structure and in total, and the first
disagreeing seeds if any. Unless ``--no-phh``, every agreeing hand is also written as PHH
and replayed by pokerkit's ``HandHistory`` and by our ``replay_phh``: finishing stacks
must agree again.
"""

from __future__ import annotations

import argparse
import sys
import time
import warnings
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import pokerkit  # noqa: E402

from tables.engine.holdem import Betting, hand_to_phh, replay_phh  # noqa: E402
from tests.engine.holdem.differential import compare_hand  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--hands", type=int, default=10_000)
    parser.add_argument("--first-seed", type=int, default=1_000_000)
    parser.add_argument("--no-phh", action="store_true", help="skip the PHH round trip of every hand")
    parser.add_argument("--rake-bps", type=int, default=0, help="rake every pot (docs/holdem.md, rake), e.g. 500")
    parser.add_argument("--rake-cap", type=int, default=None, help="the rake's cap per hand, in chips")
    args = parser.parse_args()
    structures = list(Betting)
    agreed = dict.fromkeys(structures, 0)
    played = dict.fromkeys(structures, 0)
    showdowns = runouts = side_pots = decisions = phh_agreed = 0
    failures: list[tuple[int, str]] = []
    start = time.perf_counter()
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for k in range(args.hands):
            seed = args.first_seed + k
            betting = structures[k % len(structures)]
            played[betting] += 1
            try:
                report = compare_hand(seed, betting, rake_bps=args.rake_bps, rake_cap=args.rake_cap)
            except Exception as error:  # a disagreement or a crash on either side
                failures.append((seed, f"{type(error).__name__}: {error}"))
                continue
            agreed[betting] += 1
            if not args.no_phh:
                text = hand_to_phh(report.state)
                states = list(pokerkit.HandHistory.loads(text))
                # pokerkit does not read the _rake_bps extension: with a rake only our replay_phh compares.
                theirs = report.state.stacks if args.rake_bps else tuple(states[-1].stacks)
                if theirs == replay_phh(text) == report.state.stacks:
                    phh_agreed += 1
                else:
                    failures.append((seed, "PHH round trip disagrees"))
            decisions += report.decisions
            showdowns += report.pots_compared
            runouts += report.state.runout
            side_pots += len(report.state.pots()) > 1
    elapsed = time.perf_counter() - start
    total = sum(agreed.values())
    print(f"hands: {args.hands} (seeds {args.first_seed}..{args.first_seed + args.hands - 1}), {elapsed:.1f} s")
    for betting in structures:
        print(f"  {betting.value:12s} {agreed[betting]}/{played[betting]} agree")
    print(f"agreement: {total}/{args.hands} = {100 * total / max(1, args.hands):.2f}%")
    print(f"decisions compared: {decisions}; showdowns: {showdowns}; all-in run-outs: {runouts};")
    print(f"hands with side pots: {side_pots}")
    if not args.no_phh:
        print(f"PHH round trip (our text -> pokerkit's parser and our replay_phh): {phh_agreed}/{total} agree")
    for seed, message in failures[:10]:
        print(f"  seed {seed}: {message[:200]}")
    return 0 if not failures else 1


if __name__ == "__main__":
    raise SystemExit(main())
