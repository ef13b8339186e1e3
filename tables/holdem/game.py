"""Texas Hold'em as a game of the house (tables/gamespec.py): its ``GAME``, built from its
own functions, which the registry (``tables.games``) lists."""

from __future__ import annotations

from collections.abc import Mapping
from datetime import datetime
from functools import partial
from typing import Any

from django.db.models import Q
from django.http import HttpRequest, HttpResponse
from django.utils import timezone

from tables.errors import NotSeatedError
from tables.gamespec import NO_STEP, ConditionsSpec, Game, GameAdmin, GameAudit, Step
from tables.holdem import KEY, audit
from tables.holdem.books import check_holdem_escrows
from tables.holdem.commands import COMMANDS
from tables.holdem.forms import ChangeHoldemConditionsForm, HoldemCreateForm
from tables.holdem.lobby import LOBBY, lobby_row
from tables.holdem.page import holdem_table_page
from tables.holdem.push import broadcast_holdem_action_on_commit
from tables.holdem.selectors import get_holdem_private_frame, get_holdem_table_frame, render_holdem_private_frames
from tables.holdem.services.conditions import create_holdem_table, validate_holdem_config
from tables.holdem.services.deal import advance_holdem_table
from tables.holdem.services.hands import cancel_holdem_hand, running_hand
from tables.holdem.services.player import leave_holdem_table
from tables.models import HOLDEM_CONFIG_FIELDS, HoldemConditions, Seat, SeatStatus, Table, TableGame, TablePhase

CREATE_INITIAL: Mapping[str, Any] = {
    "betting": "no-limit",
    "small_blind_minor": 5,
    "big_blind_minor": 10,
    "big_bet_minor": 20,
    "seats": 6,
    "min_buy_in_minor": 200,
    "max_buy_in_minor": 1_000,
    "rake_bps": 500,
    "time_bank_seconds": 20,
    "bot_seats": 0,
}
"""The conditions the admin's "Add a Hold'em table" form starts from (minor units)."""


REST_DOC = """A Hold'em action (docs/protocol.md, "Texas Hold'em"): ``join`` (``seat``,
``buy_in_minor``, ``blind``), ``add_chips`` (``amount_minor``), ``leave``, ``sit_out``,
``sit_in``, ``fold``, ``check``, ``call``, ``all_in``, ``bet`` and ``raise``
(``amount``: the total to, in minor units; absent = the minimum). The same parse and
execute as the socket's; answers with the player's ``holdem_private`` frame. 400
``unknown_type`` for another action or a WiderPoker table's; 409 with the engine's
codes (``not_your_turn``, ``amount_too_small``, ...)."""
"""The Hold'em action route's description in the OpenAPI schema (``/api/tables/<id>/holdem/<action>/``)."""


def advance(table: Table, now: datetime) -> Step:
    """One clock step (``advance_holdem_table``). A betting action that left the hand
    running pushes the frame built from the rows the step holds (no second read)."""
    held = advance_holdem_table(table, now=now)
    if held is None:
        return NO_STEP
    return Step(broadcast=partial(broadcast_holdem_action_on_commit, rows=held))


def cancel(table: Table, reason: str, now: datetime) -> bool:
    """Cancel the running hand: the seats keep their starting stacks (``cancel_holdem_hand``)."""
    return cancel_holdem_hand(table=table, reason=reason, now=now)


def leave(table_id: int, user_id: int, now: datetime) -> object:
    """Take the player away as ``leave_holdem_table`` does (his chips go back to his wallet,
    after the hand he is in: he folds); a seat the service no longer finds is marked left."""
    try:
        return leave_holdem_table(table_id=table_id, user_id=user_id, now=now)
    except NotSeatedError:
        return Seat.objects.filter(table_id=table_id, user_id=user_id).update(status=SeatStatus.LEFT, left_at=now)


def current_conditions(table: Table) -> dict[str, Any]:
    """The conditions in force (``HoldemConditions``, one row beside the table)."""
    return HoldemConditions.objects.get(table=table).snapshot()


def validate(values: Mapping[str, Any], mode: str) -> None:
    """The conditions' rules for a table of ``mode``. Raises InvalidTableConfigError."""
    validate_holdem_config(values, mode=mode)


def on_change(table: Table, now: datetime) -> None:
    """Applied by the clock before the next hand is dealt (the seated players keep their
    seats and chips); a waiting table applies it at its next tick."""
    if table.phase in (TablePhase.WAITING, TablePhase.CLOSED):
        table.phase_deadline = now


def page(request: HttpRequest, table_id: int) -> HttpResponse:
    """The Hold'em screen for the logged-in ``request.user`` (tables/holdem/page.py). Raises Http404."""
    return holdem_table_page(request, table_id, user_id=int(request.user.pk or 0), username=request.user.get_username())


def running_label(table: Table) -> str | None:
    """The label of the running hand a malfunction cancel would cancel."""
    hand = running_hand(table)
    return None if hand is None else f"Hold'em hand #{hand.number}"


GAME = Game(
    key=KEY,
    label=TableGame.HOLDEM.label,
    create=create_holdem_table,
    conditions=ConditionsSpec(
        fields=HOLDEM_CONFIG_FIELDS,
        current=current_conditions,
        validate=validate,
        on_change=on_change,
        relation=KEY,
    ),
    advance=advance,
    cancel=cancel,
    leave=leave,
    admin=GameAdmin(
        create_form=HoldemCreateForm,
        create_initial=CREATE_INITIAL,
        conditions_form=ChangeHoldemConditionsForm,
        running_hand=running_label,
        add_title="Add a Hold'em table",
        cancelled="cancelled: every stack is back as it was",
        changed=lambda table, changes: "Recorded: the change applies before the next hand.",
    ),
    commands=COMMANDS,
    public_frame=lambda table_id: get_holdem_table_frame(table_id=table_id, now=timezone.now()),
    private_frames=lambda table_id, user_ids: render_holdem_private_frames(table_id=table_id, user_ids=user_ids),
    private_frame=lambda table_id, user_id: get_holdem_private_frame(
        table_id=table_id, user_id=user_id, now=timezone.now()
    ),
    page=page,
    lobby=LOBBY,
    lobby_row=lobby_row,
    background=Q(practice__isnull=False),
    books={"holdem_escrows": check_holdem_escrows},
    audit=GameAudit(totals=audit.totals, player_totals=audit.player_totals),
    running_hands_started=audit.running_hands_started,
    rest_alias=KEY,  # /api/tables/<id>/holdem/<action>/ (unchanged)
    rest_doc=REST_DOC,
)
"""Texas Hold'em (seed 003; practice games against bots inside it, tables/holdem/practice)."""
