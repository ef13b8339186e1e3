"""Hold'em hands in the hand history: the player's hands, one hand with its actions and
results, its PHH text, and its verification from the revealed seed.

Access as for WiderPoker hands: the hand's players and staff who may view every hand, and
only once the hand is over. Secrecy (docs/provably-fair.md, Card commitments): a player sees
his own hole cards and those shown at the showdown, never a folded or mucked hand; the
seeds, which give the whole deck, reach staff once the hand is over and its players once
``tables.holdem.records.seed_is_public`` (the end plus ``HOLDEM_SEED_DELAY_HOURS``). Until then a
player verifies the cards he may see against the per-card commitments published at the
deal; once the seeds are public, verification recomputes from the chain seed and the client
seeds the commitment (SHA-256 of the chain seed), the hand seed (Algorithm 2; for algorithm
3 also the freeze digest, the deal round and its value: ``hand_seed_checks``), the deck
(section 12), every card commitment and the whole hand through the engine, which must give
the stored board and finishing stacks; the PHH text must replay (``replay_phh``) to the same
stacks. A player's PHH download writes the hands he may not see as ``????``.
"""

from __future__ import annotations

import hashlib
from dataclasses import dataclass
from datetime import datetime
from typing import Any

from django.db.models import QuerySet
from django.utils import timezone

from handhistory.errors import HandNotFoundError
from handhistory.selectors import Viewer, can_view_all_hands
from tables.engine import fairness
from tables.engine.cards import card_code
from tables.engine.holdem import (
    ALGORITHM_DEAL_ROUND,
    HoldemError,
    client_seed_commitment,
    deal_seed,
    freeze_digest,
    freeze_lines,
    hide_holes,
    replay_phh,
)
from tables.holdem.records import (
    card_commitments,
    hole_openings,
    replay,
    seed_is_public,
    seed_public_at,
    shown_openings,
)
from tables.models import BeaconRound, HoldemHand, HoldemHandPlayer, HoldemHandStatus
from tables.services import beacon


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
    seeds_visible: bool = False
    seed_public_at: datetime | None = None
    commitments: tuple[str, ...] = ()
    openings: tuple[dict[str, Any], ...] = ()

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


def verify_openings(commitments: list[str], openings: list[dict[str, Any]]) -> HoldemCheck:
    """Whether every opened position (``position``, ``card`` code, ``salt`` hex) hashes to
    its published commitment, ``SHA-256(card || salt)`` (docs/provably-fair.md, Card
    commitments)."""
    bad = [
        int(o["position"])
        for o in openings
        if int(o["position"]) >= len(commitments)
        or hashlib.sha256(str(o["card"]).encode("ascii") + bytes.fromhex(str(o["salt"]))).hexdigest()
        != commitments[int(o["position"])]
    ]
    detail = f"positions {bad} do not match" if bad else f"{len(openings)} cards"
    return HoldemCheck("cards you can see match the commitments published at the deal", not bad, detail)


def verify_holdem_hand(hand: HoldemHand) -> list[HoldemCheck]:
    """Recompute a terminal hand from its seeds (see the module doc): for staff at once, for
    its players once the seeds are public."""
    checks = [
        HoldemCheck(
            "commitment = SHA-256(chain seed)",
            hashlib.sha256(bytes.fromhex(hand.chain_seed)).hexdigest() == hand.commitment,
        )
    ]
    checks += hand_seed_checks(hand)
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


def find_watchable_holdem_hand(*, hand_id: int, viewer: Viewer) -> HoldemHand | None:
    """A Hold'em hand anyone at the table could watch (issue 24: a watched hand's link was a
    404), running or over: a hand of a public table for any logged-in viewer, a practice
    game's hand for its owner only (practice games are private, seed 004). None otherwise.
    Its public replay (``get_holdem_history(public=True)``) shows only what a watcher saw."""
    from tables.models import PracticeGame

    if not viewer.is_authenticated:
        return None
    hand = HoldemHand.objects.select_related("table").filter(pk=hand_id).first()
    if hand is None:
        return None
    practice = PracticeGame.objects.filter(table_id=hand.table_id).values("owner_id").first()
    if practice is not None and practice["owner_id"] != viewer.pk:
        return None
    return hand


def freeze_record_lines(hand: HoldemHand) -> list[str]:
    """The frozen inputs of an algorithm-3 hand as ``freeze_lines`` writes them, rebuilt from
    the hand's record: table, number, chain, commitment, button, deal round and every seat
    dealt in with its player's name and the commitment of his client seed (docs/provably-fair.md,
    12, Algorithm 3). Raises ValueError for an older hand (no deal round)."""
    if hand.deal_round is None:
        raise ValueError(f"hand {hand.pk} has no deal round (algorithm {hand.algorithm})")
    seeds = {str(name): str(seed) for name, seed in hand.client_seeds}
    return freeze_lines(
        table_id=hand.table_id,
        number=hand.number,
        chain_id=hand.chain_id,
        chain_index=hand.chain_index,
        commitment=hand.commitment,
        button=int(hand.setup["button"]),
        seats=[
            (int(p["seat"]), str(p["name"]), client_seed_commitment(str(p["name"]), seeds.get(str(p["name"]), "")))
            for p in hand.players
        ],
        deal_round=int(hand.deal_round),
    )


def hand_seed_checks(hand: HoldemHand) -> list[HoldemCheck]:
    """The hand seed recomputed from the chain seed and the client seeds (algorithm 2), and
    for an algorithm-3 hand also: the frozen inputs hash to the published freeze digest, the
    deal round is the first beacon round released strictly after the freeze, its value is the
    one the platform took from the beacon (``BeaconRound``), and the server seed mixes it in
    (``deal_seed``)."""
    seeds = [(str(name), str(seed)) for name, seed in hand.client_seeds]
    v2 = fairness.hand_seed(bytes.fromhex(hand.chain_seed), hand.table_id, hand.number, seeds)
    if hand.algorithm != ALGORITHM_DEAL_ROUND:
        return [HoldemCheck("hand seed from the chain seed and client seeds", v2.hex() == hand.server_seed)]
    checks = []
    try:
        digest = freeze_digest(freeze_record_lines(hand)).hex()
    except ValueError as error:
        return [HoldemCheck("frozen inputs = the freeze digest published before the deal", False, str(error))]
    checks.append(
        HoldemCheck(
            "frozen inputs = the freeze digest published before the deal",
            digest == hand.freeze_digest,
            "" if digest == hand.freeze_digest else f"recomputed {digest}",
        )
    )
    assert hand.frozen_at is not None and hand.deal_round is not None
    first = beacon.round_after(hand.frozen_at)
    checks.append(
        HoldemCheck(
            "deal round = the first beacon round after the freeze",
            first == hand.deal_round,
            "" if first == hand.deal_round else f"expected {first}",
        )
    )
    stored = BeaconRound.objects.filter(round=hand.deal_round, value=hand.deal_beacon_value).exists()
    checks.append(HoldemCheck("the deal round's value is the beacon's", stored))
    try:
        derived = deal_seed(v2, bytes.fromhex(hand.freeze_digest), bytes.fromhex(hand.deal_beacon_value)).hex()
    except ValueError as error:
        return [
            *checks,
            HoldemCheck("hand seed from the chain seed, client seeds, freeze and round", False, str(error)),
        ]
    checks.append(
        HoldemCheck("hand seed from the chain seed, client seeds, freeze and round", derived == hand.server_seed)
    )
    return checks


def get_holdem_history(*, hand_id: int, viewer: Viewer, public: bool = False) -> HoldemHistory:
    """The hand with its players (seat, name, bot, cards when shown or his own, start,
    finish, net), actions and verification. Raises HandNotFoundError. ``public``: the
    replay a watcher may read (``find_watchable_holdem_hand``): the cards shown at the
    showdown only, the seeds once public, whoever the viewer."""
    if public:
        found = find_watchable_holdem_hand(hand_id=hand_id, viewer=viewer)
        if found is None or not found.is_terminal:
            raise HandNotFoundError(f"no hand {hand_id}", hand_id=hand_id)
        hand = found
    else:
        hand = get_holdem_hand(hand_id=hand_id, viewer=viewer)
    viewer_id = int(viewer.pk or 0) if viewer.is_authenticated and not public else None
    staff = can_view_all_hands(viewer) and not public
    replay_error = ""
    try:
        state = None if hand.status == HoldemHandStatus.CANCELLED else replay(hand)
    except HoldemError as error:  # stored actions that do not replay: said, not a 500
        state, replay_error = None, str(error)
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
    now = timezone.now()
    seeds_visible = staff or seed_is_public(hand, now=now)
    commitments: list[str] = []
    openings: list[dict[str, Any]] = []
    checks: list[HoldemCheck] = []
    if state is not None:
        commitments = card_commitments(hand, state)
        openings = shown_openings(hand, state)
        for row in HoldemHandPlayer.objects.filter(hand=hand, user_id=viewer_id or 0):
            if row.seat in state.seats and str(row.seat) not in shown:
                openings += hole_openings(hand, state, state.seats.index(row.seat))
        openings.sort(key=lambda o: int(o["position"]))
        checks.append(verify_openings(commitments, openings))
    if replay_error and not seeds_visible:
        checks.append(HoldemCheck("the actions replay through the engine", False, replay_error))
    if seeds_visible:
        checks += verify_holdem_hand(hand)
    return HoldemHistory(
        hand=hand,
        table_name=hand.table.name,
        currency=str(hand.config.get("currency", hand.table.currency)),
        players=players,
        actions=list(hand.actions),
        checks=checks,
        seeds_visible=seeds_visible,
        seed_public_at=seed_public_at(hand),
        commitments=tuple(commitments),
        openings=tuple(openings),
    )


def holdem_phh_for(*, hand: HoldemHand, viewer: Viewer) -> str:
    """The hand's PHH text as this viewer may download it: whole for staff who may view every
    hand (the hand is over); for a player, every hole card he may not see (not his, not shown
    at the showdown) written ``????`` (PHH's unknown card). Empty when the hand has no PHH."""
    if not hand.phh or can_view_all_hands(viewer):
        return hand.phh
    viewer_id = int(viewer.pk or 0) if viewer.is_authenticated else 0
    shown = hand.results.get("shown", {})
    order = _dealing_order(hand)
    mine = {int(row.seat) for row in HoldemHandPlayer.objects.filter(hand=hand, user_id=viewer_id)}
    keep = {k for k, seat in enumerate(order) if seat in mine or str(seat) in shown}
    return hide_holes(hand.phh, keep)


def _dealing_order(hand: HoldemHand) -> tuple[int, ...]:
    """The hand's seats in dealing order (PHH's p1 .. pn)."""
    return replay(hand).seats
