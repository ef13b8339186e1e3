"""Hold'em hands in the hand history: the player's hands, one hand with its actions and
results, its PHH text, and its verification from the revealed seed.

Access as for WiderPoker hands: the hand's players and staff who may view every hand, and
only once the hand is over (its seed is secret before). Verification recomputes, from the
revealed chain seed and the client seeds, the commitment (SHA-256 of the chain seed), the
hand seed (docs/provably-fair.md, Algorithm 2), the deck (section 12) and the whole hand
through the engine, which must give the stored board and finishing stacks; the PHH text
must replay (``replay_phh``) to the same stacks.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from typing import Any

from django.db.models import QuerySet

from handhistory.errors import HandNotFoundError
from handhistory.selectors import Viewer, can_view_all_hands
from tables.engine import fairness
from tables.engine.cards import card_code
from tables.engine.holdem import HoldemError, replay_phh
from tables.holdem_records import replay
from tables.models import HoldemHand, HoldemHandPlayer, HoldemHandStatus


@dataclass(frozen=True, slots=True)
class HoldemCheck:
    """One verification step and whether it held."""

    name: str
    ok: bool
    detail: str = ""


@dataclass(frozen=True, slots=True)
class HoldemHistory:
    """A terminal Hold'em hand as the history shows it. Amounts in minor units."""

    hand: HoldemHand
    table_name: str
    currency: str
    players: list[dict[str, Any]]
    actions: list[dict[str, Any]]
    checks: list[HoldemCheck]

    @property
    def verified(self) -> bool:
        return all(check.ok for check in self.checks)


def list_player_holdem_hands(*, user_id: int) -> QuerySet[HoldemHandPlayer]:
    """The player's Hold'em hands that are over, most recent first."""
    return (
        HoldemHandPlayer.objects.filter(user_id=user_id)
        .exclude(hand__status=HoldemHandStatus.PLAYING)
        .select_related("hand", "hand__table")
        .order_by("-hand_id")
    )


def get_holdem_hand(*, hand_id: int, viewer: Viewer) -> HoldemHand:
    """A terminal Hold'em hand the viewer may read. Raises HandNotFoundError (also while
    the hand is played and for strangers: nothing says it exists)."""
    hand = HoldemHand.objects.select_related("table").filter(pk=hand_id).first()
    if hand is None or not hand.is_terminal:
        raise HandNotFoundError(f"no hand {hand_id}", hand_id=hand_id)
    played = (
        viewer.is_authenticated and HoldemHandPlayer.objects.filter(hand=hand, user_id=int(viewer.pk or 0)).exists()
    )
    if not played and not can_view_all_hands(viewer):
        raise HandNotFoundError(f"no hand {hand_id}", hand_id=hand_id)
    return hand


def verify_holdem_hand(hand: HoldemHand) -> list[HoldemCheck]:
    """Recompute a terminal hand from its revealed seed (see the module doc)."""
    checks = [
        HoldemCheck(
            "commitment = SHA-256(chain seed)",
            hashlib.sha256(bytes.fromhex(hand.chain_seed)).hexdigest() == hand.commitment,
        )
    ]
    seeds = [(str(name), str(seed)) for name, seed in hand.client_seeds]
    derived = fairness.hand_seed(bytes.fromhex(hand.chain_seed), hand.table_id, hand.number, seeds)
    checks.append(HoldemCheck("hand seed from the chain seed and client seeds", derived.hex() == hand.server_seed))
    if hand.status == HoldemHandStatus.CANCELLED:
        return checks
    try:
        state = replay(hand)
    except HoldemError as error:
        return [*checks, HoldemCheck("the actions replay through the engine", False, str(error))]
    finishing = {str(seat): chips for seat, chips in state.finishing_stacks().items()}
    checks.append(HoldemCheck("board dealt from the seed's deck", [card_code(c) for c in state.board] == hand.board))
    checks.append(HoldemCheck("finishing stacks", finishing == hand.results.get("finishing_stacks")))
    checks.append(HoldemCheck("rake", state.rake == hand.rake_minor))
    if hand.phh:
        try:
            replayed = replay_phh(hand.phh)
            ok = replayed == tuple(state.stacks)
            checks.append(HoldemCheck("PHH replays to the finishing stacks", ok))
        except HoldemError as error:
            checks.append(HoldemCheck("PHH replays to the finishing stacks", False, str(error)))
    return checks


def get_holdem_history(*, hand_id: int, viewer: Viewer) -> HoldemHistory:
    """The hand with its players (seat, name, bot, cards when shown or his own, start,
    finish, net), actions and verification. Raises HandNotFoundError."""
    hand = get_holdem_hand(hand_id=hand_id, viewer=viewer)
    viewer_id = int(viewer.pk or 0) if viewer.is_authenticated else None
    staff = can_view_all_hands(viewer)
    state = None if hand.status == HoldemHandStatus.CANCELLED else replay(hand)
    shown = hand.results.get("shown", {})
    players = []
    for row in HoldemHandPlayer.objects.filter(hand=hand).select_related("user").order_by("seat"):
        cards = shown.get(str(row.seat))
        if cards is None and state is not None and (staff or row.user_id == viewer_id):
            cards = [card_code(c) for c in state.holes[state.seats.index(row.seat)]]
        finishing = row.finishing_minor if row.finishing_minor is not None else row.starting_minor
        players.append(
            {
                "seat": row.seat,
                "name": row.user.username,
                "bot": row.is_bot,
                "cards": cards or [],
                "starting_minor": row.starting_minor,
                "finishing_minor": finishing,
                "net_minor": finishing - row.starting_minor,
                "button": row.seat == int(hand.setup["button"]),
            }
        )
    return HoldemHistory(
        hand=hand,
        table_name=hand.table.name,
        currency=str(hand.config.get("currency", hand.table.currency)),
        players=players,
        actions=list(hand.actions),
        checks=verify_holdem_hand(hand),
    )
