"""The Hold'em table row written back after a service changed it (the row locked by the
caller): shared by the player's services (tables/holdem/services/player.py) and the practice
games' (tables/holdem/practice/services.py), which both import it (issue 21: no import cycles)."""

from __future__ import annotations

from tables.models import Table


def save_holdem_table(table: Table) -> None:
    """Write back what the Hold'em services change on a locked table row."""
    Table.objects.filter(pk=table.pk).update(
        phase=table.phase,
        phase_deadline=table.phase_deadline,
        version=table.version,
        hands_dealt=table.hands_dealt,
        pending_changes=table.pending_changes,
    )
