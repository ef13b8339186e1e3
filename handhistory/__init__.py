"""Hand history for players and auditors, and verification of hands against their seeds."""
