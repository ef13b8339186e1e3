"""A dummy third game for the registry's test (issue 21: "a third game adds one package"):
a coin flip. Model-free: the calls and flips live in this process's memory; the house's own
rows (``Table``, ``Seat``) are all it writes. Registered only while a test runs
(``tables.games.registered``)."""
