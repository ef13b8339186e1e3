"""Hand replay from seed and choices (DESIGN, Provably fair; docs/provably-fair.md)."""

from __future__ import annotations

import numpy as np
import pytest

from tables.engine.widerpoker import (
    EntryChoices,
    HandCategory,
    change_keys,
    combination_index,
    commitment,
    deal_board,
    draw_positions,
    evaluate,
    final_hand,
    hold_from_mask,
    initial_combinations,
    redeal_combination,
    replay_hand,
    spin_jackpot_draw,
)

SEED = bytes(range(1, 33))


def choices() -> list[EntryChoices]:
    rng = np.random.default_rng(8)
    entries = [
        EntryChoices(hold=hold_from_mask(int(rng.integers(0, 32))), draws=int(rng.integers(1, 6))) for _ in range(40)
    ]
    # Redeals 0..4, bought in this global order by entries 3, 7, 3, 12, 7.
    entries[3] = EntryChoices(hold=entries[3].hold, draws=entries[3].draws, redeals=(0, 2))
    entries[7] = EntryChoices(hold=entries[7].hold, draws=entries[7].draws, redeals=(1, 4))
    entries[12] = EntryChoices(hold=entries[12].hold, draws=5, redeals=(3,))
    return entries


def test_a_replayed_hand_matches_the_direct_functions() -> None:
    entries = choices()
    replay = replay_hand(SEED, entries)
    board = deal_board(SEED)
    keys = change_keys(SEED)
    assert replay.commitment == commitment(SEED)
    assert replay.board == board
    assert replay.change_keys == keys
    assert replay.spin_jackpot == spin_jackpot_draw(SEED)

    initial = initial_combinations(SEED, len(entries))
    assert list(replay.initial_combinations) == initial
    taken = {combination_index(c) for c in initial}
    redealt = []
    for number in range(5):
        combination = redeal_combination(SEED, taken, number)
        taken.add(combination_index(combination))
        redealt.append(combination)
    assert list(replay.redeal_combinations) == redealt

    best_strengths = []
    for i, entry in enumerate(entries):
        played = redealt[entry.redeals[-1]] if entry.redeals else initial[i]
        assert tuple(replay.combinations[i]) == played
        strengths = []
        for d in range(5):
            positions = draw_positions(played, entry.hold, keys[d])
            assert tuple(replay.positions[i, d]) == positions
            strength = evaluate(final_hand(board, played, entry.hold, keys[d])).strength
            assert replay.strengths[i, d] == strength
            strengths.append(strength)
        best = max(strengths[: entry.draws])
        best_strengths.append(best)
        assert replay.best_strength[i] == best
        assert replay.best_draw[i] == strengths.index(best)
        assert replay.final_hand(i) == final_hand(board, played, entry.hold, keys[strengths.index(best)])
        assert replay.category(i) == evaluate(replay.final_hand(i)).category
        assert isinstance(replay.category(i), HandCategory)
    places = [1 + sum(o > mine for o in best_strengths) for mine in best_strengths]
    assert replay.places.tolist() == places


def test_replay_of_ten_thousand_entries_agrees_with_itself_entry_by_entry() -> None:
    rng = np.random.default_rng(4)
    entries = [
        EntryChoices(hold=hold_from_mask(int(m)), draws=int(d))
        for m, d in zip(rng.integers(0, 32, 10_000), rng.integers(1, 6, 10_000), strict=True)
    ]
    replay = replay_hand(SEED, entries)
    assert replay.strengths.shape == (10_000, 5)
    assert len({tuple(c) for c in replay.combinations.tolist()}) == 10_000
    sample = rng.choice(10_000, 50, replace=False)
    keys = change_keys(SEED)
    for i in sample:
        entry = entries[i]
        combo = tuple(int(p) for p in replay.combinations[i])
        hand = final_hand(replay.board, combo, entry.hold, keys[int(replay.best_draw[i])])
        assert evaluate(hand).strength == replay.best_strength[i]


def test_an_empty_hand_replays_to_empty_arrays() -> None:
    replay = replay_hand(SEED, [])
    assert replay.strengths.shape == (0, 5)
    assert replay.places.shape == (0,)


@pytest.mark.parametrize(
    "redeals",
    [[(0,), (0,)], [(1,), ()], [(0, 2), ()]],
)
def test_replay_rejects_redeal_numbers_that_are_not_zero_to_r_minus_one(
    redeals: list[tuple[int, ...]],
) -> None:
    entries = [EntryChoices(hold=(True,) * 5, redeals=r) for r in redeals]
    with pytest.raises(ValueError, match="redeal"):
        replay_hand(SEED, entries)


@pytest.mark.parametrize(
    "kwargs",
    [
        {"hold": (True,) * 4},
        {"hold": (True,) * 5, "draws": 0},
        {"hold": (True,) * 5, "draws": 6},
        {"hold": (True,) * 5, "redeals": (2, 1)},
        {"hold": (True,) * 5, "redeals": (-1,)},
    ],
)
def test_entry_choices_reject_invalid_values(kwargs: dict[str, object]) -> None:
    with pytest.raises(ValueError):
        EntryChoices(**kwargs)  # type: ignore[arg-type]  # invalid on purpose
