"""The tables' REST API: tables and play (the wallet's is wallet/api.py, the hand history's
handhistory/api.py; config/urls.py mounts all three under ``/api/``).

Every view is an adapter: parse the request, call one service or selector, answer. Money is
in integer minor units. Domain errors become ``{"code", "message", "extra"}`` bodies in the
project's exception handler (config.api); request validation errors answer 400 ``invalid``.
Play actions answer with the player's private state (``entry_state``), the same payload the
game socket pushes, so a client can render from either.
"""

from __future__ import annotations

from config.infra.throttles import ActionThrottle
from tables.api.play import (
    DrawBuyApi,
    EntryHoldApi,
    GameActionApi,
    RedealBuyApi,
    TableJoinApi,
    TableLeaveApi,
    TableSitInApi,
    TableSitOutApi,
    alias_action_view,
)
from tables.api.tables import TableDetailApi, TableEntryStateApi, TableListApi

__all__ = [
    "ActionThrottle",
    "DrawBuyApi",
    "EntryHoldApi",
    "GameActionApi",
    "RedealBuyApi",
    "TableDetailApi",
    "TableEntryStateApi",
    "TableJoinApi",
    "TableLeaveApi",
    "TableListApi",
    "TableSitInApi",
    "TableSitOutApi",
    "alias_action_view",
]
