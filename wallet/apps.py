from __future__ import annotations

from django.apps import AppConfig


class WalletConfig(AppConfig):
    default_auto_field = "django.db.models.BigAutoField"
    name = "wallet"

    def ready(self) -> None:
        from django.db.models import Field, ForeignKey

        from wallet.lookups import AnyOf

        Field.register_lookup(AnyOf)
        ForeignKey.register_lookup(AnyOf)  # related fields keep their own lookups
