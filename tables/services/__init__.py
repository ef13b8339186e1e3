"""The house's state changes shared by every game: presence and sockets (``seating``,
``presence``), staff changes of tables (``configuration``), seed chains (``fairness``),
the randomness beacon (``beacon``) and the platform's degraded mode (``degradation``).
Each game's own services live in its package (``tables/<game>/services/``); the clock that
drives them is tables/clock.py. Import the module you need: this package re-exports nothing."""
