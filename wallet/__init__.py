"""Accounts and a double-entry ledger in integer minor units. Only wallet.services moves money."""
