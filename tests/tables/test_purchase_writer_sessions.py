"""The power-up levels in the answers of the purchase writer (issue 23, item 1): the payment
statement returns the sessions' counts it wrote, and the answer's ``powerups`` are built
from them, not read again (algorithm 2's redeals, counted after it, are read). Through the
socket frames players send, outside Django's test transaction."""

from __future__ import annotations

import asyncio
import json

import pytest
from asgiref.sync import sync_to_async
from django.test import override_settings
from django.utils import timezone

from tables.models import PowerUpRules
from tables.widerpoker.services import purchases
from tests.conftest import postgres_only
from tests.helpers import create_fun_table
from tests.tables.test_purchase_writer import (
    answer,
    dealt_table,
    open_socket,
    players,
    services_state,
    state,
    writer,  # noqa: F401  # the fixture
)

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.usefixtures("fresh_throttle_counters", "writer"),
    postgres_only(),
]


def rules_where_a_purchase_raises_the_level() -> None:
    """A hand played is 1 point, a draw 2, a redeal 3; a level is 3 points."""
    PowerUpRules.objects.update_or_create(
        pk=1, defaults={"points_per_hand": 1, "points_per_draw": 2, "points_per_redeal": 3, "points_per_level": 3}
    )


@pytest.mark.parametrize("algorithm", [2, 3])
async def test_the_answers_power_up_levels_are_those_a_fresh_read_gives(algorithm: int) -> None:
    from tests.tables.test_deal_beacon import _deal_at_round, _freeze

    await sync_to_async(rules_where_a_purchase_raises_the_level)()
    users = await sync_to_async(players)(4, prefix="w")
    with override_settings(DEAL_ALGORITHM=algorithm):
        if algorithm == 2:
            table, _hand = await sync_to_async(dealt_table)(users)
        else:
            table = await sync_to_async(create_fun_table)()
            freeze = await sync_to_async(_freeze)(table, users, timezone.now())
            await sync_to_async(_deal_at_round)(table, freeze, users)
        sockets = [await open_socket(user, table.pk) for user in users]
        kinds = ["buy_draw", "redeal", "buy_draw", "redeal"]
        for index, (socket, kind) in enumerate(zip(sockets, kinds, strict=True)):
            await socket.send_to(text_data=json.dumps({"type": kind, "ref": f"s{index}"}))
        answers = await asyncio.gather(*(answer(socket) for socket in sockets))
        frames = [await state(socket) for socket in sockets]

    assert [a["type"] for a in answers] == ["ack"] * 4
    assert purchases.get_writer().batches < 4  # draws and redeals together
    for user, frame, kind in zip(users, frames, kinds, strict=True):
        fresh = await sync_to_async(services_state)(table.pk, user.pk)
        assert frame["powerups"] == fresh["powerups"]
        assert frame == fresh
        # One hand (1 point) and the purchase: a draw 2 points, a redeal 3; level 2 from 3 points.
        assert frame["powerups"]["points"] == (3 if kind == "buy_draw" else 4)
        assert frame["powerups"]["level"] == 2
    for socket in sockets:
        await socket.disconnect()
