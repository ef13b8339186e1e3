"""Practice games: one player against the house's bots at a free table of their own, with
play money (DESIGN.md, "Practice games"): services, views and the REST API."""
