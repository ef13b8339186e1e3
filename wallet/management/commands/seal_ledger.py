"""``manage.py seal_ledger``: seal the transfers committed and not yet sealed into their
currency's hash chain (wallet/chain.py), as the clock does every tick. Safe at any time: a
currency whose chain head another transaction holds is left to it. Prints how many were
sealed and the oldest unsealed transfer's age afterwards."""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand

from wallet.chain import oldest_unsealed_age
from wallet.services import seal_pending


class Command(BaseCommand):
    help = "Seal the ledger's transfers that are committed and not yet sealed (the clock does it every tick)."

    def handle(self, *args: Any, **options: Any) -> None:
        sealed = seal_pending()
        self.stdout.write(f"Sealed {sealed} transfer(s); oldest unsealed now {oldest_unsealed_age():.1f} s old.")
