from __future__ import annotations

from django.apps import AppConfig


class TablesConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "tables"

    def ready(self) -> None:
        # Each game's own books checks (Hold'em's chips are money the ledger must cover:
        # its escrows against its stacks), run by check_books (verify_books, the back-office
        # books check), and the tournaments' prize pools and chips (docs/tournaments.md).
        from tables.books import check_tournaments
        from tables.games import GAMES
        from wallet.selectors import register_books_check

        for game in GAMES.values():
            for name, check in game.books.items():
                register_books_check(name, check)
        register_books_check("tournaments", check_tournaments)
        # A tournament's table deals its entrants between hands: the WiderPoker clock step
        # asks its hook (the cash lifecycle does not import the tournaments).
        from tables.tournaments.services import tournament_step
        from tables.widerpoker.between_hands import register

        register("tournaments", tournament_step)
        # The plumbing's throttles announce a Redis fault; the tables keep the record the
        # clock reads (tables.services.degradation).
        from config.infra.faults import redis_unreachable
        from tables.services.degradation import record_redis_fault

        redis_unreachable.connect(record_redis_fault, dispatch_uid="tables.degradation.redis")
        # The REST purchase door's token cache forgets a deleted token or a deactivated
        # account at once (tables/api/purchase_door.py).
        from django.contrib.auth import get_user_model
        from django.db.models.signals import post_delete, post_save
        from rest_framework.authtoken.models import Token

        from tables.api.purchase_door import forget_tokens

        post_delete.connect(forget_tokens, sender=Token, dispatch_uid="tables.purchase_door.token")
        post_save.connect(forget_tokens, sender=get_user_model(), dispatch_uid="tables.purchase_door.user")
