"""Jackpot pools (royal and spin jackpots); contributions and awards come with a later issue."""
