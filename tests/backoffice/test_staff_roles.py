"""The staff roles as documented are the roles as granted: the table "Staff roles" in
docs/deployment.md is read here and compared with the groups ``create_staff_groups`` makes,
permission by permission, both ways (nothing marked "no" is held, nothing held is missing
from the table)."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest
from django.conf import settings
from django.contrib.auth.models import Group, Permission

from backoffice.management.commands.create_staff_groups import APPS, ensure_staff_groups

pytestmark = pytest.mark.django_db

DOC = Path(settings.BASE_DIR) / "docs" / "deployment.md"
GROUPS = ("Croupiers", "Auditors")


def role_table() -> list[dict[str, Any]]:
    """The rows of the "Staff roles" table: task, permissions (``app.codename`` or
    ``view_*``), and "yes"/"no" for each group, by the header's column names."""
    text = DOC.read_text(encoding="utf-8")
    section = text.split("## Staff roles", 1)[1].split("\n## ", 1)[0]
    lines = [line.strip() for line in section.splitlines() if line.strip().startswith("|")]
    header = [cell.strip() for cell in lines[0].strip("|").split("|")]
    rows = []
    for line in lines[2:]:
        cells = dict(zip(header, (cell.strip() for cell in line.strip("|").split("|")), strict=True))
        rows.append(
            {
                "task": cells["task"],
                "permissions": re.findall(r"`([^`]+)`", cells["permissions"]),
                **{group: cells[group] for group in GROUPS},
            }
        )
    return rows


def held(group: str) -> set[str]:
    return {
        f"{app}.{codename}"
        for app, codename in Group.objects.get(name=group).permissions.values_list(
            "content_type__app_label", "codename"
        )
    }


def every_view_permission() -> set[str]:
    return {
        f"{app}.{codename}"
        for app, codename in Permission.objects.filter(
            content_type__app_label__in=APPS, codename__startswith="view_"
        ).values_list("content_type__app_label", "codename")
    }


def test_the_documented_table_names_real_permissions_and_says_yes_or_no() -> None:
    rows = role_table()
    assert len(rows) >= 10
    for row in rows:
        assert row["permissions"], row["task"]
        assert {row[group] for group in GROUPS} <= {"yes", "no"}, row
        for name in row["permissions"]:
            if name == "view_*":
                continue
            app, codename = name.split(".")
            assert Permission.objects.filter(content_type__app_label=app, codename=codename).exists(), name


@pytest.mark.parametrize("group", GROUPS)
def test_each_group_holds_exactly_what_docs_deployment_says(group: str) -> None:
    ensure_staff_groups()
    rows = role_table()
    granted = held(group)
    documented: set[str] = set()
    for row in rows:
        names = set(row["permissions"])
        expanded = (names - {"view_*"}) | (every_view_permission() if "view_*" in names else set())
        if row[group] == "yes":
            missing = expanded - granted
            assert not missing, f"{group} may {row['task']!r} per the doc, but lacks {sorted(missing)}"
            documented |= expanded
        else:
            extra = expanded & granted
            assert not extra, f"{group} may not {row['task']!r} per the doc, but holds {sorted(extra)}"
    undocumented = granted - documented
    assert not undocumented, f"{group} holds permissions the doc's table does not give it: {sorted(undocumented)}"


def test_auditors_hold_only_view_permissions() -> None:
    ensure_staff_groups()
    assert all(name.split(".")[1].startswith("view_") for name in held("Auditors"))
