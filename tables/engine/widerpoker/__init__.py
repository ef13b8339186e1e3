"""WiderPoker: the rules as a pure, exact, fast library.

Pure Python and numpy: no Django, no I/O, no clock, no global random state (STYLE,
Engine). The rules are seed 000 (How it works) and seed 001 (Rules); DESIGN, "The game,
as implemented", turns them into the decisions this package implements. See
``docs/engine.md`` and ``docs/provably-fair.md``. The cards, the evaluator, the exact
allocation and the random streams are shared with the other games (``tables.engine``)
and re-exported here for the callers that play WiderPoker.

>>> from tables.engine.widerpoker import evaluate
>>> evaluate(["Ah", "Ad", "7c", "7s", "2d"]).category.label
'Two pair'
"""

from __future__ import annotations

from ..allocation import (
    MAX_RAKE_BPS,
    Allocation,
    AllocationConfig,
    allocate_pool,
    paid_places,
    prize_ladder,
    rake_minor,
    rank_places,
    split_evenly,
)
from ..cards import DECK_SIZE, RANKS, SUITS, as_card_id, card_code, card_id, parse_cards
from ..evaluator import (
    MAX_STRENGTH,
    HandCategory,
    HandValue,
    category_of,
    category_of_strength,
    evaluate,
    evaluate_many,
    evaluate_product,
)
from ..rng import SEED_BYTES, RandomStream, commitment, shuffled
from .board import COLUMN_HEIGHT, COLUMNS, Board
from .change import (
    COMBINATION_COUNT,
    DISCARD_ALL,
    HOLD_ALL,
    MAX_DRAWS,
    ChangeKey,
    Combination,
    Hold,
    best_draws,
    combination_from_index,
    combination_index,
    draw_positions,
    draw_strengths,
    final_cards,
    final_hand,
    hold_code,
    hold_from_code,
    hold_from_mask,
    hold_mask,
    validate_change_key,
    validate_combination,
    validate_hold,
)
from .deal import (
    DEFAULT_SPIN_ONE_IN,
    SpinJackpot,
    change_keys,
    deal_board,
    initial_combinations,
    redeal_combination,
    redeal_label,
    shuffle_deck,
    special_hand_draw,
    spin_jackpot_draw,
    spin_outcomes,
)
from .grid import BoardGrid, board_grid
from .odds import MASKS, Panel, odds, panel, tips
from .replay import EntryChoices, HandReplay, replay_hand

__all__ = [
    "COLUMNS",
    "COLUMN_HEIGHT",
    "COMBINATION_COUNT",
    "DECK_SIZE",
    "DEFAULT_SPIN_ONE_IN",
    "DISCARD_ALL",
    "HOLD_ALL",
    "MASKS",
    "MAX_DRAWS",
    "MAX_RAKE_BPS",
    "MAX_STRENGTH",
    "RANKS",
    "SEED_BYTES",
    "SUITS",
    "Allocation",
    "AllocationConfig",
    "Board",
    "BoardGrid",
    "ChangeKey",
    "Combination",
    "EntryChoices",
    "HandCategory",
    "HandReplay",
    "HandValue",
    "Hold",
    "Panel",
    "RandomStream",
    "SpinJackpot",
    "allocate_pool",
    "as_card_id",
    "best_draws",
    "board_grid",
    "card_code",
    "card_id",
    "category_of",
    "category_of_strength",
    "change_keys",
    "combination_from_index",
    "combination_index",
    "commitment",
    "deal_board",
    "draw_positions",
    "draw_strengths",
    "evaluate",
    "evaluate_many",
    "evaluate_product",
    "final_cards",
    "final_hand",
    "hold_code",
    "hold_from_code",
    "hold_from_mask",
    "hold_mask",
    "initial_combinations",
    "odds",
    "paid_places",
    "panel",
    "parse_cards",
    "prize_ladder",
    "rake_minor",
    "rank_places",
    "redeal_combination",
    "redeal_label",
    "replay_hand",
    "shuffle_deck",
    "shuffled",
    "special_hand_draw",
    "spin_jackpot_draw",
    "spin_outcomes",
    "split_evenly",
    "tips",
    "validate_change_key",
    "validate_combination",
    "validate_hold",
]
