"""Conversions between the engine's values and what a hand stores: the board as card codes,
combination indices as digits, and the names of a table's wallet accounts."""

from __future__ import annotations

from typing import Any

import numpy as np
import numpy.typing as npt

from tables.engine.widerpoker import Board, HandConditions, JackpotFeed, card_code

ENTRY_RESULTS: dict[str, str] = {
    "connected_at_end": "boolean",
    "hold_used": "smallint",
    "draw_strengths": "jsonb",
    "best_draw": "smallint",
    "strength": "integer",
    "category": "smallint",
    "place": "integer",
    "prize_minor": "bigint",
    "jackpot_minor": "bigint",
}
"""An entry's results, the columns settlement writes (name -> PostgreSQL type), in the order
settlement writes them; the entry's admin page shows them in this order too."""

# An entry's record as exports show it (format 2, key order included: a public contract)
# and verification reads it: its choices and purchases, its results (``ENTRY_RESULTS``, each
# in its place), its promotions and client seed.
ENTRY_RECORD_FIELDS = (
    "join_order",
    "user__username",
    "initial_combination",
    "redeals",
    "combination",
    "hold_mask",
    "hold_used",
    "connected_at_end",
    "draws_bought",
    "paid_minor",
    "draw_strengths",
    "best_draw",
    "strength",
    "category",
    "place",
    "prize_minor",
    "jackpot_minor",
    "promo_minor",
    "client_seed",
)

_DIGIT_WEIGHTS = np.array([10_000, 1_000, 100, 10, 1], dtype=np.int64)


def board_from_json(data: dict[str, Any]) -> Board:
    """The Board stored with a hand (``{"columns": [[codes]...], "out": [codes]}``)."""
    return Board.from_columns(data["columns"], data["out"])


def board_to_json(board: Board) -> dict[str, Any]:
    """Card codes of the board's five columns and the two cards out (public from the deal)."""
    return {
        "columns": [[card_code(card) for card in column] for column in board.columns],
        "out": [card_code(card) for card in board.out],
    }


def combination_digits(indices: npt.NDArray[np.int64]) -> npt.NDArray[np.uint8]:
    """Combination indices (N,) -> digits p0..p4 as an (N, 5) uint8 array."""
    return ((indices[:, None] // _DIGIT_WEIGHTS) % 10).astype(np.uint8)


def carry_key(table_id: int, currency: str) -> str:
    """The account carrying a table's indivisible tie-split cents to its next hand's pool."""
    return f"carry:table:{table_id}:{currency}"


def escrow_key(hand_id: int) -> str:
    """The wallet account holding a hand's wagers until settlement."""
    return f"escrow:hand:{hand_id}"


def hand_conditions(config: dict[str, Any], balances: dict[str, int] | None = None) -> HandConditions:
    """The frozen money conditions of a hand, from the configuration stored with it.

    ``config["jackpots"]`` (absent in hands dealt before jackpots existed) lists the jackpots
    feeding the table when the hand was dealt, each ``{"key", "kind", "contribution_bps",
    "reset_minor"}``; ``balances`` gives the royal jackpots' balances at settlement by key.
    """
    balances = balances or {}
    return HandConditions(
        rake_bps=int(config["rake_bps"]),
        paid_fraction_bps=int(config["paid_fraction_bps"]),
        min_prize_minor=int(config["min_prize_minor"]),
        jackpots=tuple(
            JackpotFeed(
                key=str(jackpot["key"]),
                kind=str(jackpot["kind"]),
                contribution_bps=int(jackpot["contribution_bps"]),
                balance_minor=int(balances.get(str(jackpot["key"]), 0)),
                reset_minor=int(jackpot.get("reset_minor", 0)),
            )
            for jackpot in config.get("jackpots", ())
        ),
    )


def spin_feed(config: dict[str, Any], spin_jackpot_id: int | None) -> dict[str, Any] | None:
    """The frozen description (``config["jackpots"]`` entry) of the spin jackpot a hand drew,
    or None when it drew none."""
    if spin_jackpot_id is None:
        return None
    return next((feed for feed in config.get("jackpots", ()) if feed["id"] == spin_jackpot_id), None)
