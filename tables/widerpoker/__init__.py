"""WiderPoker, the first game of the house (seeds 000 and 001): its services, records, labels
and admin. The house (clock, lobby, hub, consumers, API, views) reaches it through the
registry of games, ``tables.games``; nothing here imports the other game."""

from typing import Final

KEY: Final = "widerpoker"
"""WiderPoker's ``Table.game`` value (``TableGame``), what the game's own modules and its features
(tournaments, the prize-pool simulator) filter tables by."""
