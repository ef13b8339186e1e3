"""The house's part of the books check: the tournaments' money and chips (each game's own
checks are its ``Game.books``, tables/gamespec.py; ``TablesConfig.ready`` registers both
with ``wallet.selectors.register_books_check``)."""

from __future__ import annotations

from wallet.models import Account


def check_tournaments() -> list[str]:
    """One sentence per tournament whose money or chips disagree with its state (minor
    units): its prize pool account (``tourney:<id>:pool``) must hold the prize pool while it
    runs and nothing before its start or after its end; before the start, the holds waiting
    for it must be the registered entries' prices; after its end no account of its chips
    (``T<id>``) may hold any (they are retired to the chips' cashier). The chips' own
    conservation is the ledger's (each chips currency sums to zero)."""
    from django.db.models import Sum

    from tables.tournaments.models import Entrant, EntrantStatus, Tournament, TournamentState
    from tables.tournaments.money import pool_key
    from wallet.models import AccountKind, FundsHold

    problems: list[str] = []
    pools = dict(Account.objects.filter(key__startswith="tourney:", kind="tournament").values_list("key", "pk"))
    balances = dict(Account.objects.filter(pk__in=list(pools.values())).values_list("pk", "balance_minor"))
    for tournament in Tournament.objects.only("pk", "name", "state", "prize_pool_minor"):
        account_id = pools.get(pool_key(tournament.pk))
        balance = balances.get(account_id, 0) if account_id else 0
        expected = tournament.prize_pool_minor if tournament.state == TournamentState.RUNNING else 0
        if balance != expected:
            problems.append(
                f"tournament {tournament.pk} ({tournament.name}, {tournament.state}): its prize pool account "
                f"holds {balance}, expected {expected}"
            )
        if tournament.state in (TournamentState.SCHEDULED, TournamentState.REGISTERING) and account_id:
            held = FundsHold.objects.filter(destination_id=account_id, transfer__isnull=True).aggregate(
                total=Sum("amount_minor")
            )["total"]
            owed = Entrant.objects.filter(tournament=tournament, status=EntrantStatus.REGISTERED).aggregate(
                total=Sum("paid_minor")
            )["total"]
            if (held or 0) != (owed or 0):
                problems.append(
                    f"tournament {tournament.pk} ({tournament.name}): {held or 0} held for it, "
                    f"its registered entries' prices sum to {owed or 0}"
                )
        if tournament.state in (TournamentState.FINISHED, TournamentState.CANCELLED):
            left = (
                Account.objects.filter(currency=tournament.chips)
                .exclude(kind=AccountKind.CASHIER)
                .exclude(balance_minor=0)
                .count()
            )
            if left:
                problems.append(
                    f"tournament {tournament.pk} ({tournament.name}) is over but {left} accounts hold chips"
                )
    return problems
