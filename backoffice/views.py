"""Staff report pages: dashboard, rake by table and day (with CSV), configuration audit
log, the auditor report with its charts and streamed exports. Staff only; read-only, so
auditors (view-only staff) use them as croupiers do."""

from __future__ import annotations

from datetime import UTC, date, datetime, timedelta
from typing import Any

from django import forms
from django.contrib import admin
from django.contrib.admin.views.decorators import staff_member_required
from django.core.paginator import Paginator
from django.http import Http404, HttpRequest, HttpResponse, StreamingHttpResponse
from django.shortcuts import render
from django.utils import timezone
from django.utils.translation import gettext as _
from django.views.decorators.http import require_GET

from backoffice import audit_charts, audit_exports, auditing, operations, selectors
from backoffice.spreadsheet import csv_writer
from tables.selectors import list_lobby_tables
from wallet.models import Currency, LedgerHead
from wallet.money import format_minor

CHANGES_PER_PAGE = 50
AUDIT_ROWS_PER_PAGE = 200  # rows of the auditor report shown at once (the downloads have all)
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
            raise forms.ValidationError(_("The start date must not be after the end date."))
        if (end - start).days >= MAX_REPORT_DAYS:
            raise forms.ValidationError(_("At most %(days)s days at a time.") % {"days": MAX_REPORT_DAYS})
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
        _("Back-office dashboard"),
        tables=list_lobby_tables(),
        today=today,
        rows=rows,
        totals=selectors.sum_by_currency(rows),
        books=operations.run_books_check(),  # recorded for the metrics and the status page
        heads=list(LedgerHead.objects.order_by("currency")),
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
        _("Rake by table and day"),
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
    writer = csv_writer(response)  # text cells that a spreadsheet would run are escaped
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
        _("Configuration audit log"),
        page=page,
        tables=selectors.list_table_choices(),
        selected=selected,
    )


class AuditReportForm(DateRangeForm):
    """The auditor report's filters: a date range, the grouping, a table, a currency, a
    player (username, exact) and whether to show practice games instead (default: no)."""

    group = forms.ChoiceField(
        choices=[("day", "day"), ("table", "table"), ("player", "player")], required=False, initial="day"
    )
    table = forms.TypedChoiceField(coerce=int, required=False, empty_value=None, choices=[])
    currency = forms.ChoiceField(required=False, choices=[("", "all"), *Currency.choices])
    player = forms.CharField(required=False, max_length=150, strip=True)
    practice = forms.ChoiceField(required=False, choices=[("", "no"), ("yes", "yes")])

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        table_field = self.fields["table"]
        assert isinstance(table_field, forms.TypedChoiceField)
        practice = bool(self.data.get("practice") == "yes")
        table_field.choices = [("", "all"), *selectors.list_table_choices(practice=practice)]

    def clean(self) -> dict[str, Any]:
        data = super().clean()
        data["group"] = data.get("group") or "day"
        return data


def _audit_filters(request: HttpRequest) -> tuple[AuditReportForm, dict[str, Any]]:
    """The form and its cleaned filters; invalid input falls back to the last week, all."""
    form = AuditReportForm(request.GET)
    if form.is_valid():
        data = form.cleaned_data
        return form, {
            "start": data["start"],
            "end": data["end"],
            "table_id": data.get("table"),
            "currency": data.get("currency") or None,
            "player": data.get("player") or None,
            "practice": data.get("practice") == "yes",
            "group_by": data["group"],
        }
    today = timezone.now().date()
    return form, {
        "start": today - timedelta(days=DEFAULT_REPORT_DAYS - 1),
        "end": today,
        "table_id": None,
        "currency": None,
        "player": None,
        "practice": False,
        "group_by": "day",
    }


@require_GET
@staff_member_required
def audit_report(request: HttpRequest) -> HttpResponse:
    """The auditor report: totals by day, table or player over any range (hands, entries,
    gross, rake, prizes, return to player), the charts, and the streamed downloads."""
    form, filters = _audit_filters(request)
    rows = auditing.list_audit_totals(**filters)
    # By player, a busy day has tens of thousands of rows: render one page of them (the
    # downloads hold every row); rendering 27,000 rows took 9-27 s (docs/benchmarks.md).
    page = Paginator(rows, AUDIT_ROWS_PER_PAGE).get_page(request.GET.get("page"))
    charts = audit_charts.list_chart_series(**{name: value for name, value in filters.items() if name != "group_by"})
    query = request.GET.copy()
    query.pop("page", None)
    page_query = query.urlencode()
    query.pop("group", None)
    return _page(
        request,
        "backoffice/audit_report.html",
        _("Auditor report"),
        form=form,
        rows=page.object_list,
        page=page,
        page_query=page_query,
        charts=[_chart_dict(chart) for chart in charts],
        exports=[(kind, kind not in audit_exports.JSON_ONLY_KINDS) for kind in audit_exports.EXPORT_KINDS],
        export_query=query.urlencode(),
        **filters,
    )


def _chart_dict(chart: audit_charts.ChartSeries) -> dict[str, Any]:
    return {name: getattr(chart, name) for name in chart.__slots__}


@require_GET
@staff_member_required
def audit_export(request: HttpRequest, kind: str, fmt: str) -> StreamingHttpResponse:
    """Stream ``hands``, ``entries``, ``transfers`` (ledger legs), ``holdem_hands`` or
    ``holdem_players`` of the range as CSV or a JSON array, or ``holdem_records`` (whole
    Hold'em hand documents) as JSON, read in chunks: a month of a busy table never sits in
    memory. Filters as the report's (table, currency, player, practice)."""
    if kind not in audit_exports.EXPORT_KINDS or fmt not in {"csv", "json"}:
        raise Http404("no such export")
    if fmt == "csv" and kind in audit_exports.JSON_ONLY_KINDS:
        raise Http404("this export is JSON only")
    _form, filters = _audit_filters(request)
    export_kind: audit_exports.ExportKind = kind  # checked just above
    header = audit_exports.export_header(export_kind)
    rows = audit_exports.iter_export_rows(
        export_kind,
        start=filters["start"],
        end=filters["end"],
        table_id=filters["table_id"],
        currency=filters["currency"],
        player=filters["player"],
        practice=filters["practice"],
    )
    if kind in audit_exports.JSON_ONLY_KINDS:
        pieces = audit_exports.stream_json_documents(rows)
    else:
        pieces = audit_exports.stream_csv(header, rows) if fmt == "csv" else audit_exports.stream_json(header, rows)
    content_type = "text/csv; charset=utf-8" if fmt == "csv" else "application/json"
    response = StreamingHttpResponse(pieces, content_type=content_type)
    response["Content-Disposition"] = f'attachment; filename="{kind}-{filters["start"]}-{filters["end"]}.{fmt}"'
    return response


@require_GET
@staff_member_required
def status(request: HttpRequest) -> HttpResponse:
    """The platform's health for staff (Croupiers and Auditors read it alike): this
    process's readiness checks, the ASGI processes and their heartbeats, the table clock and
    each table's lateness, the beacon, the last books check, the open hands and their ages.
    The same reads as ``/readyz`` and ``/metrics`` (backoffice/operations.py)."""
    figures = operations.read_figures()
    return _page(
        request,
        "backoffice/status.html",
        _("Platform status"),
        readiness=operations.check_readiness(),
        figures=figures,
        tick_age=None if figures.tick is None else max(0.0, figures.now.timestamp() - figures.tick.at),
        clock_late_seconds=operations.clock_late_seconds(),
        books_at=None if figures.books is None else datetime.fromtimestamp(figures.books.at, tz=UTC),
        beacon_ok_at=None
        if figures.beacon.last_ok_at is None
        else datetime.fromtimestamp(figures.beacon.last_ok_at, tz=UTC),
        beacon_failing_since=None
        if figures.beacon.failing_since is None
        else datetime.fromtimestamp(figures.beacon.failing_since, tz=UTC),
    )
