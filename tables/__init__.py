"""Tables, seats, hands and entries: the hand lifecycle, the clock, pushes and the API."""
