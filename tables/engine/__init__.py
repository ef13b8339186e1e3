"""The game engine: pure, exact, fast libraries for the games of the house.

Pure Python and numpy: no Django, no I/O, no clock, no global random state (STYLE,
Engine). Shared by every game: the cards (``cards``), the five-card evaluator
(``evaluator``), the exact allocation of money with named remainder rules
(``allocation``) and the provably-fair random streams (``rng``). Each game is a sibling
package: ``widerpoker`` (seeds 000-002) and ``holdem`` (seeds 003-004). See
``docs/engine.md`` and ``docs/provably-fair.md``.

>>> from tables.engine import evaluate
>>> evaluate(["Ah", "Ad", "7c", "7s", "2d"]).category.label
'Two pair'
"""

from __future__ import annotations

from .allocation import (
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
from .cards import DECK_SIZE, RANKS, SUITS, as_card_id, card_code, card_id, parse_cards
from .evaluator import HandValue, category_of, category_of_strength, evaluate, evaluate_many, evaluate_product
from .evaluator_tables import MAX_STRENGTH, HandCategory
from .rng import SEED_BYTES, RandomStream, commitment, shuffled

__all__ = [
    "DECK_SIZE",
    "MAX_RAKE_BPS",
    "MAX_STRENGTH",
    "RANKS",
    "SEED_BYTES",
    "SUITS",
    "Allocation",
    "AllocationConfig",
    "HandCategory",
    "HandValue",
    "RandomStream",
    "allocate_pool",
    "as_card_id",
    "card_code",
    "card_id",
    "category_of",
    "category_of_strength",
    "commitment",
    "evaluate",
    "evaluate_many",
    "evaluate_product",
    "paid_places",
    "parse_cards",
    "prize_ladder",
    "rake_minor",
    "rank_places",
    "shuffled",
    "split_evenly",
]
