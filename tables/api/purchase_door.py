"""The REST purchase's lean door (issue 23, item 2; docs/platform.md, "REST purchases"):
``POST /api/tables/<id>/draws/`` and ``/redeals/`` with a token, answered on daphne's event
loop at about the cost of a socket purchase, the same URL, bodies, status codes and codes.

An ASGI wrapper in front of Django (config/asgi.py) takes the requests it can answer exactly
and hands every other one, untouched, to Django's REST view (tables/api/play.py), which
stays the reference:

- only ``Authorization: Token <key>`` with no session cookie (DRF tries the session first),
  a body that is empty, ``{}`` or ``{"free": false}`` (a free item keeps the view), an
  ``Accept`` of JSON, an allowed ``Host``, a secure request where HTTPS is required;
- the token is looked up in this process's cache (``TOKEN_SECONDS``; a token deleted in
  this process is forgotten at once, one deleted elsewhere within ``TOKEN_SECONDS``), a
  miss in one query for the tokens missed together, off the event loop; an unknown token
  or inactive user goes to the view (its 401);
- the rate limits are DRF's own (``ActionThrottles.limits``: per user, per address, per
  player action), the same histories in the shared cache, mirrored here
  (``LocalThrottles``): a request is counted in the mirror and the counts are written back
  every ``SYNC_SECONDS``; a key not read for ``MIRROR_SECONDS`` is read again (several keys
  in one round trip) before its decision, and a history the view's check writes in this
  process replaces its mirror; a request a limit would refuse is written back at once and
  handed to the view, whose check refuses it with DRF's 429;
- the purchase is checked and queued into the process's purchase writer (``PurchaseDoor``
  ``precheck``, ``submit_async``) and answered with the state the writer built, or the
  refusal's ``{"code", "message", "extra"}`` in the request's language; the player's open
  sockets get their private state (one publish for the answers of one loop turn).

Failure cases: the shared cache unreachable: the request goes to the view (its own fallback
counts in the process); the process dying with purchases queued: nothing charged, no
answer (the writer's case). Across processes a limit may let through what the other
processes counted in the last ``MIRROR_SECONDS`` (DRF's own check reads and writes the
histories without a lock too); within one process it is exact."""

from __future__ import annotations

import asyncio
import json
import logging
import re
import threading
import time
import uuid
from collections.abc import Awaitable, Callable, MutableMapping
from concurrent.futures import ThreadPoolExecutor
from types import SimpleNamespace
from typing import Any, Final

from django.conf import settings
from django.core.cache import cache
from django.db import close_old_connections, connection, transaction
from django.http.cookie import parse_cookie
from django.http.request import split_domain_port, validate_host
from django.utils import timezone, translation
from rest_framework.authtoken.models import Token
from rest_framework.throttling import SimpleRateThrottle

from config.infra import metrics
from config.infra.errors import DomainError
from config.infra.languages import pick_language
from config.infra.observability import REQUEST_ID
from config.infra.throttles import CACHE_DOWN, WRITTEN, ActionThrottles
from tables import commands, games
from tables.games import Game
from tables.realtime import bus

logger = logging.getLogger(__name__)

ROUTE: Final = re.compile(r"/api/tables/(?P<table>[0-9]{1,18})/(?P<what>draws|redeals)/")
ACTIONS: Final = {"draws": "buy_draw", "redeals": "redeal"}
ROUTES: Final = {"draws": "/api/tables/<int:table_id>/draws/", "redeals": "/api/tables/<int:table_id>/redeals/"}
"""The routes as the request metrics name them (``RequestMetricsMiddleware``)."""
BODIES: Final = frozenset({b"", b"{}", b'{"free":false}', b'{"free": false}'})
ACCEPTED: Final = frozenset({b"", b"*/*", b"application/json"})
TOKEN_SECONDS: Final = 5.0
SYNC_SECONDS: Final = 0.2
MIRROR_SECONDS: Final = 1.0

_EXECUTOR = ThreadPoolExecutor(max_workers=2, thread_name_prefix="rest-purchase")
"""Threads for what would block the event loop: token reads, the shared histories, publishes."""


def _off_loop(function: Callable[..., Any], *args: Any) -> Awaitable[Any]:
    return asyncio.get_running_loop().run_in_executor(_EXECUTOR, function, *args)


def _with_connection(function: Callable[..., Any], *args: Any) -> Any:
    """``function(*args)`` in a worker thread with a database connection, given back after."""
    close_old_connections()
    try:
        return function(*args)
    finally:
        connection.close()


class Coalescer:
    """Fetches the keys asked in one turn of the event loop together: ``get(key)`` waits for
    one ``fetch(keys) -> {key: value}`` run off the loop (a missing key: None)."""

    def __init__(self, fetch: Callable[[list[Any]], dict[Any, Any]]) -> None:
        self.fetch = fetch
        self.keys: set[Any] = set()
        self.future: asyncio.Future[dict[Any, Any]] | None = None

    async def get_many(self, keys: list[Any]) -> dict[Any, Any]:
        loop = asyncio.get_running_loop()
        if self.future is None or self.future.get_loop() is not loop:  # (a test's earlier loop)
            self.keys, self.future = set(), loop.create_future()
            loop.call_soon(self._launch)
        self.keys.update(keys)
        return await asyncio.shield(self.future)

    def _launch(self) -> None:
        keys, future = sorted(self.keys), self.future
        self.keys, self.future = set(), None
        assert future is not None
        task = asyncio.ensure_future(_off_loop(self.fetch, keys))

        def done(finished: asyncio.Future[dict[Any, Any]]) -> None:
            error = finished.exception()
            if error is not None:
                future.set_exception(error)
            else:
                future.set_result(finished.result())

        task.add_done_callback(done)


# --- tokens ----------------------------------------------------------------------------------


class TokenCache:
    """Token key -> user id of an active user, for ``TOKEN_SECONDS`` (``forget_user`` drops
    a user's tokens at once: ``Token`` deleted, user deactivated, in this process)."""

    def __init__(self) -> None:
        self.entries: dict[str, tuple[int, float]] = {}
        self.lock = threading.Lock()
        self.lookups = Coalescer(lambda keys: _with_connection(_read_tokens, keys))

    async def user_of(self, key: str) -> int | None:
        now = time.monotonic()
        found = self.entries.get(key)
        if found is not None and found[1] > now:
            return found[0]
        user_id = (await self.lookups.get_many([key])).get(key)
        if user_id is not None:
            with self.lock:
                self.entries[key] = (int(user_id), now + TOKEN_SECONDS)
                if len(self.entries) > 200_000:
                    self.entries = {k: v for k, v in self.entries.items() if v[1] > now}
        return None if user_id is None else int(user_id)

    def forget_user(self, user_id: int) -> None:
        with self.lock:
            self.entries = {key: value for key, value in self.entries.items() if value[0] != user_id}


def _read_tokens(keys: list[str]) -> dict[str, int]:
    """The users of ``keys`` whose account is active (as DRF's TokenAuthentication accepts)."""
    rows = Token.objects.filter(key__in=keys, user__is_active=True).values_list("key", "user_id")
    return {str(key): int(user_id) for key, user_id in rows}


TOKENS = TokenCache()


def forget_tokens(sender: Any, instance: Any, **kwargs: Any) -> None:
    """Signal receiver (tables/apps.py): a deleted token, or a user saved inactive, is no
    longer accepted by this process's cache at once, nor, once the change commits, by the
    other ASGI processes' (``bus.publish_tokens_revoked``, received by their hubs)."""
    if isinstance(instance, Token):
        user_id = int(instance.user_id)
    elif getattr(instance, "is_active", True) is False and instance.pk is not None:
        user_id = int(instance.pk)
    else:
        return
    TOKENS.forget_user(user_id)
    transaction.on_commit(lambda: bus.publish_tokens_revoked(user_id), robust=True)


# --- rate limits -----------------------------------------------------------------------------


def _who(user_id: int, meta: dict[str, str]) -> SimpleNamespace:
    """What DRF's throttles read of a request to name its keys: the user, the META and the
    forwarded-for header."""
    forwarded = {"x-forwarded-for": meta["HTTP_X_FORWARDED_FOR"]} if "HTTP_X_FORWARDED_FOR" in meta else {}
    return SimpleNamespace(user=SimpleNamespace(pk=user_id, is_authenticated=True), META=meta, headers=forwarded)


class LocalThrottles:
    """DRF's sliding-window histories (newest first, epoch seconds, under DRF's cache keys)
    mirrored in this process: ``allow`` decides from the mirror, counts the request in it and
    in ``pending``; ``sync`` writes the pending counts into the shared histories (read,
    merged, written, as DRF's check does) every ``SYNC_SECONDS`` while there are some."""

    def __init__(self) -> None:
        self.mirror: dict[str, tuple[list[float], float]] = {}  # key -> (history, read at, monotonic)
        self.pending: dict[str, tuple[list[float], int]] = {}  # key -> (stamps, window seconds)
        self.reads = Coalescer(lambda keys: cache.get_many(keys))
        self.syncing: asyncio.Task[None] | None = None

    def limits(self, user_id: int, meta: dict[str, str]) -> list[tuple[str, int, int]]:
        """(key, number, seconds) of each of the action's limits that has a rate."""
        who, found = _who(user_id, meta), []
        for limit in (cls() for cls in ActionThrottles.limits):
            assert isinstance(limit, SimpleRateThrottle)
            key = limit.get_cache_key(who, None) if limit.rate is not None else None  # type: ignore[arg-type]
            if key is not None:
                number, seconds = limit.parse_rate(limit.rate)
                assert number is not None and seconds is not None
                found.append((key, number, seconds))
        return found

    async def allow(self, limits: list[tuple[str, int, int]]) -> bool:
        """Whether every limit has room (then the request is counted in each); False: give
        the request to the view (its counts written back first). Raises CACHE_DOWN."""
        now = time.monotonic()
        stale = [key for key, _, _ in limits if key not in self.mirror or self.mirror[key][1] < now - MIRROR_SECONDS]
        if stale:
            read = await self.reads.get_many(stale)
            for key in stale:
                self._merge(key, list(read.get(key) or []), now)
        stamp = time.time()
        for key, number, seconds in limits:
            history = self.mirror[key][0]
            while history and history[-1] <= stamp - seconds:
                history.pop()
            if len(history) >= number:
                await _off_loop(self._write, self._take([key for key, _, _ in limits]))
                return False
        for key, _number, seconds in limits:
            self.mirror[key][0].insert(0, stamp)
            self.pending.setdefault(key, ([], seconds))[0].append(stamp)
        if self.syncing is None or self.syncing.done() or self.syncing.get_loop() is not asyncio.get_running_loop():
            self.syncing = asyncio.ensure_future(self._sync_soon())
        return True

    def _merge(self, key: str, shared: list[float], now: float) -> None:
        """The mirror of ``key``: the shared history with this process's pending counts."""
        local = self.pending.get(key, ([], 0))[0]
        self.mirror[key] = (sorted({*shared, *local}, reverse=True), now)

    def _take(self, keys: list[str] | None = None) -> dict[str, tuple[list[float], int]]:
        chosen = list(self.pending) if keys is None else [key for key in keys if key in self.pending]
        return {key: self.pending.pop(key) for key in chosen}

    async def _sync_soon(self) -> None:
        while self.pending:
            await asyncio.sleep(SYNC_SECONDS)
            taken = self._take()
            try:
                merged = await _off_loop(self._write, taken)
            except CACHE_DOWN:
                logger.warning("the API rate limits' cache is unreachable: counts kept in this process")
                for key, (stamps, seconds) in taken.items():  # kept for the next attempt
                    self.pending.setdefault(key, ([], seconds))[0].extend(stamps)
                continue
            now = time.monotonic()
            for key, history in merged.items():
                self._merge(key, history, now)
            if len(self.mirror) > 100_000:
                self.mirror = {k: v for k, v in self.mirror.items() if v[1] > now - 120}

    @staticmethod
    def _write(taken: dict[str, tuple[list[float], int]]) -> dict[str, list[float]]:
        """Add ``taken``'s counts to the shared histories (one read, one write per window);
        returns the histories written."""
        if not taken:
            return {}
        shared = cache.get_many(list(taken))
        now = time.time()
        by_window: dict[int, dict[str, list[float]]] = {}
        for key, (stamps, seconds) in taken.items():
            history = sorted({*(shared.get(key) or []), *stamps}, reverse=True)
            by_window.setdefault(seconds, {})[key] = [stamp for stamp in history if stamp > now - seconds]
        for seconds, items in by_window.items():
            cache.set_many(items, seconds)
        return {key: history for items in by_window.values() for key, history in items.items()}

    def written(self, items: dict[str, list[float]]) -> None:
        """A history this process's DRF check wrote (``throttles.WRITTEN``): the mirror of a
        key it holds takes it, with the counts not written back yet."""
        now = time.monotonic()
        for key, history in items.items():
            if key in self.mirror:
                self._merge(key, list(history), now)


THROTTLES = LocalThrottles()
WRITTEN.append(THROTTLES.written)
bus.TOKEN_LISTENERS.append(TOKENS.forget_user)


# --- the door --------------------------------------------------------------------------------

_GAMES: dict[int, Game] = {}
_REFRESH: dict[int, set[int]] = {}  # table id -> players whose sockets get their private state


def _publish_refreshes() -> None:
    """One publish per player answered since the last call (the sockets' private state)."""
    pending = dict(_REFRESH)
    _REFRESH.clear()
    for table_id, user_ids in pending.items():
        for user_id in sorted(user_ids):
            bus.publish_player(user_id, table_id=table_id)


class RestPurchaseDoor:
    """The ASGI wrapper (module docstring): ``app`` is Django's ASGI application."""

    def __init__(self, app: Callable[..., Awaitable[None]]) -> None:
        self.app = app

    async def __call__(self, scope: MutableMapping[str, Any], receive: Any, send: Any) -> None:
        match = ROUTE.fullmatch(scope.get("path", "")) if scope["type"] == "http" else None
        if match is None or scope.get("method") != "POST" or scope.get("root_path"):
            return await self.app(scope, receive, send)
        headers: dict[bytes, bytes] = {}
        for name, value in scope.get("headers") or ():
            headers[name] = headers[name] + b"," + value if name in headers else value
        try:
            length = int(headers.get(b"content-length", b"0"))
        except ValueError:
            length = -1
        if not 0 <= length <= 64 or b"transfer-encoding" in headers:
            return await self.app(scope, receive, send)
        body, more = b"", True
        while more:
            message = await receive()
            if message["type"] != "http.request":
                return  # the client went away
            body += message.get("body", b"")
            more = message.get("more_body", False)
        if not await self.answer(scope, headers, body, int(match["table"]), match["what"], send):
            replayed = False

            async def replay() -> dict[str, Any]:
                nonlocal replayed
                if not replayed:
                    replayed = True
                    return {"type": "http.request", "body": body, "more_body": False}
                message: dict[str, Any] = await receive()
                return message

            await self.app(scope, replay, send)

    async def admit(
        self, scope: MutableMapping[str, Any], headers: dict[bytes, bytes], body: bytes, table_id: int, what: str
    ) -> tuple[Game, Any, str, int] | None:
        """The request's game, purchase door, action and player when the door can answer
        it, counted in its rate limits; None when the view must (nothing counted but a
        request a limit will refuse, written back for the view's check)."""
        if not _plain(scope, headers, body):
            return None
        authorization = headers.get(b"authorization", b"").split()
        if len(authorization) != 2 or authorization[0].lower() != b"token" or not authorization[1].isascii():
            return None
        game = _GAMES.get(table_id)
        if game is None:
            try:
                game = await _off_loop(_with_connection, games.game_of, table_id)
            except DomainError:
                return None
            _GAMES[table_id] = game
        name = ACTIONS[what]
        door = game.purchases
        try:
            action = commands.parse_body(name, json.loads(body) if body else {}, game=game)
        except DomainError:
            return None
        if door is None or not door.batches(name, action.params) or not door.enabled():
            return None
        user_id = await TOKENS.user_of(authorization[1].decode())
        if user_id is None:
            return None
        client = scope.get("client") or ("", 0)
        meta = {"REMOTE_ADDR": str(client[0])}
        if b"x-forwarded-for" in headers:
            meta["HTTP_X_FORWARDED_FOR"] = headers[b"x-forwarded-for"].decode("latin-1")
        if not await THROTTLES.allow(THROTTLES.limits(user_id, meta)):
            return None
        return game, door, name, user_id

    async def answer(
        self,
        scope: MutableMapping[str, Any],
        headers: dict[bytes, bytes],
        body: bytes,
        table_id: int,
        what: str,
        send: Any,
    ) -> bool:
        """Answer the purchase and return True, or return False (nothing answered, nothing
        counted but the limits' own count of a request the view will refuse). A fault before
        the purchase is queued (a bug, the shared cache unreachable) leaves it to the view."""
        try:
            admitted = await self.admit(scope, headers, body, table_id, what)
        except Exception as error:
            if not isinstance(error, CACHE_DOWN):
                logger.exception("the REST purchase door failed; the request goes to the view")
            return False
        if admitted is None:
            return False
        game, door, name, user_id = admitted
        started = time.perf_counter()
        language = _language(headers)
        key = headers.get(b"idempotency-key")
        ref = None if key is None else key.decode("latin-1")
        order = door.order(name, table_id=table_id, user_id=user_id, now=timezone.now(), ref=ref)
        status, text = 200, ""
        try:
            door.precheck(order)
            outcome = await door.submit_async(order)
            if outcome.error is not None:
                raise outcome.error
        except DomainError as error:
            with translation.override(language):
                message = error.for_people()
            status = error.http_status
            answer = {"code": error.code, "message": message, "extra": error.extra}
            text = json.dumps(answer, ensure_ascii=False, separators=(",", ":"))
        else:
            if not _REFRESH:
                asyncio.get_running_loop().call_soon(_off_loop, _publish_refreshes)
            _REFRESH.setdefault(table_id, set()).add(user_id)
            rendered = outcome.text  # spliced from the panel cache; no dict frame built
            if rendered is None:  # a duplicate: the state as it is now
                frame = await _off_loop(_with_connection, game.private_frame, table_id, user_id)
                text = json.dumps(frame, ensure_ascii=False, separators=(",", ":"))
            else:
                text = rendered
        await _respond(send, status, text.encode(), language, headers)
        metrics.HTTP_REQUESTS.labels(ROUTES[what], "POST", str(status)).inc()
        metrics.HTTP_DURATION.labels(ROUTES[what]).observe(time.perf_counter() - started)
        return True


def _plain(scope: MutableMapping[str, Any], headers: dict[bytes, bytes], body: bytes) -> bool:
    """Whether Django's middleware and DRF would pass the request as it is to the view: an
    allowed host (no forwarded host), no redirect to HTTPS, no session cookie, JSON
    accepted, a body the view reads as no free item."""
    if body not in BODIES or (body and not headers.get(b"content-type", b"").startswith(b"application/json")):
        return False
    if headers.get(b"accept", b"").strip() not in ACCEPTED or b"x-forwarded-host" in headers:
        return False
    host, _port = split_domain_port(headers.get(b"host", b"").decode("latin-1"))
    if not host or not validate_host(host, settings.ALLOWED_HOSTS):
        return False
    if settings.SECURE_SSL_REDIRECT and scope.get("scheme") != "https":
        proxy = settings.SECURE_PROXY_SSL_HEADER
        header = proxy[0].lower().removeprefix("http_").replace("_", "-").encode() if proxy else b""
        if not proxy or headers.get(header, b"").decode("latin-1") != proxy[1]:
            return False
    cookies = headers.get(b"cookie")
    return not (cookies and settings.SESSION_COOKIE_NAME in parse_cookie(cookies.decode("latin-1")))


def _language(headers: dict[bytes, bytes]) -> str:
    """The answer's language, as LocaleMiddleware picks it (and the game socket,
    ``consumers.language_of_scope``): the language cookie, else ``Accept-Language``, else
    ``LANGUAGE_CODE``; always one of ``LANGUAGES``."""
    cookies = headers.get(b"cookie")
    cookie = parse_cookie(cookies.decode("latin-1")).get(settings.LANGUAGE_COOKIE_NAME) if cookies else None
    given = headers.get(b"accept-language")
    return pick_language(cookie, [given.decode("latin-1")] if given is not None else [])


async def _respond(send: Any, status: int, body: bytes, language: str, headers: dict[bytes, bytes]) -> None:
    """The answer with the headers Django's stack gives the view's (middleware and DRF)."""
    given = headers.get(b"x-request-id", b"").decode("latin-1")
    request_id = given if REQUEST_ID.match(given) else uuid.uuid4().hex
    out = [
        (b"content-type", b"application/json"),
        (b"vary", b"Accept, Accept-Language, Cookie"),
        (b"allow", b"POST, OPTIONS"),
        (b"x-frame-options", b"DENY"),
        (b"content-length", str(len(body)).encode()),
        (b"content-language", language.encode()),
        (b"x-content-type-options", b"nosniff"),
        (b"referrer-policy", b"same-origin"),
        (b"cross-origin-opener-policy", b"same-origin"),
        (b"x-request-id", request_id.encode()),
    ]
    await send({"type": "http.response.start", "status": status, "headers": out})
    await send({"type": "http.response.body", "body": body})
