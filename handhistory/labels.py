"""Names of the hand pages' checks and Hold'em actions for people, in the active language
(UX audit 2026-11-26, N13: the "Checks run" list and the Hold'em hand page were English).

The verifiers (handhistory/verification.py, handhistory/holdem.py,
handhistory/holdem_verification.py) keep their English names: exports, the management
command and the tests read them. Only the pages translate them here; a name this module does
not know is shown as written.
"""

from __future__ import annotations

import re

from django.utils.functional import Promise
from django.utils.translation import gettext_lazy as _
from django.utils.translation import ngettext, pgettext_lazy

CHECKS: dict[str, str | Promise] = {
    # WiderPoker (handhistory/verification.py)
    "replay": _("the hand replays"),
    "commitment": _("commitment"),
    "chain seed links to the published anchor": _("the chain seed links to the published anchor"),
    "hand seed from chain seed and client seeds": _("hand seed from the chain seed and the client seeds"),
    "beacon value of its round": _("beacon value of its round"),
    "entry order from the hand seed": _("order of the entries from the hand seed"),
    "board": _("board"),
    "entry count": _("number of entries"),
    "redeal count": _("number of redeals"),
    "change keys": _("change keys"),
    "join order": _("order of joining"),
    "initial combination": _("initial combination"),
    "played combination": _("played combination"),
    "hold played": _("cards held"),
    "draw strengths": _("strength of the draws"),
    "best draw": _("best draw"),
    "final strength": _("final strength"),
    "final category": _("final hand"),
    "place": _("place"),
    "amount paid": _("amount paid"),
    "antes": _("antes"),
    "draws": _("draws"),
    "redeals": _("redeals"),
    "gross = antes + draws + redeals": _("gross = antes + draws + redeals"),
    "gross = sum paid": _("gross = sum of the amounts paid"),
    "jackpot contributions": _("jackpot contributions"),
    "spin jackpot": _("spin jackpot"),
    "royal jackpot awards": _("royal flush jackpot awards"),
    "royal jackpot share": _("royal flush jackpot share"),
    "rake = floor(gross x rate)": _("rake = gross times the rate, rounded down"),
    "pool = gross - contributions - rake + carry + spin award": _(
        "pool = gross - contributions - rake + carry-over + spin award"
    ),
    "prizes + breakage = pool": _("prizes + remainder = pool"),
    "breakage": _("remainder"),
    "prize": _("prize"),
    # Hold'em (handhistory/holdem.py, handhistory/holdem_verification.py)
    "commitment = SHA-256(chain seed)": _("commitment = SHA-256(chain seed)"),
    "hand seed from the chain seed and client seeds": _("hand seed from the chain seed and the client seeds"),
    "frozen inputs = the freeze digest published before the deal": _(
        "frozen inputs = the freeze digest published before the deal"
    ),
    "deal round = the first beacon round after the freeze": _("deal round = the first beacon round after the freeze"),
    "the deal round's value is the beacon's": _("the deal round's value is the beacon's"),
    "hand seed from the chain seed, client seeds, freeze and round": _(
        "hand seed from the chain seed, the client seeds, the freeze and the round"
    ),
    "the actions replay through the engine": _("the actions replay through the engine"),
    "board dealt from the seed's deck": _("board dealt from the seed's deck"),
    "finishing stacks": _("finishing stacks"),
    "rake": _("rake"),
    "PHH replays to the finishing stacks": _("the PHH text replays to the finishing stacks"),
    "cards you can see match the commitments published at the deal": _(
        "the cards you can see match the commitments published at the deal"
    ),
    "players' rows: dealt players, starting and finishing stacks": _(
        "players' rows: players dealt in, starting and finishing stacks"
    ),
    "recorded starting stacks = the setup's": _("recorded starting stacks = the setup's"),
    "recorded winnings = the engine's": _("recorded winnings = the engine's"),
    "stacks at start - chips put in + won = stacks at end, every seat": _(
        "stacks at start - chips put in + won = stacks at end, every seat"
    ),
    "pot = chips put in": _("pot = chips put in"),
    "pot = winnings + rake": _("pot = winnings + rake"),
    "the ledger moved the rake, and only it, from the escrow": _(
        "the ledger moved the rake, and only it, from the table's deposit"
    ),
    "a PHH text, as the engine can write this hand": _("a PHH text, as the engine can write this hand"),
}
_REDEAL = re.compile(r"redeal (\d+) combination\Z")
_CARDS = re.compile(r"(\d+) cards\Z")

ACTIONS: dict[str, str | Promise] = {
    "fold": pgettext_lazy("holdem action", "folds"),
    "check": pgettext_lazy("holdem action", "checks"),
    "call": pgettext_lazy("holdem action", "calls"),
    "bet": pgettext_lazy("holdem action", "bets"),
    "raise": pgettext_lazy("holdem action", "raises"),
    "all_in": pgettext_lazy("holdem action", "goes all-in"),
    "show": pgettext_lazy("holdem action", "shows"),
    "muck": pgettext_lazy("holdem action", "mucks"),
    "timeout_all_in": pgettext_lazy("holdem action", "stays in for what he put in (out of time)"),
}


def check_label(name: str) -> str:
    """A verification check's name in the active language (``CHECKS``; ``redeal N
    combination`` included); an unknown name unchanged."""
    redeal = _REDEAL.match(name)
    if redeal is not None:
        return _("combination of redeal %(number)s") % {"number": redeal.group(1)}
    return str(CHECKS.get(name, name))


def holdem_action_label(kind: str) -> str:
    """A Hold'em action kind (tables.engine.holdem.ActionKind values) as a verb in the
    active language; an unknown kind unchanged."""
    return str(ACTIONS.get(kind, kind))


def check_detail(detail: str) -> str:
    """A Hold'em check's detail in the active language: ``"9 cards"`` (the cards checked
    against their commitments) translated; any other detail (a mismatch's figures) as written."""
    cards = _CARDS.match(detail)
    if cards is not None:
        count = int(cards.group(1))
        return ngettext("%(count)s card", "%(count)s cards", count) % {"count": count}
    return detail
