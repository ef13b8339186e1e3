"""Texas Hold'em's part of the books check: its chips, which are money the ledger holds
in each table's escrow but which the seats count (``Seat.stack_minor``).

Every Hold'em table, practice tables included, keeps its chips in the escrow account
``escrow:holdem:<table>`` (``tables.holdem.services.money``): a buy-in moves money from a
wallet (a practice game: from the FUN cashier) into it and onto a stack, a cash-out back,
a hand's rake from it to the rake account in the settlement's transaction, which also
writes the finishing stacks. While a hand runs the seats keep their starting stacks and the
pots stay in the escrow. So at every committed moment, between hands and during one:

    balance of escrow:holdem:<table> = sum of stack_minor over every seat of the table

(security audit 2026-11-26, M4: ``UPDATE tables_seat SET stack_minor = stack_minor + 100``
went unseen). ``wallet.selectors.check_books`` runs ``check_holdem_escrows`` through its
registry (``TablesConfig.ready`` registers each game's ``Game.books``), so ``verify_books``
and the back-office books check report it. What it cannot see: chips moved between two
seats of one table (the sum is the same); ``verify_hands`` checks each hand's stacks against its record.
"""

from __future__ import annotations

from django.db.models import CharField, F, OuterRef, Q, Subquery, Sum, Value
from django.db.models.functions import Cast, Coalesce, Concat

from tables.models import Seat, Table, TableGame
from wallet.models import Account

ESCROW_PREFIX = "escrow:holdem:"
"""The key prefix of the Hold'em escrows (``tables.holdem.services.money.escrow_key``)."""


def check_holdem_escrows() -> list[str]:
    """One sentence per Hold'em table whose escrow balance differs from the sum of its
    seats' stacks (minor units), and per escrow of a table that is not a Hold'em table
    but holds money; none when the books agree. A table that is not a Hold'em table but
    whose seats hold chips is reported too. The tables are compared in one statement, so
    in one snapshot: play going on meanwhile cannot make the check fail."""
    escrow = Account.objects.filter(
        key=Concat(Value(ESCROW_PREFIX), Cast(OuterRef("pk"), output_field=CharField()))
    ).values("balance_minor")[:1]
    stacks = (
        Seat.objects.filter(table=OuterRef("pk")).order_by().values("table").annotate(total=Sum("stack_minor"))
    ).values("total")[:1]
    rows = (
        Table.objects.annotate(escrow_minor=Coalesce(Subquery(escrow), 0), stacks_minor=Coalesce(Subquery(stacks), 0))
        .filter(Q(game=TableGame.HOLDEM) | ~Q(stacks_minor=0))
        .exclude(escrow_minor=F("stacks_minor"))
        .order_by("pk")
        .values_list("pk", "name", "game", "escrow_minor", "stacks_minor")
    )
    problems = [
        f"Hold'em table {pk} ({name}): escrow {ESCROW_PREFIX}{pk} holds {escrow_minor}, "
        f"its seats' stacks sum to {stacks_minor}"
        if game == TableGame.HOLDEM
        else f"table {pk} ({name}) is not a Hold'em table but its seats hold {stacks_minor} in chips"
        for pk, name, game, escrow_minor, stacks_minor in rows
    ]
    holdem_ids = {str(pk) for pk in Table.objects.filter(game=TableGame.HOLDEM).values_list("pk", flat=True)}
    escrows = Account.objects.filter(key__startswith=ESCROW_PREFIX).exclude(balance_minor=0)
    for key, balance in escrows.values_list("key", "balance_minor"):
        if key.removeprefix(ESCROW_PREFIX) not in holdem_ids:
            problems.append(f"escrow {key} holds {balance} but is no Hold'em table's")
    return problems
