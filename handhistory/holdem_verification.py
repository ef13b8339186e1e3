"""An auditor's verification of a terminal Hold'em hand (``manage.py verify_hands``).

On top of what a player's history page checks (``handhistory.holdem.verify_holdem_hand``:
the commitment, the hand seed, the actions replayed through the engine to the stored board,
finishing stacks and rake, and the PHH text replayed), this checks the hand's record against
itself and against the ledger (security audit 2026-11-26, M4):

- the players' rows (``HoldemHandPlayer``) are the players dealt in, with the setup's
  starting stacks and, once settled, the engine's finishing stacks;
- the recorded results: starting stacks as in the setup, winnings as the engine's, and for
  every seat *starting - chips put in the pots + won = finishing*;
- the pot is the chips put in, and equals the winnings plus the rake;
- the ledger moved exactly the rake, from the table's escrow to the rake account
  (``holdem_rake:<hand>``), and nothing for a cancelled or unraked hand (the pots stay in
  the escrow; ``tables.holdem.books`` checks the escrow against the stacks).

A hand the PHH format cannot express (a timed-out all-in, a big blind posted out of
position: ``phh_error``) has no PHH text; its action log is still replayed through the
engine, which is what every check above uses, and ``HoldemReport.phh_checked`` is False so
that ``verify_hands`` can count them. A settled hand with no PHH that the engine can write
in PHH is a mismatch.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from django.db.models import QuerySet

from handhistory.holdem import HoldemCheck, verify_holdem_hand
from tables.engine.holdem import HandState, PhhError, hand_to_phh
from tables.holdem.records import replay
from tables.holdem.services.money import escrow_key
from tables.models import HoldemHand, HoldemHandPlayer, HoldemHandStatus
from wallet.models import AccountKind
from wallet.selectors import list_transfer_legs
from wallet.services import house_account_key, rake_account_key


@dataclass(frozen=True, slots=True)
class HoldemReport:
    """The verification of one terminal Hold'em hand: every check, and whether its PHH text
    was replayed (False: the hand has none, as the format cannot express it, or it was
    cancelled)."""

    hand: HoldemHand
    checks: list[HoldemCheck]
    phh_checked: bool

    @property
    def ok(self) -> bool:
        return all(check.ok for check in self.checks)

    @property
    def mismatches(self) -> list[HoldemCheck]:
        return [check for check in self.checks if not check.ok]


def list_verifiable_holdem_hands(
    *, table_id: int | None = None, since: datetime | None = None, until: datetime | None = None
) -> QuerySet[HoldemHand]:
    """The terminal Hold'em hands (seed revealed), oldest first, with their tables;
    optionally of one table, dealt at or after ``since`` and before ``until``."""
    hands = HoldemHand.objects.exclude(status=HoldemHandStatus.PLAYING).select_related("table")
    if table_id is not None:
        hands = hands.filter(table_id=table_id)
    if since is not None:
        hands = hands.filter(started_at__gte=since)
    if until is not None:
        hands = hands.filter(started_at__lt=until)
    return hands.order_by("started_at", "pk")


def verify_holdem_hand_records(hand: HoldemHand) -> HoldemReport:
    """Verify a terminal Hold'em hand (see the module doc). ``hand`` with its table
    (``select_related("table")`` saves a query)."""
    checks = list(verify_holdem_hand(hand))
    if any(check.name == "the actions replay through the engine" for check in checks):
        return HoldemReport(hand, checks, phh_checked=False)
    state = None if hand.status == HoldemHandStatus.CANCELLED else replay(hand)
    checks.append(_players_rows(hand, state))
    if state is None:
        checks.append(_ledger(hand, 0))
        return HoldemReport(hand, checks, phh_checked=False)
    checks += _results(hand, state)
    checks.append(_ledger(hand, int(hand.rake_minor)))  # the engine's: the "rake" check
    if not hand.phh:
        try:
            hand_to_phh(state, hand=hand.number, table=hand.table.name)
        except PhhError:
            pass  # PHH cannot express it: the engine's replay of the log above is the check
        else:
            checks.append(HoldemCheck("a PHH text, as the engine can write this hand", False, "missing"))
    return HoldemReport(hand, checks, phh_checked=bool(hand.phh))


def _players_rows(hand: HoldemHand, state: HandState | None) -> HoldemCheck:
    stacks = hand.setup["stacks"]
    finishing = None if state is None else state.finishing_stacks()
    expected = sorted(
        (
            int(player["seat"]),
            int(player["user_id"]),
            int(stacks[int(player["seat"])]),
            None if finishing is None else finishing[int(player["seat"])],
        )
        for player in hand.players
    )
    stored = sorted(
        HoldemHandPlayer.objects.filter(hand=hand).values_list("seat", "user_id", "starting_minor", "finishing_minor")
    )
    detail = "" if stored == expected else f"stored {stored}, expected {expected}"
    return HoldemCheck("players' rows: dealt players, starting and finishing stacks", stored == expected, detail)


def _results(hand: HoldemHand, state: HandState) -> list[HoldemCheck]:
    results = hand.results
    starting = {str(seat): int(chips) for seat, chips in zip(state.seats, state.starting_stacks, strict=True)}
    setup = {str(seat): int(hand.setup["stacks"][seat]) for seat in state.seats}
    won = {str(seat): int(w) for seat, w in zip(state.seats, state.winnings or (), strict=True) if w}
    recorded_start = {str(k): v for k, v in (results.get("starting_stacks") or {}).items()}
    recorded_won = {str(k): v for k, v in (results.get("won") or {}).items()}
    recorded_end = {str(k): v for k, v in (results.get("finishing_stacks") or {}).items()}
    put_in = {str(seat): int(chips) for seat, chips in zip(state.seats, state.committed, strict=True)}
    balanced = set(recorded_start) == set(recorded_end) == set(put_in) and all(
        isinstance(recorded_start[s], int)
        and isinstance(recorded_end[s], int)
        and recorded_start[s] - put_in[s] + int(recorded_won.get(s, 0)) == recorded_end[s]
        for s in put_in
    )
    pot = sum(state.committed)
    return [
        HoldemCheck("recorded starting stacks = the setup's", recorded_start == starting == setup),
        HoldemCheck("recorded winnings = the engine's", recorded_won == won, "" if recorded_won == won else f"{won}"),
        HoldemCheck("stacks at start - chips put in + won = stacks at end, every seat", balanced),
        HoldemCheck("pot = chips put in", hand.pot_minor == pot, "" if hand.pot_minor == pot else f"expected {pot}"),
        HoldemCheck(
            "pot = winnings + rake",
            hand.pot_minor == sum(int(v) for v in recorded_won.values()) + hand.rake_minor,
        ),
    ]


def _ledger(hand: HoldemHand, rake_minor: int) -> HoldemCheck:
    currency = str(hand.config.get("currency", hand.table.currency))
    moved = list_transfer_legs(reference=f"holdem_rake:{hand.pk}")
    # Any of the currency's rake accounts (POKER_RAKE_ACCOUNTS may have changed since).
    house = house_account_key(AccountKind.RAKE, currency)
    rake_key = next(
        (key for key in moved if key == house or key.startswith(f"{house}:")),
        rake_account_key(currency, hand.table_id),
    )
    expected = {escrow_key(hand.table_id): -rake_minor, rake_key: rake_minor} if rake_minor > 0 else {}
    detail = "" if moved == expected else f"moved {moved}, expected {expected}"
    return HoldemCheck("the ledger moved the rake, and only it, from the escrow", moved == expected, detail)
