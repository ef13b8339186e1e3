"""What a game of the house is, as data (issue 21; the review's section 5.2, pokerkit's
variants-as-data idea at the platform level).

A game of the house (WiderPoker, Texas Hold'em, a test's coin flip) is one ``Game`` value
built by its own package (``tables/<game>/game.py``) from its own functions, and listed in
the registry, ``tables.games``. The house (the clock, the admin, the back office's checks,
the transports) reaches a game only through that value: it never names a game.

This module only describes: it imports no game and no registry, so a game package may
import it to build its ``Game`` while the registry imports the game packages (no import
cycle). ``tables.games`` re-exports every name here.

Two sides fill a ``Game``:

* the **state** side (the table's rows): ``create``, ``conditions``, ``advance``, ``cancel``,
  ``leave``, ``admin``, and the optional clock and books hooks (``on_tick``,
  ``background``, ``books``);
* the **transport** side (what players see and send): ``commands``, ``public_frame``,
  ``private_frame``, ``private_frames``, ``page``, ``lobby``, and the optional
  ``cached_snapshot`` and ``purchases``.
"""

from __future__ import annotations

from collections.abc import Awaitable, Callable, Mapping, Sequence
from concurrent.futures import Future
from dataclasses import dataclass, field
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Any

from django.db.models import Q
from django.http import HttpRequest, HttpResponse

from tables.forms import ConditionsForm

if TYPE_CHECKING:
    from tables.commands import Command
    from tables.models import Table


MALFUNCTION_PAUSE = timedelta(seconds=5)
"""How long a table waits after a malfunction (a failed step, a cancelled hand, an abandoned
deal) before the clock tries it again (rules, Notes 3)."""


@dataclass(frozen=True, slots=True)
class Step:
    """What a game's clock step (``Game.advance``) asks of the house beyond saving the table.

    ``broadcast``: called with the saved table inside the step's transaction, instead of the
    house's default push (the public frame to every watcher and each seated player's private
    frame, after commit); None keeps the default. ``after_commit``: work run after the step
    committed, in a durable transaction of its own (a failure is logged, never raised: it
    is off the step's critical path); None for none. ``wake_at``: when the table's new
    deadline is to be kept to the moment, not at the clock's first tick after it (up to
    ``TICK_SECONDS`` late): an algorithm 3 hand dealt as the previous results end, a
    settlement as its keys' beacon round is released (``tables.clock.wake_table_at``); None
    for none."""

    broadcast: Callable[[Table], None] | None = None
    after_commit: Callable[[], object] | None = None
    wake_at: datetime | None = None


NO_STEP = Step()
"""A clock step that needs nothing more than the house's default push."""


@dataclass(frozen=True, slots=True)
class ConditionsSpec:
    """A game's table conditions, as staff change them (DESIGN 14: audit-logged, a running
    hand finishes under the old ones).

    ``fields``: the names of the conditions (money in minor units, shares in basis points,
    durations in seconds). ``current(table)``: their values in force, ``{field: value}``
    (without the table's ``pending_changes``). ``validate(values, mode)``: check a full set
    of values for a table of ``mode`` (``TableMode``); raises InvalidTableConfigError.
    ``on_change(table, now)``: called under the table's row lock once a change is recorded
    in ``table.pending_changes``: apply it at once (a table with no hand running) or leave
    it for the clock; it may set attributes of ``table``, which the house then saves.
    ``relation``: the table's one-to-one relation to the game's conditions row (``"widerpoker"``:
    ``table.widerpoker``), which the house's list reads ``select_related``; None: no row."""

    fields: tuple[str, ...]
    current: Callable[[Table], dict[str, Any]]
    validate: Callable[[Mapping[str, Any], str], None]
    on_change: Callable[[Table, datetime], None]
    relation: str | None = None


@dataclass(frozen=True, slots=True)
class GameAdmin:
    """A game's staff pages in the table admin (tables/admin/tables.py delegates to them).

    ``create_form``: the "Add table" form, bound or not (``form_class(data, initial=...)``);
    its ``cleaned_data`` has ``name``, ``mode``, ``currency``, ``reason`` and its
    ``config()`` the conditions (``Game.create``'s keywords); ``create_initial`` the
    conditions a new table's form starts from (minor units); ``initial_from(values)`` on
    both forms turns conditions into form values. ``conditions_form``: the "Change
    conditions" form (its ``config()`` gives ``{field: value}`` of ``ConditionsSpec.fields``).
    ``running_hand(table)``: the label of the hand a malfunction cancel would cancel
    (``"hand #12"``), None when none runs. ``cancelled``: what the admin says once it is
    cancelled, after that label. ``changed``: what it says once conditions are recorded.
    ``add_title``: the add page's title."""

    create_form: type[ConditionsForm]
    create_initial: Mapping[str, Any]
    conditions_form: type[ConditionsForm]
    running_hand: Callable[[Table], str | None]
    add_title: str
    cancelled: str
    changed: Callable[[Table, Mapping[str, Any]], str]


@dataclass(frozen=True, slots=True)
class GameLobby:
    """A game's section of the lobby page (lobby/views.py lists one per game, in the
    registry's order).

    ``rows()``: the game's tables as the lobby lists them, each a JSON-ready mapping with at
    least ``id`` and ``name``, already in the game's order (practice and tournament tables
    left out by the game's own query: nothing downstream filters them). ``template``: the
    section's template (its context: ``rows``, and ``refresh_seconds``). ``json_key``: the
    key of the rows in ``lobby/tables.json`` (what static/js/lobby.js re-reads)."""

    rows: Callable[[], Sequence[Mapping[str, Any]]]
    template: str
    json_key: str


@dataclass(frozen=True, slots=True)
class PurchaseDoor:
    """How a game's purchases reach the process's purchase writer, which commits many in
    one batch (WiderPoker's draws and redeals, tables/widerpoker/services/purchases.py).

    ``batches(name, params)``: whether action ``name`` with these parsed params goes
    through the writer (a paid purchase; a free item keeps the one-at-a-time path);
    ``enabled()``: whether the writer is on in this process; ``order(name, table_id=,
    user_id=, now=, ref=)``: the writer's order for it (``ref`` as the client sent it: a
    frame's ``ref`` or REST's ``Idempotency-Key``); ``precheck(order)``: the refusals known
    before queueing (raises the DomainError); ``submit(order)``: queue it, a future of its
    outcome; ``submit_async(order)``: queue it from the running event loop, an awaitable of
    its outcome resolved on that loop (the socket and the REST fast path await it);
    ``wait(order)``: queue it and wait in this thread (a REST request). An outcome has
    ``error`` (DomainError or None), ``duplicate`` (bool) and ``frame`` (the buyer's new
    private frame, or None for a duplicate)."""

    batches: Callable[[str, Mapping[str, Any]], bool]
    enabled: Callable[[], bool]
    order: Callable[..., Any]
    precheck: Callable[[Any], None]
    submit: Callable[[Any], Future[Any]]
    submit_async: Callable[[Any], Awaitable[Any]]
    wait: Callable[[Any], Any]


@dataclass(frozen=True, slots=True)
class GameAudit:
    """A game's totals for the auditor reports (backoffice/auditing.py runs them for every
    game of the registry, in its order, and turns each row into an ``AuditRow``).

    Both take ``since`` and ``until`` (UTC instants: hands that ended, ``settled_at``, in
    [since, until)), ``table_id``, ``currency``, ``player`` (a username: the hands he was
    dealt in) and ``practice`` (practice games alone instead of real tables) as keywords.
    ``totals(group_by, **filters)``: the terminal hands by ``"day"`` or ``"table"``, each
    row ``{group, group_name (by table), table__currency, hands, cancelled, entries,
    gross, rake, prizes, contributions, awards}`` (money in minor units; ``contributions``
    and ``awards`` None for a game without jackpots). ``player_totals(**filters)``: the
    settled hands by player, each row ``{user_id, username, currency, hands, entries,
    paid, won}`` (minor units), in the game's order."""

    totals: Callable[..., list[dict[str, Any]]]
    player_totals: Callable[..., list[dict[str, Any]]]


@dataclass(frozen=True, slots=True)
class Game:
    """One game of the house, described by its functions (``tables.games`` lists them).

    State side:

    * ``key``: the ``Table.game`` value (at most 12 characters); ``label``: its name for people.
    * ``create(name=, mode=, currency=, staff_user_id=None, reason="", **conditions) -> Table``:
      staff (or a fixture) open a table of this game; raises InvalidTableConfigError
      (nothing saved).
    * ``conditions``: its conditions (``ConditionsSpec``).
    * ``advance(table, now) -> Step``: one clock step of a table whose deadline has passed;
      the house holds the row lock, saves the table's phase, deadline and version, and
      pushes the frames; the step bumps ``table.version`` when it changed something.
    * ``cancel(table, reason, now) -> bool``: a malfunction: cancel the running hand with
      every wager back (under the row lock; the house then sets the table waiting a
      few seconds); whether a hand was cancelled.
    * ``leave(table_id, user_id, now)``: take a player away from one table of this game (a
      suspension, an exclusion); own transaction; a seat already gone is not an error.
    * ``admin``: its staff pages (``GameAdmin``).
    * ``on_tick(now)``: work of the game once per clock tick after the tables advanced
      (None for none). ``background``: a filter (``Q`` on ``Table``) of the tables that
      play for nothing (a practice game), advanced last with a time budget; None for none.
    * ``books``: the game's own bookkeeping checks by name, each ``() -> list[str]``: the
      problems in words, empty when the books balance (``wallet.selectors.check_books``
      runs them); empty for none.
    * ``audit``: its totals for the auditor reports (``GameAudit``); None: not audited.
    * ``running_hands_started(tables) -> {table_id: datetime}``: when the hand running at
      each of these tables of the game started (the operations page's hand ages, one read
      for all); a table with no hand running is left out.

    Transport side (the socket, REST, pages):

    * ``commands``: its player actions, ``{name: Command}`` (tables/commands.py).
    * ``public_frame(table_id)``: the frame every watcher sees (a TypedDict of
      tables/realtime/frames.py); raises TableNotFoundError.
    * ``private_frames(table_id, user_ids) -> {user_id: frame text}``: each seated player's
      own frame, serialised (the hub's batched refresh); raises TableNotFoundError.
    * ``private_frame(table_id, user_id)``: one player's own frame (a TypedDict), what the
      snapshot, a socket's connect and a REST action answer; raises TableNotFoundError.
    * ``page(request, table_id) -> HttpResponse``: the game screen for the logged-in
      ``request.user`` with both frames embedded; raises Http404.
    * ``lobby``: its section of the lobby page (``GameLobby``); None: not listed.
    * ``lobby_row(table) -> {"next_special": str | None, "pool_minor": int | None}``: the
      game side of a table's lobby line (``tables.selectors``' lobby rows, the ``lobby_table``
      frame, ``GET /api/tables/``); None: both None.
    * ``cached_snapshot``: the public frame a socket is sent on connect may come from the
      hub's per-process cache (tables/realtime/hub.py, ``public_snapshot``; the frame has a
      ``version`` and a ``server_time``, stamped at each send).
    * ``purchases``: actions that go through the purchase writer (``PurchaseDoor``); None
      for none.
    * ``rest_alias``: the game's own REST action route, ``/api/tables/<id>/<rest_alias>/<action>/``
      (named ``table-<rest_alias>``, tables/api_urls.py); None for none. ``rest_doc``: that
      route's description in the OpenAPI schema.
    """

    key: str
    label: str
    create: Callable[..., Table]
    conditions: ConditionsSpec
    advance: Callable[[Table, datetime], Step]
    cancel: Callable[[Table, str, datetime], bool]
    leave: Callable[[int, int, datetime], object]
    admin: GameAdmin
    commands: Mapping[str, Command]
    public_frame: Callable[[int], Mapping[str, Any]]
    private_frames: Callable[[int, set[int]], dict[int, str]]
    private_frame: Callable[[int, int], Mapping[str, Any]]
    page: Callable[[HttpRequest, int], HttpResponse]
    lobby: GameLobby | None = None
    lobby_row: Callable[[Table], Mapping[str, Any]] | None = None
    cached_snapshot: bool = False
    purchases: PurchaseDoor | None = None
    on_tick: Callable[[datetime], None] | None = None
    background: Q | None = None
    books: Mapping[str, Callable[[], list[str]]] = field(default_factory=dict)
    audit: GameAudit | None = None
    running_hands_started: Callable[[Sequence[Table]], Mapping[int, datetime]] | None = None
    rest_alias: str | None = None
    rest_doc: str = ""
