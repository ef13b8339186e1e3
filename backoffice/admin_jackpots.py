"""The jackpots' admin pages that reach the tables (issue 21: jackpots import no ``tables``
module but the engine): a jackpot's form, which picks the tables it feeds and is saved through
``tables.widerpoker.services.staff`` with a reason, audit-logged like a table's conditions; and the house
funding page (cashier -> jackpot reserve or promotions). Registered for ``jackpots.Jackpot``, so
its URLs (``admin:jackpots_jackpot_*``, ``admin:jackpots_house_funding``) and templates
(``admin/jackpots/jackpot/...``) are the jackpots' as before. The read-only events stay in
``jackpots/admin.py``."""

from __future__ import annotations

import uuid
from decimal import Decimal
from typing import Any

from django import forms
from django.contrib import admin, messages
from django.core.exceptions import PermissionDenied
from django.http import HttpRequest, HttpResponse, HttpResponseRedirect
from django.template.response import TemplateResponse
from django.urls import URLPattern, path, reverse
from django.utils import timezone

from config.infra.errors import DomainError
from jackpots import services
from jackpots.models import Jackpot, JackpotKind
from tables.adminkit.forms import add_domain_error, add_override_fields, initial_from_overrides, overrides_from
from tables.models import Table
from tables.widerpoker.services.staff import JackpotInput, fund_house, save_jackpot, validate_jackpot_input
from wallet.admin import ServiceAdmin
from wallet.models import Account, AccountKind, Currency
from wallet.money import format_minor

_ALIASES = {
    "contribution_bps": "contribution_percent",
    "reset_minor": "reset_amount",
    "starting_minor": "starting_amount",
    "jackpots": "tables",
    "amount_minor": "amount",
}


def _hundredths(value: Decimal | None) -> int:
    """Major units (or percent) with two decimals -> minor units (or basis points), exactly."""
    return int((value or Decimal(0)) * 100)


class JackpotForm(forms.ModelForm):  # type: ignore[type-arg]  # django-stubs generic
    """A jackpot, the tables it feeds, its starting amount and the reason, in people's units
    (contribution in percent of the gross, amounts in the currency, each rule a spin changes
    as a field of its own). Checked as a whole by ``tables.widerpoker.services.staff`` (the jackpot's
    ranges; for every table its currency, one jackpot per kind, at most 10% together)."""

    contribution_percent = forms.DecimalField(
        label="Contribution (% of each hand's gross)",
        min_value=0,
        max_value=10,
        decimal_places=2,
        initial=Decimal("0.5"),
        help_text="Set aside before rake at every table it feeds; at most 10 %, e.g. 0.5.",
    )
    reset_amount = forms.DecimalField(
        label="Restarts from (amount)",
        min_value=0,
        max_digits=14,
        decimal_places=2,
        initial=Decimal(0),
        help_text="After a win, paid from the house's jackpot reserve, e.g. 100.00.",
    )
    starting_amount = forms.DecimalField(
        label="Starting amount",
        required=False,
        min_value=0,
        max_digits=14,
        decimal_places=2,
        help_text="Moved from the house's jackpot reserve when the jackpot is created (empty: the reset amount).",
    )
    tables = forms.ModelMultipleChoiceField(
        # Practice games (private play-chip tables, seed 004) feed no jackpot.
        queryset=Table.objects.filter(practice__isnull=True),
        required=False,
        help_text="Tables that feed this jackpot and can win it.",
    )
    reason = forms.CharField(max_length=255, help_text="Why (kept in the audit log of every table it feeds).")

    class Meta:
        model = Jackpot
        fields = ("name", "kind", "currency", "one_in", "is_active")
        labels = {"one_in": "Drawn 1 in N hands", "is_active": "Active (untick to retire it)"}

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        if self.instance.pk:
            self.initial["tables"] = list(self.instance.tables.all())
            self.initial["contribution_percent"] = Decimal(self.instance.contribution_bps) / 100
            self.initial["reset_amount"] = Decimal(self.instance.reset_minor) / 100
            self.initial.update(initial_from_overrides(self.instance.spin_overrides))

    def as_input(self) -> JackpotInput:
        """The submitted jackpot for the service (basis points, minor units)."""
        data = self.cleaned_data
        reset = _hundredths(data.get("reset_amount"))
        starting = data.get("starting_amount")
        return JackpotInput(
            name=data.get("name") or "",
            kind=data.get("kind") or self.instance.kind,
            currency=data.get("currency") or self.instance.currency,
            contribution_bps=_hundredths(data.get("contribution_percent")),
            reset_minor=reset,
            one_in=data.get("one_in"),
            spin_overrides=overrides_from(data),
            is_active=bool(data.get("is_active")),
            table_ids=tuple(table.pk for table in data.get("tables") or ()),
            starting_minor=reset if starting is None else _hundredths(starting),
        )

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        if self.errors:
            return data
        try:
            validate_jackpot_input(self.as_input(), jackpot_id=self.instance.pk)
        except DomainError as error:
            add_domain_error(self, error, aliases=_ALIASES)
        return data


add_override_fields(JackpotForm, label_prefix="Spin hand: ")


class HouseFundingForm(forms.Form):
    """House money from the cashier into the jackpot reserve or the promotions account:
    amount in the currency, mandatory reason. ``token`` is made when the form is shown, so a
    double submission records one transfer (like the cash movement form)."""

    account = forms.ChoiceField(
        choices=[
            (AccountKind.RESERVE, "Jackpot reserve (pays jackpot starts and resets)"),
            (AccountKind.PROMOTIONS, "Promotions (pays free draws and redeals)"),
        ]
    )
    currency = forms.ChoiceField(choices=[(c, c) for c in Currency.values if c != Currency.FUN])
    amount = forms.DecimalField(min_value=Decimal("0.01"), max_digits=14, decimal_places=2, help_text="e.g. 500.00")
    reason = forms.CharField(max_length=200, help_text="Why: kept in the audit log and the transfer's memo.")
    token = forms.UUIDField(widget=forms.HiddenInput)

    def __init__(self, *args: Any, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.fields["token"].initial = uuid.uuid4()


@admin.register(Jackpot)
class JackpotAdmin(ServiceAdmin):
    """Jackpots are created (with a starting amount from the reserve), changed and retired
    through ``save_jackpot`` with a reason; the house funding page moves cashier money into
    the reserve or promotions through ``fund_house`` (all audit-logged)."""

    form = JackpotForm
    list_display = ("name", "kind", "currency", "contribution", "odds", "balance", "reset", "table_count", "is_active")
    list_filter = ("kind", "currency", "is_active")
    search_fields = ("name",)
    view_fields = ("name", "kind", "currency", "contribution", "odds", "balance", "reset", "table_names", "is_active")

    def get_readonly_fields(self, request: HttpRequest, obj: Any = None) -> tuple[str, ...]:
        """Kind and currency are fixed once the jackpot exists: its balance is in that currency."""
        return ("kind", "currency") if obj is not None else ()

    def get_fields(self, request: HttpRequest, obj: Any = None) -> Any:
        """The starting amount is asked once, when the jackpot is created."""
        fields = list(super().get_fields(request, obj))
        return [name for name in fields if name != "starting_amount"] if obj is not None else fields

    def has_delete_permission(self, request: HttpRequest, obj: Any = None) -> bool:
        return False  # retire it instead (untick Active): its wins and the ledger keep naming it

    @admin.display(description="Contribution")
    def contribution(self, jackpot: Jackpot) -> str:
        return f"{jackpot.contribution_bps / 100:g} % of the gross"

    @admin.display(description="Drawn")
    def odds(self, jackpot: Jackpot) -> str:
        return "by a royal flush" if jackpot.kind == JackpotKind.ROYAL else f"1 in {jackpot.one_in:,} hands"

    @admin.display(description="Balance")
    def balance(self, jackpot: Jackpot) -> str:
        return format_minor(services.jackpot_balances([jackpot.pk]).get(jackpot.pk, 0), jackpot.currency)

    @admin.display(description="Reset to")
    def reset(self, jackpot: Jackpot) -> str:
        return format_minor(jackpot.reset_minor, jackpot.currency)

    @admin.display(description="Tables it feeds")
    def table_names(self, jackpot: Jackpot) -> str:
        return ", ".join(jackpot.tables.order_by("name").values_list("name", flat=True)) or "none"

    @admin.display(description="Tables")
    def table_count(self, jackpot: Jackpot) -> int:
        return jackpot.tables.count()

    def save_model(self, request: HttpRequest, obj: Jackpot, form: Any, change: bool) -> None:
        saved = save_jackpot(
            data=form.as_input(),
            staff_user_id=_staff_id(request),
            reason=form.cleaned_data["reason"],
            now=timezone.now(),
            jackpot_id=obj.pk if change else None,
        )
        obj.pk = saved.pk

    def changelist_view(self, request: HttpRequest, extra_context: dict[str, Any] | None = None) -> HttpResponse:
        extra_context = dict(extra_context or {})
        if request.user.has_perm("wallet.change_account"):
            extra_context["house_funding_url"] = reverse("admin:jackpots_house_funding")
        return super().changelist_view(request, extra_context)

    def get_urls(self) -> list[URLPattern]:
        return [
            path("fund-house/", self.admin_site.admin_view(self.house_funding_view), name="jackpots_house_funding"),
            *super().get_urls(),
        ]

    def house_funding_view(self, request: HttpRequest) -> HttpResponse:
        """Fund the jackpot reserve or the promotions account (croupiers; auditors get 403)."""
        if not request.user.has_perm("wallet.change_account"):
            raise PermissionDenied("funding the house needs the wallet.change_account permission")
        form = HouseFundingForm(request.POST or None)
        if request.method == "POST" and form.is_valid():
            data = form.cleaned_data
            reference = f"house-funding:form:{data['token']}"
            try:
                fund_house(
                    kind=data["account"],
                    currency=data["currency"],
                    amount_minor=_hundredths(data["amount"]),
                    reference=reference,
                    staff_user_id=_staff_id(request),
                    reason=data["reason"],
                    now=timezone.now(),
                )
            except DomainError as error:
                add_domain_error(form, error, aliases=_ALIASES)
            else:
                label = "Jackpot reserve" if data["account"] == AccountKind.RESERVE else "Promotions"
                messages.success(
                    request,
                    f"{label} funded with {format_minor(_hundredths(data['amount']), data['currency'])}.",
                )
                return HttpResponseRedirect(reverse("admin:jackpots_jackpot_changelist"))
        balances = Account.objects.filter(kind__in=[AccountKind.RESERVE, AccountKind.PROMOTIONS]).order_by("key")
        context = {
            **self.admin_site.each_context(request),
            "title": "Fund the jackpot reserve or promotions",
            "form": form,
            "balances": [(account.key, format_minor(account.balance_minor, account.currency)) for account in balances],
            "opts": self.model._meta,
        }
        return TemplateResponse(request, "admin/jackpots/jackpot/house_funding.html", context)


def _staff_id(request: HttpRequest) -> int:
    user_id = request.user.pk
    if not isinstance(user_id, int):
        raise PermissionDenied
    return user_id
