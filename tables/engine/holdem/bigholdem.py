"""BigHoldem scoring: chip value schedule, elimination and the leaderboard (seed 004).

Seed 004 describes BigHoldem, a Hold'em game against simulated players. What this module
implements, with the choices made where the seed is silent (``docs/holdem.md``,
*BigHoldem scoring*):

* **Starting sum** (*Somma*: "1000 o 2000 unità monetarie" depending on the number of
  players): 1,000 for 2..5 players, 2,000 for 6..10 (our reading; the seed does not say
  which count gets which).
* **The minimum** (*PRE-FLOP*: the small blind, *buio*, is "una fiche di valore minimo",
  the big blind, *controbuio*, "un importo doppio"; the ante is the minimum chip too).
  Its starting value is 1/100 of the starting sum (ours; so the big blind is 2% of a
  stack, 50 big blinds deep).
* **Chip value rises with eliminations** (*Eliminazione*, *Fiches*: "il valore delle
  fiches varia a seconda del numero di giocatori presenti"): the minimum is
  ``floor(base * initial_players / remaining_players)``, so it grows like the average
  stack and the game keeps about 50 big blinds per player on average (ours).
* **Elimination** (*Eliminazione*, *Somma*): at the end of a hand, a player whose sum is
  below **twice the minimum** (the big blind: he can no longer post it) is eliminated.
  The raised minimum applies at once, so eliminations cascade until no remaining stack
  is below twice the current minimum; the largest stack is never eliminated.
* **Leaderboard** (*Termine del gioco*: "la vincita totale divisa per il numero di
  mani"): score = net winnings (won minus invested, summed over the hands played) divided
  by the hands the player was dealt in; exact ``Fraction``; best first.

>>> blind_level(base_minor=10, initial_players=10, remaining_players=5)
BlindLevel(minimum_minor=20, small_blind_minor=20, big_blind_minor=40, ante_minor=0)
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from fractions import Fraction
from typing import Final

from ..rng import RandomStream

__all__ = [
    "MAX_PLAYERS",
    "MIN_PLAYERS",
    "PRACTICE_LABEL",
    "BlindLevel",
    "HandResult",
    "PracticeDraws",
    "Standing",
    "TableState",
    "base_minimum_minor",
    "blind_level",
    "eliminate",
    "is_over",
    "leaderboard",
    "practice_draws",
    "settle_hand",
    "start_table",
    "starting_stack_minor",
]

MIN_PLAYERS: Final = 2
MAX_PLAYERS: Final = 10
"""Players at the start of a game: 2..10 (seed 004, *Giocatore*)."""
SMALL_TABLE_STACK: Final = 1_000
LARGE_TABLE_STACK: Final = 2_000
MINIMUM_DIVISOR: Final = 100
"""The starting minimum chip is the starting sum divided by this."""


def _players(count: int, name: str = "players") -> int:
    if isinstance(count, bool) or not isinstance(count, int):
        raise ValueError(f"{name} must be an integer, got {count!r}")
    if not MIN_PLAYERS <= count <= MAX_PLAYERS:
        raise ValueError(f"{name} must be in {MIN_PLAYERS}..{MAX_PLAYERS}, got {count}")
    return count


def starting_stack_minor(players: int) -> int:
    """Each player's starting sum: 1,000 for 2..5 players, 2,000 for 6..10 (seed 004, *Somma*).

    Raises ``ValueError`` unless ``players`` is 2..10.

    >>> starting_stack_minor(4), starting_stack_minor(10)
    (1000, 2000)
    """
    return SMALL_TABLE_STACK if _players(players) <= 5 else LARGE_TABLE_STACK


def base_minimum_minor(players: int) -> int:
    """The minimum chip when nobody is eliminated yet: the starting sum / 100.

    >>> base_minimum_minor(10)
    20
    """
    return starting_stack_minor(players) // MINIMUM_DIVISOR


@dataclass(frozen=True)
class BlindLevel:
    """The forced bets of a hand, in minor units (seed 004, *PRE-FLOP*).

    ``minimum_minor`` is the minimum chip; the small blind (*buio*) is one minimum, the
    big blind (*controbuio*) two, the ante (if the table plays one) one minimum.
    """

    minimum_minor: int
    small_blind_minor: int
    big_blind_minor: int
    ante_minor: int


def blind_level(*, base_minor: int, initial_players: int, remaining_players: int, ante: bool = False) -> BlindLevel:
    """The blind level for ``remaining_players`` left of ``initial_players`` (seed 004, *Fiches*).

    minimum = ``floor(base_minor * initial_players / remaining_players)``: it never falls
    as players are eliminated and doubles by the time half of them are gone. Raises
    ``ValueError`` unless ``base_minor >= 1`` and ``2 <= remaining <= initial <= 10``
    (one remaining player is the end of the game, which has no next hand; ``1`` is
    accepted so the final state can be described).

    >>> [blind_level(base_minor=10, initial_players=10, remaining_players=r).big_blind_minor for r in (10, 9, 2)]
    [20, 22, 100]
    """
    if isinstance(base_minor, bool) or not isinstance(base_minor, int) or base_minor < 1:
        raise ValueError(f"base_minor must be a positive integer, got {base_minor!r}")
    _players(initial_players, "initial_players")
    if isinstance(remaining_players, bool) or not isinstance(remaining_players, int):
        raise ValueError(f"remaining_players must be an integer, got {remaining_players!r}")
    if not 1 <= remaining_players <= initial_players:
        raise ValueError(f"remaining_players must be in 1..{initial_players}, got {remaining_players}")
    minimum = base_minor * initial_players // remaining_players
    return BlindLevel(
        minimum_minor=minimum,
        small_blind_minor=minimum,
        big_blind_minor=2 * minimum,
        ante_minor=minimum if ante else 0,
    )


@dataclass(frozen=True)
class TableState:
    """A BigHoldem game between hands.

    ``stacks``: each remaining player's sum in minor units, in seat order; ``eliminated``:
    players out with the sum they left with, in order of elimination; ``hands``: hands
    each player (eliminated ones too) was dealt in; ``net_minor``:
    each player's winnings minus investments so far; ``hands_dealt``: hands played at the
    table. ``level`` is the blind level of the next hand.
    """

    initial_players: int
    base_minor: int
    ante: bool
    stacks: tuple[tuple[str, int], ...]
    eliminated: tuple[tuple[str, int], ...]
    hands: tuple[tuple[str, int], ...]
    net_minor: tuple[tuple[str, int], ...]
    hands_dealt: int = 0

    @property
    def level(self) -> BlindLevel:
        """The blind level for the remaining players."""
        return blind_level(
            base_minor=self.base_minor,
            initial_players=self.initial_players,
            remaining_players=len(self.stacks),
            ante=self.ante,
        )

    @property
    def finished(self) -> bool:
        """True once a single player remains (seed 004, *Termine del gioco*)."""
        return len(self.stacks) <= 1


def start_table(players: Iterable[str], *, ante: bool = False) -> TableState:
    """A new game: every player gets ``starting_stack_minor`` and the base minimum.

    Raises ``ValueError`` for fewer than 2 or more than 10 players or a repeated name.

    >>> table = start_table(["ada", "bo", "cy"])
    >>> table.stacks, table.level.big_blind_minor
    ((('ada', 1000), ('bo', 1000), ('cy', 1000)), 20)
    """
    names = tuple(players)
    count = _players(len(names))
    if len(set(names)) != count:
        raise ValueError(f"player names must be distinct, got {names!r}")
    stack = starting_stack_minor(count)
    return TableState(
        initial_players=count,
        base_minor=base_minimum_minor(count),
        ante=ante,
        stacks=tuple((name, stack) for name in names),
        eliminated=(),
        hands=tuple((name, 0) for name in names),
        net_minor=tuple((name, 0) for name in names),
    )


@dataclass(frozen=True)
class HandResult:
    """One finished hand: each dealt-in player's chips put in the pot and taken from it.

    ``invested_minor`` and ``won_minor`` map player name to minor units (>= 0). Every
    player dealt in appears in ``invested_minor`` (with 0 if he only folded); the pot is
    shared out entirely (BigHoldem takes no rake), so the two sums are equal.
    """

    invested_minor: Mapping[str, int]
    won_minor: Mapping[str, int]


def eliminate(stacks: Mapping[str, int], *, base_minor: int, initial_players: int) -> tuple[str, ...]:
    """Players to eliminate after a hand, in elimination order (seed 004, *Eliminazione*).

    A player whose stack is below twice the minimum of the current level is out; the
    level then rises (``blind_level``) and the rule is applied again until it removes
    nobody. Within one round, smaller stacks go first, then seat order. The largest
    stack (the first in seat order among equals) is never eliminated. ``stacks`` is in
    seat order; its size is the number of remaining players.

    >>> eliminate({"a": 1000, "b": 39, "c": 2000}, base_minor=20, initial_players=3)
    ('b',)
    """
    remaining = dict(stacks)
    keeper = max(remaining, key=lambda name: remaining[name]) if remaining else None
    order = {name: seat for seat, name in enumerate(stacks)}
    out: list[str] = []
    while len(remaining) > 1:
        level = blind_level(base_minor=base_minor, initial_players=initial_players, remaining_players=len(remaining))
        below = [name for name, stack in remaining.items() if stack < level.big_blind_minor and name != keeper]
        if not below:
            break
        below.sort(key=lambda name: (remaining[name], order[name]))
        for name in below:
            del remaining[name]
        out.extend(below)
    return tuple(out)


def settle_hand(table: TableState, result: HandResult) -> TableState:
    """The game after one hand: stacks, hand counts and net winnings updated, eliminations applied.

    Raises ``ValueError`` when a player in ``result`` is not at the table, an amount is
    negative, a player invested more than his stack, a winner was not dealt in, or the
    pot is not shared out exactly.
    """
    stacks = dict(table.stacks)
    invested, won = dict(result.invested_minor), dict(result.won_minor)
    for name, amount in [*invested.items(), *won.items()]:
        if name not in stacks:
            raise ValueError(f"{name!r} is not playing at this table")
        if isinstance(amount, bool) or not isinstance(amount, int) or amount < 0:
            raise ValueError(f"amounts are integers >= 0 in minor units, got {amount!r} for {name!r}")
    if not set(won) <= set(invested):
        raise ValueError(f"winners must have been dealt in: {sorted(set(won) - set(invested))}")
    if sum(invested.values()) != sum(won.values()):
        raise ValueError(f"the pot ({sum(invested.values())}) is not shared out exactly ({sum(won.values())})")
    for name, amount in invested.items():
        if amount > stacks[name]:
            raise ValueError(f"{name!r} invested {amount} with a stack of {stacks[name]}")
    for name, amount in invested.items():
        stacks[name] += won.get(name, 0) - amount
    hands = {name: count + (name in invested) for name, count in table.hands}
    net = {name: value + won.get(name, 0) - invested.get(name, 0) for name, value in table.net_minor}
    out = eliminate(stacks, base_minor=table.base_minor, initial_players=table.initial_players)
    return TableState(
        initial_players=table.initial_players,
        base_minor=table.base_minor,
        ante=table.ante,
        stacks=tuple((name, stack) for name, stack in stacks.items() if name not in out),
        eliminated=table.eliminated + tuple((name, stacks[name]) for name in out),
        hands=tuple(hands.items()),
        net_minor=tuple(net.items()),
        hands_dealt=table.hands_dealt + 1,
    )


def is_over(table: TableState, *, max_hands: int | None, elapsed_seconds: float, max_seconds: float | None) -> bool:
    """Whether the game ends instead of dealing another hand (seed 004, *PRE-FLOP*, *Termine del gioco*).

    The seed deals another hand "se non è stato giocato il numero di mani prefissato o
    non si è superato il tempo di gioco prefissato" (setup items *mani* and *durata*); a
    game also ends when one player is left. ``elapsed_seconds`` is passed in by the caller
    (no clock in the engine); ``None`` means no limit. Raises ``ValueError`` for a
    negative limit or elapsed time.

    >>> is_over(start_table(["a", "b"]), max_hands=0, elapsed_seconds=0.0, max_seconds=None)
    True
    """
    if (
        elapsed_seconds < 0
        or (max_hands is not None and max_hands < 0)
        or (max_seconds is not None and max_seconds < 0)
    ):
        raise ValueError("limits and elapsed time must be >= 0")
    if table.finished:
        return True
    if max_hands is not None and table.hands_dealt >= max_hands:
        return True
    return max_seconds is not None and elapsed_seconds >= max_seconds


@dataclass(frozen=True)
class Standing:
    """One line of the leaderboard: ``score`` = ``net_minor / hands`` (0 with no hand)."""

    place: int
    player: str
    hands: int
    net_minor: int
    score: Fraction


def leaderboard(net_minor: Mapping[str, int], hands: Mapping[str, int]) -> tuple[Standing, ...]:
    """Players by average win per hand, best first (seed 004, *Termine del gioco*).

    ``net_minor``: each player's total won minus invested; ``hands``: hands he was dealt
    in (a player with no hand scores 0). Equal scores share a place (1, 1, 3, ...) and
    are listed by more hands first, then by name. Raises ``ValueError`` if the two
    mappings name different players or a hand count is negative.

    >>> [(s.place, s.player, str(s.score)) for s in leaderboard({"a": 30, "b": -30}, {"a": 4, "b": 3})]
    [(1, 'a', '15/2'), (2, 'b', '-10')]
    """
    if set(net_minor) != set(hands):
        raise ValueError("net_minor and hands must name the same players")
    if any(isinstance(n, bool) or not isinstance(n, int) or n < 0 for n in hands.values()):
        raise ValueError("hand counts are integers >= 0")
    scores = {name: Fraction(net_minor[name], hands[name]) if hands[name] else Fraction(0) for name in hands}
    order = sorted(scores, key=lambda name: (-scores[name], -hands[name], name))
    standings: list[Standing] = []
    for index, name in enumerate(order):
        place = standings[-1].place if standings and standings[-1].score == scores[name] else index + 1
        standings.append(Standing(place, name, hands[name], net_minor[name], scores[name]))
    return tuple(standings)


PRACTICE_LABEL: Final = "bigholdem-practice"
"""The label of the stream a practice game's set-up draws from (``practice_draws``)."""


@dataclass(frozen=True, slots=True)
class PracticeDraws:
    """A practice game's set-up: the person's seat (``None`` in an automatic game) and each
    house bot's personality, as an index into the caller's list of personalities, in seat
    order (the person's seat skipped)."""

    person: int | None
    personalities: tuple[int, ...]


def practice_draws(seed: bytes, players: int, *, interactive: bool, personalities: int) -> PracticeDraws:
    """The random set-up of a practice game of ``players`` (2..10): the person's seat, drawn
    first when ``interactive`` (seed 004, *PRE-FLOP*: seat 0 deals the first hand, so the
    first dealer is random for the person), then one personality (``0 .. personalities -
    1``) per bot in seat order. Drawn from ``RandomStream(seed, PRACTICE_LABEL)`` (32-byte
    ``seed``: the platform passes its table's published chain anchor), so a game's set-up
    replays from public data, as its hands and bots' decisions replay from their seeds.
    Raises ``ValueError`` for a bad seed, players out of 2..10 or ``personalities < 1``."""
    count = _players(players)
    if isinstance(personalities, bool) or not isinstance(personalities, int) or personalities < 1:
        raise ValueError(f"personalities must be a positive integer, got {personalities!r}")
    stream = RandomStream(seed, PRACTICE_LABEL)
    person = stream.randbelow(count) if interactive else None
    bots = count - (person is not None)
    return PracticeDraws(person, tuple(stream.randbelow(personalities) for _ in range(bots)))
