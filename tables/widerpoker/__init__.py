"""WiderPoker, the first game of the house (seeds 000 and 001): its services, records, labels
and admin. The house (clock, lobby, hub, consumers, API, views) reaches it through the
registry of games, ``tables.games``; nothing here imports the other game."""
