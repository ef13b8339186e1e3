"""WiderPoker's state changes: a player's choices (play, purchases), the deal's sessions,
settlement and cancellation, power-ups, special hands and the staff's jackpot rules."""
