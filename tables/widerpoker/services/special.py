"""Special hands: which hands are special, what they change, and what the lobby announces
(seed 001, D: "Periodically the system proposes a SPECIAL HAND"; DESIGN item 16).

A hand is special when one of its table's active schedules fires for it:

* ``every_n``: its number is a multiple of N;
* ``times``: it is the first hand dealt at or after one of the listed times of day;
* ``chance``: ``randbelow(N) == 0`` on the hand's stream ``special-hand`` (provably fair).

Schedules are checked when saved: one that never fires (N below 2, no valid time) is
refused, and two active schedules of one table overlap, and are refused, when they are of
the same kind or change the same rule (so a hand special twice has one meaning).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from datetime import datetime, timedelta
from decimal import Decimal
from typing import Any

from django.db import transaction
from django.utils import timezone

from tables.engine.widerpoker import special_hand_draw
from tables.engine.widerpoker.conditions import OVERRIDABLE
from tables.errors import InvalidTableConfigError
from tables.models import SpecialHandKind, SpecialHandSchedule, Table, TableConfigChange
from tables.widerpoker.services.conditions import apply_overrides, validate_overrides
from wallet.money import format_minor

_TIME = re.compile(r"^([01]\d|2[0-3]):([0-5]\d)$")
MAX_ONE_IN = 1_000_000


@dataclass(frozen=True)
class ScheduleInput:
    """A schedule as staff submit it (before it is saved)."""

    name: str
    kind: str
    every_n: int | None = None
    times: tuple[str, ...] = ()
    one_in: int | None = None
    overrides: dict[str, Any] | None = None
    is_active: bool = True


def validate_schedule(table: Table, schedule: ScheduleInput, *, exclude_id: int | None = None) -> dict[str, Any]:
    """Check a schedule against the rules and the table's other active schedules; return its
    clean overrides. Raises InvalidTableConfigError naming the field at fault."""
    if not schedule.name.strip():
        raise InvalidTableConfigError("a special hand needs a name players can read", field="name")
    if schedule.kind == SpecialHandKind.EVERY_N:
        if schedule.every_n is None or schedule.every_n < 2:
            raise InvalidTableConfigError(
                "every N hands needs N of 2 or more (1 would make every hand special)", field="every_n"
            )
    elif schedule.kind == SpecialHandKind.TIMES:
        if not schedule.times or not all(isinstance(t, str) and _TIME.match(t) for t in schedule.times):
            raise InvalidTableConfigError('times of day are "HH:MM", at least one', field="times")
        if len(set(schedule.times)) != len(schedule.times):
            raise InvalidTableConfigError("a time of day is listed twice", field="times")
    elif schedule.kind == SpecialHandKind.CHANCE:
        if schedule.one_in is None or not 2 <= schedule.one_in <= MAX_ONE_IN:
            raise InvalidTableConfigError(f"1 in N hands needs N from 2 to {MAX_ONE_IN:,}", field="one_in")
    else:
        raise InvalidTableConfigError(f"unknown schedule kind {schedule.kind!r}", field="kind")
    overrides = validate_overrides(schedule.overrides or {})
    if not overrides:
        raise InvalidTableConfigError("a special hand changes at least one rule", field="overrides")
    apply_overrides(table.widerpoker.snapshot(), overrides, source="special")  # the merged rules must hold
    if schedule.is_active:
        others = SpecialHandSchedule.objects.filter(table=table, is_active=True)
        if exclude_id is not None:
            others = others.exclude(pk=exclude_id)
        for other in others:
            if other.kind == schedule.kind:
                raise InvalidTableConfigError(
                    f"overlaps {other.name!r}: one active {other.get_kind_display().lower()} schedule per table",
                    field="kind",
                )
            shared = set(other.overrides) & set(overrides)
            if shared:
                raise InvalidTableConfigError(
                    f"overlaps {other.name!r}, which also changes {', '.join(sorted(shared))}", field="overrides"
                )
    return overrides


@transaction.atomic(durable=True)
def save_schedule(
    *,
    table_id: int,
    schedule: ScheduleInput,
    staff_user_id: int,
    reason: str,
    now: datetime,
    schedule_id: int | None = None,
) -> SpecialHandSchedule:
    """Create or change a table's special-hand schedule, audit-logged with ``reason``. It
    applies from the next hand dealt. Raises InvalidTableConfigError (nothing saved)."""
    if not reason.strip():
        raise InvalidTableConfigError("say why the special hands change", field="reason")
    table = Table.objects.select_for_update().get(pk=table_id)
    overrides = validate_schedule(table, schedule, exclude_id=schedule_id)
    row = (
        SpecialHandSchedule.objects.get(pk=schedule_id, table=table)
        if schedule_id
        else SpecialHandSchedule(table=table)
    )
    old = _describe(row) if schedule_id else {}
    row.name = schedule.name.strip()
    row.kind = schedule.kind
    row.every_n = schedule.every_n if schedule.kind == SpecialHandKind.EVERY_N else None
    row.times = sorted(schedule.times) if schedule.kind == SpecialHandKind.TIMES else []
    row.one_in = schedule.one_in if schedule.kind == SpecialHandKind.CHANCE else None
    row.overrides = overrides
    row.is_active = schedule.is_active
    row.save()
    TableConfigChange.objects.create(
        table=table,
        changed_by_id=staff_user_id,
        changed_at=now,
        field=f"special_hand:{row.pk}",
        old_value=old,
        new_value=_describe(row),
        reason=reason[:255],
        applied_at=now,  # read by the next hand dealt
    )
    return row


@transaction.atomic(durable=True)
def set_schedule_active(*, schedule_id: int, is_active: bool, staff_user_id: int, reason: str, now: datetime) -> bool:
    """Pause (``is_active=False``) or resume a special-hand schedule, audit-logged with
    ``reason`` as ``special_hand:<id>``; from the next hand dealt. Returns False when it was
    already so (nothing logged). Resuming checks the table's other active schedules again.
    Raises InvalidTableConfigError (no reason, an overlap); nothing changes."""
    if not reason.strip():
        raise InvalidTableConfigError("say why the special hands change", field="reason")
    table_id = SpecialHandSchedule.objects.values_list("table_id", flat=True).get(pk=schedule_id)
    table = Table.objects.select_for_update().get(pk=table_id)
    row = SpecialHandSchedule.objects.get(pk=schedule_id)
    if row.is_active == is_active:
        return False
    old = _describe(row)
    if is_active:
        validate_schedule(table, _as_input(row, is_active=True), exclude_id=row.pk)
    row.is_active = is_active
    row.save(update_fields=["is_active"])
    _log(table=table, row_id=row.pk, old=old, new=_describe(row), staff_user_id=staff_user_id, reason=reason, now=now)
    return True


@transaction.atomic(durable=True)
def delete_schedule(*, schedule_id: int, staff_user_id: int, reason: str, now: datetime) -> None:
    """Delete a special-hand schedule; the audit log keeps what it was (``special_hand:<id>``,
    new value empty) with ``reason``. Hands already dealt keep the conditions they were
    dealt with (``Hand.config``). Raises InvalidTableConfigError without a reason."""
    if not reason.strip():
        raise InvalidTableConfigError("say why the special hands change", field="reason")
    table_id = SpecialHandSchedule.objects.values_list("table_id", flat=True).get(pk=schedule_id)
    table = Table.objects.select_for_update().get(pk=table_id)
    row = SpecialHandSchedule.objects.get(pk=schedule_id)
    old = _describe(row)
    row.delete()
    _log(table=table, row_id=schedule_id, old=old, new={}, staff_user_id=staff_user_id, reason=reason, now=now)


def _as_input(row: SpecialHandSchedule, *, is_active: bool) -> ScheduleInput:
    return ScheduleInput(
        name=row.name,
        kind=row.kind,
        every_n=row.every_n,
        times=tuple(row.times),
        one_in=row.one_in,
        overrides=dict(row.overrides),
        is_active=is_active,
    )


def _log(
    *,
    table: Table,
    row_id: int,
    old: dict[str, Any],
    new: dict[str, Any],
    staff_user_id: int,
    reason: str,
    now: datetime,
) -> None:
    TableConfigChange.objects.create(
        table=table,
        changed_by_id=staff_user_id,
        changed_at=now,
        field=f"special_hand:{row_id}",
        old_value=old,
        new_value=new,
        reason=reason.strip()[:255],
        applied_at=now,  # read by the next hand dealt
    )


def _describe(row: SpecialHandSchedule) -> dict[str, Any]:
    return {
        "name": row.name,
        "kind": row.kind,
        "every_n": row.every_n,
        "times": list(row.times),
        "one_in": row.one_in,
        "overrides": dict(row.overrides),
        "is_active": row.is_active,
    }


def _last_occurrence(moment: datetime, hhmm: str) -> datetime:
    """The latest instant at or before ``moment`` (local time) whose clock reads ``hhmm``."""
    local = timezone.localtime(moment)
    hours, minutes = (int(part) for part in hhmm.split(":"))
    candidate = local.replace(hour=hours, minute=minutes, second=0, microsecond=0)
    if candidate > local:
        candidate -= timedelta(days=1)
    return candidate


def fires(
    schedule: SpecialHandSchedule, *, number: int, seed: bytes, now: datetime, previous_start: datetime | None
) -> bool:
    """Whether ``schedule`` makes hand ``number`` (dealt at ``now`` with ``seed``) special."""
    if schedule.kind == SpecialHandKind.EVERY_N:
        return schedule.every_n is not None and schedule.every_n > 0 and number % schedule.every_n == 0
    if schedule.kind == SpecialHandKind.TIMES:
        for hhmm in schedule.times:
            due = _last_occurrence(now, hhmm)
            if previous_start is not None and previous_start < due:
                return True  # the first hand dealt since that time
            if previous_start is None and now - due < timedelta(minutes=1):
                return True  # the table's first hand, dealt at that time
        return False
    if schedule.kind == SpecialHandKind.CHANCE:
        return special_hand_draw(seed, int(schedule.one_in or 1))
    return False


def special_draws(
    table: Table, *, number: int, seed: bytes, now: datetime, previous_start: datetime | None
) -> list[dict[str, Any]]:
    """Every active schedule of the table as checked for hand ``number``, in schedule order:
    ``name``, ``kind`` (``every_n``, ``times``, ``chance``), its rule (``every_n``; ``times``,
    "HH:MM" in the platform's time zone; ``one_in`` = N of "1 in N": the hand is special when
    ``randbelow(N) == 0`` on its stream ``special-hand``, docs/provably-fair.md section 2),
    ``overrides`` and ``fired``. Frozen in the hand's conditions (``config.special_schedules``)
    so an auditor can recompute the draw."""
    return [
        {
            "name": schedule.name,
            "kind": schedule.kind,
            "every_n": schedule.every_n,
            "times": list(schedule.times or []),
            "one_in": schedule.one_in,
            "overrides": schedule.overrides,
            "fired": fires(schedule, number=number, seed=seed, now=now, previous_start=previous_start),
        }
        for schedule in SpecialHandSchedule.objects.filter(table=table, is_active=True).order_by("pk")
    ]


def special_overrides(
    table: Table, *, number: int, seed: bytes, now: datetime, previous_start: datetime | None
) -> tuple[dict[str, Any], list[str]]:
    """The overrides of every active schedule that fires for this hand (merged; schedules
    never change the same rule) and their names."""
    return merge_special(special_draws(table, number=number, seed=seed, now=now, previous_start=previous_start))


def merge_special(draws: list[dict[str, Any]]) -> tuple[dict[str, Any], list[str]]:
    """The merged overrides and the names of the schedules of ``special_draws`` that fired."""
    merged: dict[str, Any] = {}
    names: list[str] = []
    for draw in draws:
        if draw["fired"]:
            merged.update(draw["overrides"])
            names.append(str(draw["name"]))
    return merged, names


def next_special(table: Table, *, now: datetime) -> str | None:
    """What the lobby and the game screen announce about the table's next special hand."""
    notes: list[str] = []
    for schedule in SpecialHandSchedule.objects.filter(table=table, is_active=True).order_by("pk"):
        changes = describe_overrides(schedule.overrides, table.currency)
        if schedule.kind == SpecialHandKind.EVERY_N and schedule.every_n:
            upcoming = table.hands_dealt + 1
            left = (-upcoming) % int(schedule.every_n)
            when = "next hand" if left == 0 else f"in {left + 1} hands"
            notes.append(f"{schedule.name} {when} (hand #{upcoming + left}): {changes}")
        elif schedule.kind == SpecialHandKind.TIMES and schedule.times:
            local = timezone.localtime(now)
            today = [local.replace(hour=int(t[:2]), minute=int(t[3:]), second=0, microsecond=0) for t in schedule.times]
            upcoming_times = [t for t in today if t > local] or [t + timedelta(days=1) for t in today]
            notes.append(f"{schedule.name} at {min(upcoming_times).strftime('%H:%M')}: {changes}")
        elif schedule.kind == SpecialHandKind.CHANCE and schedule.one_in:
            notes.append(f"{schedule.name} 1 hand in {schedule.one_in}: {changes}")
    return "; ".join(notes) or None


def percent_of_bps(bps: int) -> str:
    """Basis points as a percent without trailing zeros: 5000 -> ``"50"``, 1250 -> ``"12.5"``."""
    text = f"{(Decimal(bps) / 100).quantize(Decimal('0.01')):f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def describe_overrides(overrides: dict[str, Any], currency: str | None = None) -> str:
    """Overrides as players read them, in people's units: ``"no tips, 3 draws, share of
    entries paid 50 %, change phase length 30 s, price of a redeal 2.00 EUR"`` (shares in
    percent, durations in seconds, money in the currency with its decimals; without
    ``currency`` money shows its decimals only)."""
    parts = []
    for key, value in overrides.items():
        label = OVERRIDABLE.get(key, key).split(" (")[0]
        if key in ("tips", "panel"):
            parts.append(f"{'' if value else 'no '}{'tips' if key == 'tips' else 'probability panel'}")
        elif key.endswith("_minor"):
            parts.append(f"{label} {format_minor(int(value), currency) if currency else f'{value / 100:.2f}'}")
        elif key.endswith("_bps"):
            parts.append(f"{label} {percent_of_bps(int(value))} %")
        elif key.endswith("_seconds"):
            parts.append(f"{label} {value} s")
        else:
            parts.append(f"{label} {value}")
    return ", ".join(parts)


def schedule_text(value: dict[str, Any], currency: str | None) -> str:
    """A special-hand schedule as the configuration audit log records it (a
    ``special_hand:<id>`` row's value: ``name``, ``kind``, ``every_n`` / ``times`` /
    ``one_in``, ``overrides``, ``is_active``), in people's units: ``"Happy hour: every 10
    hands: share of entries paid 50 %, no tips (active)"``. Registered with
    ``tables.config_text.register_value_text`` by the registry of games (tables/games.py)."""
    kind = value.get("kind")
    if kind == "every_n":
        when = f"every {value.get('every_n')} hands"
    elif kind == "times":
        when = "at " + ", ".join(value.get("times") or [])
    else:
        when = f"1 hand in {value.get('one_in')}"
    state = "active" if value.get("is_active") else "paused"
    return f"{value.get('name')}: {when}: {describe_overrides(value.get('overrides') or {}, currency)} ({state})"
