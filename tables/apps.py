from __future__ import annotations

from django.apps import AppConfig


class TablesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "tables"

    def ready(self) -> None:
        # The Hold'em chips are money the ledger must cover: check_books (verify_books, the
        # back-office books check) compares every table's escrow with its stacks.
        from tables.books import check_holdem_escrows, check_tournaments
        from wallet.selectors import register_books_check

        register_books_check("holdem_escrows", check_holdem_escrows)
        # Tournaments: their prize pools and the chips left after their end (docs/tournaments.md).
        register_books_check("tournaments", check_tournaments)
        # The plumbing's throttles announce a Redis fault; the tables keep the record the
        # clock reads (tables.services.degradation).
        from config.infra.faults import redis_unreachable
        from tables.services.degradation import record_redis_fault

        redis_unreachable.connect(record_redis_fault, dispatch_uid="tables.degradation.redis")
