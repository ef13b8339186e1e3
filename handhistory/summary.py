"""The verification of a hand said for people (issue 24, item 2): one sentence for a hand
that checks ("this hand was dealt exactly as committed"), or what failed in words, grouped
by what it means to a player; the technical checks stay one click away on the page.

Reads the verifiers' results (``handhistory.verification.VerificationReport``,
``handhistory.holdem.HoldemCheck``) and changes nothing in them.
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass

from django.utils.translation import gettext as _

# What each WiderPoker check is about, for people: the order of this tuple is the order the
# page lists the failures in.
_AREAS: tuple[tuple[str, frozenset[str]], ...] = (
    (
        "seed",
        frozenset(
            {
                "commitment",
                "chain seed links to the published anchor",
                "hand seed from chain seed and client seeds",
                "beacon value of its round",
                "commitment = SHA-256(chain seed)",
                "hand seed from the chain seed and client seeds",
                "cards you can see match the commitments published at the deal",
            }
        ),
    ),
    (
        "cards",
        frozenset(
            {
                "replay",
                "board",
                "entry order from the hand seed",
                "entry count",
                "redeal count",
                "change keys",
                "join order",
                "initial combination",
                "played combination",
                "board dealt from the seed's deck",
                "the actions replay through the engine",
            }
        ),
    ),
    (
        "result",
        frozenset(
            {
                "hold played",
                "draw strengths",
                "best draw",
                "final strength",
                "final category",
                "place",
                "finishing stacks",
                "PHH replays to the finishing stacks",
            }
        ),
    ),
)


def _area_sentence(area: str) -> str:
    return {
        "seed": _("The seed revealed after the hand does not match what was published before it."),
        "cards": _("The cards dealt are not the ones the published seed gives."),
        "result": _("The final hands, places or stacks were not worked out as the rules say."),
        "money": _("The money of the hand (antes, purchases, rake, prize pool or prizes) does not add up."),
    }[area]


def _area_of(name: str) -> str:
    if name.startswith("redeal ") and name.endswith(" combination"):
        return "cards"
    for area, names in _AREAS:
        if name in names:
            return area
    return "money"


@dataclass(frozen=True, slots=True)
class Summary:
    """The verification in words: ``ok`` (every check held), ``headline`` (one sentence),
    ``problems`` (one sentence per kind of failure, most basic first)."""

    ok: bool
    headline: str
    problems: tuple[str, ...] = ()


def summarize_failures(names: Iterable[str]) -> tuple[str, ...]:
    """One sentence per kind of failure among the failed checks ``names`` (each once, the
    seed before the cards before the results before the money)."""
    areas = {_area_of(name) for name in names}
    return tuple(_area_sentence(area) for area in ("seed", "cards", "result", "money") if area in areas)


def widerpoker_summary(*, ok: bool, failed: Iterable[str]) -> Summary:
    """The summary of a WiderPoker hand's ``verify_hand`` report (``ok``, and the names of
    the checks with a mismatch)."""
    if ok:
        return Summary(
            True,
            _(
                "This hand was dealt exactly as committed: the seed revealed after the hand matches the "
                "commitment published when it was dealt, and the board, every player's cards, the draws, "
                "the places and the prizes all come out the same when worked out again from it."
            ),
        )
    return Summary(False, _("This hand does not match its commitment:"), summarize_failures(failed))


def holdem_summary(*, checks: Iterable[tuple[str, bool]], seeds_visible: bool) -> Summary:
    """The summary of a Hold'em hand's checks (``(name, ok)`` pairs): the full check once
    the seeds are visible to the viewer, the check of the visible cards before."""
    checks = list(checks)
    failed = [name for name, ok in checks if not ok]
    if failed:
        return Summary(False, _("This hand does not match its commitments:"), summarize_failures(failed))
    if seeds_visible:
        return Summary(
            True,
            _(
                "This hand was dealt exactly as committed: the seed published after the hand gives every "
                "card dealt, and the actions replay to the same pots, rake and stacks."
            ),
        )
    return Summary(
        True,
        _(
            "Every card you can see was dealt exactly as committed when the hand began. The full check, "
            "every card of the deck, opens when the seeds are published."
        ),
    )
