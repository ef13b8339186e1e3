"""``manage.py verify_books``: audit the ledger, its balances and its hash chain, and the
money kept outside it that the ledger must cover (the Hold'em stacks: ``tables.holdem.books``).

Exit status 0 when the books are intact, 1 when anything is wrong, with one line per
finding naming the transfer (id, reference, currency and sequence). ``--expect-head
EUR:1234:<hash>`` (repeatable) also checks that a head an auditor recorded earlier is still
in the chain, which reveals a cut tail. The last line prints each currency's head to record.
"""

from __future__ import annotations

from typing import Any

from django.core.management.base import BaseCommand, CommandError, CommandParser

from wallet.models import LedgerHead
from wallet.selectors import check_books


def parse_head(text: str) -> tuple[str, int, str]:
    """``"EUR:1234:<64 hex>"`` -> (currency, sequence, hash). Raises CommandError."""
    try:
        currency, sequence, digest = text.split(":")
        number = int(sequence)
    except ValueError:
        raise CommandError(f"--expect-head {text!r}: expected CURRENCY:SEQUENCE:HASH") from None
    if len(digest) != 64 or any(c not in "0123456789abcdef" for c in digest) or number < 0:
        raise CommandError(f"--expect-head {text!r}: expected CURRENCY:SEQUENCE:HASH (64 hex digits)")
    return currency.upper(), number, digest


class Command(BaseCommand):
    help = (
        "Verify the ledger: balanced transfers, balances, the hash chain of every currency, "
        "and the Hold'em tables' escrows against their stacks."
    )

    def add_arguments(self, parser: CommandParser) -> None:
        parser.add_argument(
            "--expect-head",
            action="append",
            default=[],
            metavar="CUR:SEQ:HASH",
            help="a head recorded earlier that must still be in the chain (repeatable)",
        )

    def handle(self, *args: Any, **options: Any) -> None:
        expect = {
            currency: (sequence, digest) for currency, sequence, digest in map(parse_head, options["expect_head"])
        }
        books = check_books(expect_head=expect)
        findings = [
            *(f"transfer {pk}: legs do not sum to zero" for pk in books.unbalanced_transfers),
            *(f"account {key}: balance differs from its entries" for key in books.drifted_accounts),
            *(f"account {key}: negative balance" for key in books.negative_accounts),
            *(
                f"{code}: accounts sum to {total} minor units, not zero"
                for code, total in books.currency_totals.items()
                if total
            ),
            *(str(problem) for problem in books.chain_problems),
            *(f"account {key}: held amount differs from its open holds" for key in books.unmatched_holds),
            *(f"ledger leg {pk}: its account or transfer does not exist" for pk in books.broken_references),
            *books.other_problems,
        ]
        for line in findings:
            self.stdout.write(f"FAIL {line}")
        heads = " ".join(f"{h.currency}:{h.sequence}:{h.chain_hash}" for h in LedgerHead.objects.order_by("currency"))
        if findings or not books.ok:
            self.stdout.write(f"{len(findings)} problem(s). Heads: {heads or 'none'}")
            raise SystemExit(1)
        self.stdout.write(f"Books intact. Heads: {heads or 'none'}")
