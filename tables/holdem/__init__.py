"""Texas Hold'em, the second game of the house (DESIGN.md, "Texas Hold'em tables"; "Two games,
one house"): conditions, seats and money, the hand on the clock, its reads, records, lobby
rows, page and admin, and the practice games against bots (``tables.holdem.practice``). The
rules are the engine's (``tables.engine.holdem``); nothing here imports the other game."""

from typing import Final

KEY: Final = "holdem"
"""Texas Hold'em's ``Table.game`` value (``TableGame``), what the game's own modules and its features
(tournaments, the prize-pool simulator) filter tables by."""
