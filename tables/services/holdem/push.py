"""Hold'em pushes: one path per audience (STYLE.md, Realtime). After the transaction
commits, the public frame goes to the table's group through the hub (serialised once), and
each seated person's private frame to his own group only; nothing is announced for a
rolled-back change. Pushes are hints: clients resynchronise from the snapshot URLs."""

from __future__ import annotations

import logging
from collections.abc import Iterable

from django.db import transaction
from django.utils import timezone

logger = logging.getLogger(__name__)


def push_holdem_now(table_id: int, *, also: Iterable[int] = ()) -> None:
    """Push the table's public frame and every seated person's private frame now (plus the
    private frames of ``also``: players who just left). Never raises."""
    from tables.events import dumps, player_group, send_to_group
    from tables.hub import publish_table_frame
    from tables.services.holdem.selectors import (
        get_holdem_private_frame,
        get_holdem_table_frame,
        list_holdem_seated_users,
    )

    try:
        now = timezone.now()
        publish_table_frame(table_id, dumps(get_holdem_table_frame(table_id=table_id, now=now)))
        for user_id in {*list_holdem_seated_users(table_id=table_id), *also}:
            frame = get_holdem_private_frame(table_id=table_id, user_id=user_id, now=now)
            send_to_group(player_group(user_id), dumps(frame))
    except Exception:  # a push must never break a hand
        logger.exception("Hold'em push of table %s failed", table_id)


def push_holdem_on_commit(table_id: int, *, also: Iterable[int] = ()) -> None:
    """``push_holdem_now`` after the current transaction commits."""
    extra = tuple(also)
    transaction.on_commit(lambda: push_holdem_now(table_id, also=extra))
