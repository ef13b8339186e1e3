"""The coin flip as a ``Game`` of the house (tables/gamespec.py), built from its own functions.

Players call ``heads`` or ``tails`` (``call``); the first call opens a round of
``ROUND_SECONDS``; at its deadline the clock flips the coin (``advance``: the side is the
first bit of ``sha256("<table>:<round>")``, so any flip can be recomputed) and shows the
result for ``RESULTS_SECONDS`` before the table waits again. Nothing is staked.
"""

from __future__ import annotations

import hashlib
import json
from collections.abc import Mapping
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import Any, Final

from django import forms
from django.db import transaction
from django.http import HttpRequest, HttpResponse, JsonResponse

from tables.commands import Command, InvalidFieldError
from tables.errors import NotSeatedError
from tables.forms import ConditionsForm, creation_reason
from tables.gamespec import NO_STEP, ConditionsSpec, Game, GameAdmin, Step
from tables.models import Seat, SeatStatus, Table, TableMode, TablePhase
from tables.realtime.bus import publish_table_frame
from tables.selectors import get_table
from tables.services.configuration import check_mode_currency, record_table_created
from wallet.models import Currency

KEY: Final = "coinflip"
ROUND_SECONDS: Final = 5
RESULTS_SECONDS: Final = 2
SIDES: Final = ("heads", "tails")


@dataclass
class Rounds:
    """One table's state in memory: the open calls ``{user_id: side}`` and every flip made
    (``{"round", "side", "winners"}``), and the frames its steps published, in order."""

    calls: dict[int, str] = field(default_factory=dict)
    flips: list[dict[str, Any]] = field(default_factory=list)
    published: list[dict[str, Any]] = field(default_factory=list)


STATE: dict[int, Rounds] = {}
"""Every coin-flip table's ``Rounds`` by table id (a test clears it)."""


def rounds(table_id: int) -> Rounds:
    return STATE.setdefault(table_id, Rounds())


def flip(table_id: int, number: int) -> str:
    """The side of flip ``number`` (1, 2, ...) at table ``table_id``: the first bit of
    ``sha256("<table>:<number>")``, 0 heads, 1 tails."""
    return SIDES[hashlib.sha256(f"{table_id}:{number}".encode()).digest()[0] >> 7]


@transaction.atomic(durable=True)
def create(*, name: str, mode: str, currency: str, staff_user_id: int | None = None, reason: str = "") -> Table:
    """Open a coin-flip table: the house's row alone (a coin flip has no conditions)."""
    check_mode_currency(mode, currency)
    table = Table.objects.create(name=name, game=KEY, mode=mode, currency=currency)
    if staff_user_id is not None:
        record_table_created(
            table=table, conditions={}, staff_user_id=staff_user_id, reason=reason, now=table.created_at
        )
    return table


def parse_side(value: object) -> str:
    if value not in SIDES:
        raise InvalidFieldError('side is "heads" or "tails"', field="side")
    return str(value)


@transaction.atomic(durable=True)
def call(*, table_id: int, user_id: int, now: datetime, side: str) -> str:
    """Call ``side`` for the next flip, seated at the table (a seat is made on the first call);
    the first call of a round starts its ``ROUND_SECONDS``. Returns the side."""
    table = get_table(table_id, lock=True)
    Seat.objects.get_or_create(table=table, user_id=user_id, defaults={"joined_at": now, "last_seen_at": now})
    rounds(table_id).calls[user_id] = side
    if table.phase == TablePhase.WAITING:
        table.phase = TablePhase.CHANGE
        table.phase_deadline = now + timedelta(seconds=ROUND_SECONDS)
    table.version += 1
    table.save(update_fields=["phase", "phase_deadline", "version"])
    return side


def public_frame(table_id: int) -> dict[str, Any]:
    table = get_table(table_id)
    state = rounds(table_id)
    return {
        "type": "coinflip_state",
        "table_id": table_id,
        "version": table.version,
        "phase": table.phase,
        "calls": len(state.calls),
        "flips": list(state.flips),
    }


def private_frame(table_id: int, user_id: int) -> dict[str, Any]:
    get_table(table_id)
    return {"type": "coinflip_private", "table_id": table_id, "call": rounds(table_id).calls.get(user_id)}


def private_frames(table_id: int, user_ids: set[int]) -> dict[int, str]:
    return {user_id: json.dumps(private_frame(table_id, user_id)) for user_id in user_ids}


def page(request: HttpRequest, table_id: int) -> HttpResponse:
    """The game screen: here, both frames as JSON."""
    user_id = int(request.user.pk or 0)
    return JsonResponse({"table": public_frame(table_id), "private": private_frame(table_id, user_id)})


def _publish(table: Table) -> None:
    """After commit: the step's public frame to every socket of the table (each seated
    player's private frame refreshed), and into ``Rounds.published``."""
    frame = public_frame(table.pk) | {"version": table.version}

    def send() -> None:
        rounds(table.pk).published.append(frame)
        publish_table_frame(table.pk, json.dumps(frame), refresh_private=True)

    transaction.on_commit(send)


def advance(table: Table, now: datetime) -> Step:
    """One clock step: flip at the round's deadline, then wait again after the results."""
    state = rounds(table.pk)
    if table.phase == TablePhase.CHANGE:
        number = table.hands_dealt + 1
        side = flip(table.pk, number)
        winners = sorted(user_id for user_id, called in state.calls.items() if called == side)
        state.flips.append({"round": number, "side": side, "winners": winners})
        state.calls.clear()
        table.hands_dealt = number
        table.phase = TablePhase.RESULTS
        table.phase_deadline = now + timedelta(seconds=RESULTS_SECONDS)
        table.version += 1
        return Step(broadcast=_publish)
    if table.phase == TablePhase.RESULTS:
        table.phase = TablePhase.WAITING
        table.phase_deadline = None
        table.version += 1
        return Step(broadcast=_publish)
    table.phase_deadline = None
    return NO_STEP


def cancel(table: Table, reason: str, now: datetime) -> bool:
    """Nothing is staked: a malfunction forgets the open calls."""
    state = rounds(table.pk)
    had = bool(state.calls)
    state.calls.clear()
    return had


def leave(table_id: int, user_id: int, now: datetime) -> object:
    """Take the player away: his call is forgotten, his seat left."""
    rounds(table_id).calls.pop(user_id, None)
    if not Seat.objects.filter(table_id=table_id, user_id=user_id).update(status=SeatStatus.LEFT, left_at=now):
        raise NotSeatedError("not seated", table_id=table_id)
    return None


class CoinFlipForm(ConditionsForm):
    """A coin-flip table has no conditions: its name, mode, currency and why."""

    name = forms.CharField(max_length=60)
    mode = forms.ChoiceField(choices=TableMode.choices)
    currency = forms.ChoiceField(choices=Currency.choices)
    reason = creation_reason()

    @staticmethod
    def initial_from(config: dict[str, Any]) -> dict[str, Any]:
        return {}

    def config(self) -> dict[str, Any]:
        return {}


def _no_conditions(values: Mapping[str, Any], mode: str) -> None:
    """No conditions, nothing to check."""


GAME = Game(
    key=KEY,
    label="Coin flip",
    create=create,
    conditions=ConditionsSpec(
        fields=(), current=lambda table: {}, validate=_no_conditions, on_change=lambda t, n: None
    ),
    advance=advance,
    cancel=cancel,
    leave=leave,
    admin=GameAdmin(
        create_form=CoinFlipForm,
        create_initial={},
        conditions_form=CoinFlipForm,
        running_hand=lambda table: f"flip #{table.hands_dealt + 1}" if rounds(table.pk).calls else None,
        add_title="Add a coin-flip table",
        cancelled="cancelled: the calls are forgotten",
        changed=lambda table, changes: "Nothing to change.",
    ),
    commands={"call": Command(frozenset({"side"}), call, {"side": parse_side}, seats=True)},
    public_frame=public_frame,
    private_frame=private_frame,
    private_frames=private_frames,
    page=page,
)
"""The coin flip (test only)."""
