"""Staff report pages: dashboard, rake by table and day (with CSV), configuration audit
log. Staff only; read-only, so auditors (view-only staff) use them as croupiers do."""

from __future__ import annotations

import csv
from datetime import date, timedelta
from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.admin.views.decorators import staff_member_required
from django.core.paginator import Paginator
from django.http import HttpRequest, HttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.views.decorators.http import require_GET

from backoffice import selectors
from tables.selectors import list_lobby_tables
from wallet.money import format_minor
from wallet.selectors import check_books

CHANGES_PER_PAGE = 50
DEFAULT_REPORT_DAYS = 7
MAX_REPORT_DAYS = 366


class DateRangeForm(forms.Form):
    """A report's date range (UTC days, both included); last week by default."""

    start = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))
    end = forms.DateField(required=False, widget=forms.DateInput(attrs={"type": "date"}))

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        today = timezone.now().date()
        end = data.get("end") or today
        start = data.get("start") or end - timedelta(days=DEFAULT_REPORT_DAYS - 1)
        if start > end:
            raise forms.ValidationError("The start date must not be after the end date.")
        if (end - start).days >= MAX_REPORT_DAYS:
            raise forms.ValidationError(f"At most {MAX_REPORT_DAYS} days at a time.")
        data.update(start=start, end=end)
        return data


def _page(request: HttpRequest, template: str, title: str, **context: Any) -> HttpResponse:
    """Render a report inside the admin's frame (header, user tools, sidebar)."""
    return render(request, template, {**admin.site.each_context(request), "title": title, **context})


def _date_range(request: HttpRequest) -> tuple[DateRangeForm, date, date]:
    form = DateRangeForm(request.GET)
    if form.is_valid():
        return form, form.cleaned_data["start"], form.cleaned_data["end"]
    today = timezone.now().date()
    return form, today - timedelta(days=DEFAULT_REPORT_DAYS - 1), today


@require_GET
@staff_member_required
def dashboard(request: HttpRequest) -> HttpResponse:
    """Tables now (phase, players, pool), today's hands per table and currency, and the
    books check (every transfer balanced, balances equal to their entries)."""
    today = timezone.now().date()
    rows = selectors.list_table_day_totals(start=today, end=today, by_day=False)
    return _page(
        request,
        "backoffice/dashboard.html",
        "Back-office dashboard",
        tables=list_lobby_tables(),
        today=today,
        rows=rows,
        totals=selectors.sum_by_currency(rows),
        books=check_books(),
    )


@require_GET
@staff_member_required
def rake_report(request: HttpRequest) -> HttpResponse:
    """Rake, gross and prizes by table and day over a date range."""
    form, start, end = _date_range(request)
    rows = selectors.list_table_day_totals(start=start, end=end)
    return _page(
        request,
        "backoffice/rake_report.html",
        "Rake by table and day",
        form=form,
        start=start,
        end=end,
        rows=rows,
        totals=selectors.sum_by_currency(rows),
        query=request.GET.urlencode(),
    )


def _amount(amount_minor: int) -> str:
    """Minor units as a plain decimal for spreadsheets (``12345`` -> ``123.45``)."""
    return format_minor(amount_minor).replace(",", "")


@require_GET
@staff_member_required
def rake_report_csv(request: HttpRequest) -> HttpResponse:
    """The rake report as CSV (one line per table and day; amounts in major units)."""
    _form, start, end = _date_range(request)
    response = HttpResponse(content_type="text/csv; charset=utf-8")
    response["Content-Disposition"] = f'attachment; filename="rake-{start}-{end}.csv"'
    writer = csv.writer(response)
    writer.writerow(
        [
            "day",
            "table_id",
            "table",
            "currency",
            "hands",
            "cancelled",
            "entries",
            "gross",
            "rake",
            "prizes",
            "breakage",
        ]
    )
    for row in selectors.list_table_day_totals(start=start, end=end):
        writer.writerow(
            [
                row.day.isoformat() if row.day else "",
                row.table_id,
                row.table_name,
                row.currency,
                row.hands,
                row.cancelled,
                row.entries,
                _amount(row.gross_minor),
                _amount(row.rake_minor),
                _amount(row.prizes_minor),
                _amount(row.breakage_minor),
            ]
        )
    return response


@require_GET
@staff_member_required
def config_changes(request: HttpRequest) -> HttpResponse:
    """The configuration audit log (who, when, old, new, why, applied), by table."""
    table_id = request.GET.get("table")
    selected = int(table_id) if table_id and table_id.isdigit() else None
    page = Paginator(selectors.list_config_changes(table_id=selected), CHANGES_PER_PAGE).get_page(
        request.GET.get("page")
    )
    return _page(
        request,
        "backoffice/config_changes.html",
        "Configuration audit log",
        page=page,
        tables=selectors.list_table_choices(),
        selected=selected,
    )
