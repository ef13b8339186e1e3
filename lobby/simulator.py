"""The prize-pool simulator (seed 001, Prize Pool Allocation: "You can use the simulator
below to estimate your winning expectations or to better understand the prize allocation
algorithm"): a table's conditions, or any others, a number of players and purchases; the
engine's own arithmetic (``simulate_prizes``) answers, so the page shows what settlement pays.
"""

from __future__ import annotations

from decimal import Decimal
from typing import Any

from django import forms
from django.db.models import QuerySet
from django.utils.translation import gettext_lazy as _

from tables.engine.widerpoker import HandConditions, JackpotFeed, simulate_prizes
from tables.engine.widerpoker.conditions import draw_price, hand_totals
from tables.models import Table
from tables.widerpoker import KEY as WIDERPOKER

CHART_POINTS = 400
LISTED_PLACES = 30


def _hundredths(value: Decimal) -> int:
    return int(value * 100)


def simulator_tables() -> QuerySet[Table]:
    """The tables the simulator offers: the operator's WiderPoker tables, cheapest ante
    first. Hold'em tables have no prize pool, and practice games are private (ux N10)."""
    return (
        Table.objects.filter(game=WIDERPOKER, practice__isnull=True, tournament__isnull=True)
        .select_related(WIDERPOKER)  # the conditions row: its relation is named by the game's key
        .order_by(f"{WIDERPOKER}__ante_minor", "name")
    )


class SimulatorForm(forms.Form):
    """Conditions in the units players read (money 1.00, percent), players and purchases."""

    table = forms.ModelChoiceField(
        queryset=simulator_tables(),
        required=False,
        empty_label=_("Custom conditions"),
        label=_("Table"),
    )
    ante = forms.DecimalField(
        label=_("Ante"), min_value=Decimal("0.01"), max_digits=12, decimal_places=2, initial=Decimal("1.00")
    )
    draw_price_percent = forms.DecimalField(
        label=_("Draw price (% of the ante)"), min_value=0, max_value=1000, decimal_places=2, initial=50
    )
    redeal_price = forms.DecimalField(
        label=_("Redeal price"), min_value=0, max_digits=12, decimal_places=2, initial=Decimal("0.80")
    )
    rake_percent = forms.DecimalField(label=_("Rake (%)"), min_value=0, max_value=10, decimal_places=2, initial=5)
    paid_percent = forms.DecimalField(
        label=_("Paid entries (%)"), min_value=Decimal("0.01"), max_value=100, decimal_places=2, initial=15
    )
    min_prize = forms.DecimalField(label=_("Minimum prize"), min_value=0, max_digits=12, decimal_places=2, initial=0)
    jackpot_percent = forms.DecimalField(
        label=_("Set aside for jackpots (%)"), min_value=0, max_value=10, decimal_places=2, initial=0
    )
    players = forms.IntegerField(label=_("Players"), min_value=1, max_value=100_000, initial=100)
    extra_draws = forms.IntegerField(
        label=_("Draws bought (after the first, all players)"), min_value=0, max_value=400_000, initial=50
    )
    redeals = forms.IntegerField(label=_("Redeals bought (all players)"), min_value=0, max_value=1_000_000, initial=10)

    def clean(self) -> dict[str, Any]:
        data = super().clean() or {}
        players, draws = data.get("players"), data.get("extra_draws")
        if players is not None and draws is not None and draws > 4 * players:
            self.add_error("extra_draws", _("each player buys at most 4 draws after the first"))
        return data

    @staticmethod
    def initial_for(table: Table) -> dict[str, Any]:
        """The form's values for a table's conditions (its jackpots' contributions summed)."""
        jackpot_bps = sum(j.contribution_bps for j in table.jackpots.filter(is_active=True))
        conditions = table.widerpoker
        return {
            "table": table.pk,
            "ante": Decimal(conditions.ante_minor) / 100,
            "draw_price_percent": Decimal(conditions.draw_price_bps) / 100,
            "redeal_price": Decimal(conditions.redeal_price_minor) / 100,
            "rake_percent": Decimal(conditions.rake_bps) / 100,
            "paid_percent": Decimal(conditions.paid_fraction_bps) / 100,
            "min_prize": Decimal(conditions.min_prize_minor) / 100,
            "jackpot_percent": Decimal(jackpot_bps) / 100,
        }


def run_simulation(data: dict[str, Any]) -> dict[str, Any]:
    """The simulator's answer for clean form data: the money split, every prize, chart data."""
    ante = _hundredths(data["ante"])
    draw_bps = _hundredths(data["draw_price_percent"])
    redeal = _hundredths(data["redeal_price"])
    players, extra_draws, redeals = data["players"], data["extra_draws"], data["redeals"]
    price = draw_price(ante, draw_bps)
    totals = hand_totals(
        antes_minor=players * ante,
        draw_price_minor=price,
        redeal_price_minor=redeal,
        extra_draws=extra_draws,
        redeals=redeals,
    )
    gross = totals.gross_minor
    jackpot_bps = _hundredths(data["jackpot_percent"])
    conditions = HandConditions(
        rake_bps=_hundredths(data["rake_percent"]),
        paid_fraction_bps=_hundredths(data["paid_percent"]),
        min_prize_minor=_hundredths(data["min_prize"]),
        jackpots=(JackpotFeed("jackpots", "royal", jackpot_bps),) if jackpot_bps else (),
    )
    sim = simulate_prizes(players, gross, conditions)
    prizes = sim.place_prizes_minor.tolist()
    step = max(1, len(prizes) // CHART_POINTS)
    chart_places = list(range(1, len(prizes) + 1, step))
    listed = [(place, prizes[place - 1]) for place in range(1, min(len(prizes), LISTED_PLACES) + 1)]
    if len(prizes) > LISTED_PLACES:
        listed.append((len(prizes), prizes[-1]))
    return {
        "gross_minor": gross,
        "antes_minor": totals.antes_minor,
        "draws_minor": totals.draws_minor,
        "redeals_minor": totals.redeals_minor,
        "draw_price_minor": price,
        "jackpots_minor": sim.split.contributions_minor,
        "rake_minor": sim.split.rake_minor,
        "pool_minor": sim.split.pool_minor,
        "paid_places": sim.paid_places,
        "players": players,
        "listed": listed,
        "skipped_places": len(prizes) > LISTED_PLACES + 1,
        "chart": {"places": chart_places, "prizes_minor": [prizes[p - 1] for p in chart_places]},
    }
