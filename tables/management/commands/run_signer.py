"""``manage.py run_signer``: the chain signer as its own process (tables/signer.py).

Run it as a user of its own whose key file the application (and its database role) cannot
read; the application reaches it with ``POKER_SIGNER=socket`` and ``POKER_SIGNER_SOCKET``
(docs/deployment.md, "Chain signer")."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from django.conf import settings
from django.core.management.base import BaseCommand, CommandParser

from tables.signer import KeySigner, read_or_create_key, serve


class Command(BaseCommand):
    help = "Serve the chain signer on a Unix socket (tables/signer.py)."

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument("--socket", default=settings.SIGNER_SOCKET, help="the Unix socket (POKER_SIGNER_SOCKET)")
        parser.add_argument("--key-file", default=settings.SIGNER_KEY_FILE, help="the key (POKER_SIGNER_KEY_FILE)")

    def handle(self, *args: Any, **options: Any) -> None:
        if not options["socket"]:
            raise SystemExit("give --socket or POKER_SIGNER_SOCKET")
        key_path = Path(options["key_file"])
        signer = KeySigner(read_or_create_key(key_path), key_path.with_suffix(".released.json"))
        server = serve(signer, options["socket"])
        self.stdout.write(f"chain signer on {options['socket']}")
        try:
            server.serve_forever()
        finally:
            server.server_close()
