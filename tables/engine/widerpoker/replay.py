"""Hand replay: recompute a whole hand from its server seed and the players' choices.

What an auditor (and the platform's settlement) needs to check a hand end to end
(DESIGN, Architecture, "Provably fair"; seed 000, Glossary, Hand History): the board,
the change keys, the spin jackpot draw, every entry's initial and redealt combinations,
the positions and strengths of all five draws, the best bought draw and the places.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass, field

import numpy as np
import numpy.typing as npt

from ..cards import card_code
from ..evaluator_tables import HandCategory
from ..rng import commitment
from .arithmetic import score_entries
from .board import Board
from .change import (
    MAX_DRAWS,
    ChangeKey,
    Combination,
    Hold,
    combination_index,
    validate_hold,
)
from .deal import (
    SpinJackpot,
    change_keys,
    deal_board,
    initial_combinations,
    redeal_combination,
    spin_jackpot_draw,
)
from .grid import board_grid

__all__ = ["EntryChoices", "HandReplay", "replay_hand"]


@dataclass(frozen=True)
class EntryChoices:
    """What one entry chose in a hand, as the platform records it.

    ``hold``: five bools for the combination the entry finally plays (``True`` = held);
    ``draws``: draws bought, 1..5 (the first is included in the ante; seed 001, C.1);
    ``redeals``: the hand-global numbers (0, 1, 2, ... in order of purchase across the
    whole hand) of the redeals this entry bought, ascending (seed 001, C.2). The entry
    plays the combination of its last redeal, or its initial combination if none.
    Raises ``ValueError`` for an invalid hold, draw count or redeal list.
    """

    hold: Hold
    draws: int = 1
    redeals: tuple[int, ...] = field(default=())

    def __post_init__(self) -> None:
        object.__setattr__(self, "hold", validate_hold(self.hold))
        if isinstance(self.draws, bool) or not isinstance(self.draws, int):
            raise ValueError(f"draws must be an integer in 1..5, got {self.draws!r}")
        if not 1 <= self.draws <= MAX_DRAWS:
            raise ValueError(f"draws must be in 1..5, got {self.draws}")
        redeals = tuple(self.redeals)
        if any(isinstance(r, bool) or not isinstance(r, int) or r < 0 for r in redeals):
            raise ValueError(f"redeal numbers are integers >= 0, got {redeals!r}")
        if list(redeals) != sorted(set(redeals)):
            raise ValueError(f"an entry's redeal numbers must be strictly ascending: {redeals}")
        object.__setattr__(self, "redeals", redeals)


@dataclass(frozen=True, eq=False)
class HandReplay:
    """A replayed hand. Per-entry arrays are in join order and read-only.

    * ``commitment``: SHA-256 hex of the server seed; ``board``; ``change_keys`` (5 keys);
      ``spin_jackpot``: the jackpot drawn, or ``None``.
    * ``initial_combinations``: tuple of ``N`` combinations dealt at join.
    * ``redeal_combinations``: tuple of the combinations bought, index = redeal number.
    * ``combinations``: ``uint8`` ``(N, 5)``, the combination each entry played.
    * ``positions``: ``uint8`` ``(N, 5, 5)``, ``[i, d, c]`` = position in column ``c`` after
      draw ``d + 1`` (all five draws, bought or not: DESIGN item 5).
    * ``strengths``: ``uint16`` ``(N, 5)``, strength after each draw.
    * ``best_strength``: ``uint16`` ``(N,)`` best over the draws bought;
      ``best_draw``: ``uint8`` ``(N,)`` 0-based draw giving it (earliest on ties).
    * ``categories``: ``uint8`` ``(N,)`` category of the best hand;
      ``places``: ``int32`` ``(N,)`` competition places (1 = best).
    """

    commitment: str
    board: Board
    change_keys: tuple[ChangeKey, ...]
    spin_jackpot: SpinJackpot | None
    initial_combinations: tuple[Combination, ...]
    redeal_combinations: tuple[Combination, ...]
    combinations: npt.NDArray[np.uint8]
    positions: npt.NDArray[np.uint8]
    strengths: npt.NDArray[np.uint16]
    best_strength: npt.NDArray[np.uint16]
    best_draw: npt.NDArray[np.uint8]
    categories: npt.NDArray[np.uint8]
    places: npt.NDArray[np.int32]

    def final_hand(self, entry: int) -> tuple[str, ...]:
        """Card codes of entry ``entry``'s best bought draw, column order."""
        positions = self.positions[entry, int(self.best_draw[entry])]
        return tuple(card_code(self.board.card(c, int(p))) for c, p in enumerate(positions))

    def category(self, entry: int) -> HandCategory:
        """Category of entry ``entry``'s final hand."""
        return HandCategory(int(self.categories[entry]))


def replay_hand(
    server_seed: bytes,
    entries: Sequence[EntryChoices],
    *,
    keys_seed: bytes | None = None,
    redeal_seeds: Sequence[bytes] | None = None,
    frozen_count: int | None = None,
    frozen_positions: Sequence[int] | None = None,
) -> HandReplay:
    """Recompute a hand from its 32-byte server seed and each entry's choices (join order).

    Entry ``i`` gets initial combination ``i`` of ``initial_combinations``. Redeals are
    replayed in global order ``r = 0, 1, ...``: redeal ``r`` draws with
    ``redeal_combination(seed, taken, r)`` where ``taken`` holds every initial combination
    and redeals ``0 .. r-1``. Each entry then draws with all five change keys, and its
    final hand is the best of the draws it bought. Seed 000, How it works 1-3 and
    Glossary (MultiDraw, Redeal); seed 001, Game course B and C; DESIGN items 1-7.

    ``keys_seed``: the seed of the change keys when it is not the server seed (algorithm 2:
    ``tables.engine.fairness.keys_seed`` of the hand seed and the beacon value).

    Algorithm 3: ``redeal_seeds[r]`` is the seed of redeal ``r``'s stream
    (``fairness.redeal_seed`` of the hand seed, ``r`` and its round's value); and when some
    players frozen into the hand were not dealt in, ``frozen_count`` combinations are drawn
    and entry ``i`` gets combination ``frozen_positions[i]`` (its place in the entry order
    of everyone frozen); the others' are not taken.

    Raises ``ValueError`` for a bad seed, more than 100,000 entries, or redeal numbers
    that are not exactly ``0 .. R-1`` each bought by one entry.
    """
    count = len(entries)
    initial = initial_combinations(server_seed, count if frozen_count is None else frozen_count)
    if frozen_positions is not None:
        initial = [initial[position] for position in frozen_positions]
    if len(initial) != count:
        raise ValueError("one frozen position per entry")
    owner: dict[int, int] = {}
    for entry, choices in enumerate(entries):
        for number in choices.redeals:
            if number in owner:
                raise ValueError(f"redeal {number} is bought by more than one entry")
            owner[number] = entry
    if sorted(owner) != list(range(len(owner))):
        raise ValueError("redeal numbers must be exactly 0 .. R-1")
    taken = {combination_index(c) for c in initial}
    redealt: list[Combination] = []
    for number in range(len(owner)):
        stream_seed = server_seed if redeal_seeds is None else redeal_seeds[number]
        combination = redeal_combination(stream_seed, taken, number)
        taken.add(combination_index(combination))
        redealt.append(combination)
    played = [
        redealt[choices.redeals[-1]] if choices.redeals else initial[entry] for entry, choices in enumerate(entries)
    ]

    board = deal_board(server_seed)
    keys = change_keys(keys_seed if keys_seed is not None else server_seed)
    combinations = np.array(played, dtype=np.uint8).reshape(count, 5)
    holds = np.array([choices.hold for choices in entries], dtype=np.bool_).reshape(count, 5)
    key_array = np.array(keys, dtype=np.uint8)
    moved = (combinations[:, None, :] + key_array[None, :, :]) % np.uint8(10)
    positions = np.where(holds[:, None, :], combinations[:, None, :], moved).astype(np.uint8)
    masks = (holds.astype(np.int64) << np.arange(5)).sum(axis=1)
    bought = np.array([choices.draws for choices in entries], dtype=np.int64)
    scores = score_entries(board_grid(board), key_array, combinations, masks, bought)
    for array in (combinations, positions):
        array.flags.writeable = False
    return HandReplay(
        commitment=commitment(server_seed),
        board=board,
        change_keys=keys,
        spin_jackpot=spin_jackpot_draw(server_seed),
        initial_combinations=tuple(initial),
        redeal_combinations=tuple(redealt),
        combinations=combinations,
        positions=positions,
        strengths=scores.strengths,
        best_strength=scores.best_strength,
        best_draw=scores.best_draw,
        categories=scores.categories,
        places=scores.places,
    )
