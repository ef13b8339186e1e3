"""Sign-up, log-in, the lobby and the wallet page: the players' web."""
