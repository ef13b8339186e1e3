"""Load harness: consecutive WiderPoker hands of N players on the production path, end to end.

    apt-get install nginx     # only with --nginx
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_massive REDIS_URL=redis://127.0.0.1:6379/7 \\
        .venv/bin/python -u bench/massive.py 10000 --sockets 10000 --nginx 2 --purchases 4000 --hands 10
    # 100,000 players, 10,000 of them with a real socket (the descriptor limit), the rest simulated:
    ... bench/massive.py 100000 --sockets 10000 --nginx 2 --purchases 4000 --hands 10
    # the cheap smoke run (tests/bench/test_massive_smoke.py runs it when asked):
    ... bench/massive.py 50 --sockets 50 --purchases 60 --hands 2

Everything goes through the platform's public doors: the players' game sockets (the
``buy_draw`` and ``redeal`` frames of docs/protocol.md, answered by ``ack`` or ``error``),
optionally REST (``--rest-purchases``), and the table clock (the harness only moves a
deadline, as time would). So whatever the services do behind those doors (a group-commit
writer for purchases, a leaner deal or settlement) shows in the same figures.

What it does, on loopback (PostgreSQL, Redis, ``--processes`` daphne processes that only
serve, and the table clock in its own processes as in production: a Celery worker and
Celery beat, ``TABLE_CLOCK=beat``, docs/deployment.md; ``--clock in-process`` runs it in the
first daphne instead, as the harness did before, whose deals then held that daphne's loop):

1. recreates the database named by ``DATABASE_URL`` (``bench_*``/``massive_*`` only),
   migrates it, and makes N players with funded wallets, seats at one fun table, API tokens,
   and sessions for the socket clients (bulk writes: set-up, not measured);
2. opens ``--sockets`` real game sockets from ``CLIENT_PROCESSES`` client processes
   (raw asyncio WebSocket clients), directly or through one nginx (``--nginx W``). The
   other players are **simulated**: seated, dealt in and settled like everyone, with no
   socket (this box allows about 10,000 proxied sockets: 20,000 descriptors a process);
3. plays ``--hands`` consecutive hands. For each: moves the table's deadline to now (the
   first wakes the table; the next ones set the previous hand's results to end one freeze
   lead later: algorithm 3 freezes the next hand one beacon period before the results end
   and deals it at their end, ``freezing.freeze_lead``), and measures
   * the **deal**: from the hand's start, from the results' end (the moment plus the lead;
     the next hands' figure, as the issue's "deadline of the previous hand") and from the
     moment itself, to the change frame built;
   * the **push** of the change frame: at the clients (arrival minus the frame's
     ``server_time``) and at the servers (each daphne logs a ``fanout-report``:
     tables/realtime/hub.py, ``FanoutReport``), p50/p95/p99/max;
   * **purchases over the sockets**: ``--purchases`` frames a hand (a ``redeal`` then a
     ``buy_draw`` from each buying socket, the buyers rotating over the sockets), sent as the
     change frame arrives; throughput (confirmed per second, first frame sent to last
     answer) and confirmation latency (frame sent to its ``ack``) p50/p95/p99, refusals by
     code;
   * the **settlement**: the change deadline moved to now (with its beacon round) to the
     results phase committed, a clock tick included;
   * that every confirmed purchase is in the settled hand and in what its entries paid;
4. reports the CPU seconds of the daphnes, nginx and the clients (the clients' own CPU apart:
   on another machine it would not take the servers' cores), daphne memory per socket, and
   at the end the **books check** (``check_books``).

The throttles are raised for the run (every simulated player shares 127.0.0.1). It prints a
Markdown table per hand and a summary, and exits non-zero if a socket missed a change frame,
a hand was not settled, a purchase does not check out, the books fail, or on a 5xx.

The functions are the harness's pieces (``prepare``, ``start_servers``, ``play_hand``,
``check_hand``, ``server_fanout``), so other benches can reuse them.
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import multiprocessing
import os
import queue
import secrets
import statistics
import subprocess
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.fanout import (  # noqa: E402
    daphne_command,
    free_port,
    pct,
    raise_fd_limit,
    recreate_database,
    rss_kib,
    server_fanout,
    socket_fds,
    start_clock,
    start_nginx,
    wait_listening,
)

ANTE, DRAW_PRICE, REDEAL_PRICE = 100, 50, 80
CLIENT_PROCESSES = 4
HANDSHAKES_IN_FLIGHT = 64  # per client process: the server's connect path batches what arrives together
RETRIES = 3
HAND_TIMEOUT = 300.0  # seconds a client process waits for a hand's frames and answers
BUY_ACTIONS = ("redeal", "buy_draw")  # what a buying socket sends, in this order


def funded_table(n: int, *, prefix: str, change_seconds: int, reference: str) -> tuple[Any, list[Any], list[Any]]:
    """A fun table whose change phase lasts ``change_seconds``, and ``n`` players (named
    ``<prefix><i>``) funded with 100,000 chips each by one transfer (``reference``), seated,
    each with an API token; returns (table, users, tokens). Django must be set up."""
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.utils import timezone
    from rest_framework.authtoken.models import Token

    from tables.models import Seat
    from tables.widerpoker.services.create import create_table
    from wallet import services as wallet_services
    from wallet.models import AccountKind, Currency, TransferKind

    call_command("migrate", verbosity=0)
    now = timezone.now()
    table = create_table(
        name=f"{prefix.upper()} {n}",
        mode="fun",
        currency="FUN",
        ante_minor=ANTE,
        draw_price_bps=DRAW_PRICE * 10_000 // ANTE,
        redeal_price_minor=REDEAL_PRICE,
        change_seconds=change_seconds,
        redeal_seconds=change_seconds,
        results_seconds=120,  # the harness ends each results phase itself
    )
    users = User.objects.bulk_create([User(username=f"{prefix}{i}", password="!") for i in range(n)], batch_size=5000)
    cashier = wallet_services.ensure_house_account(kind=AccountKind.CASHIER, currency=Currency.FUN)
    accounts = wallet_services.ensure_player_accounts(user_ids=[u.pk for u in users], currency=Currency.FUN).values()
    wallet_services.post_transfer(
        reference=reference,
        kind=TransferKind.FUN_GRANT,
        currency=Currency.FUN,
        legs=[wallet_services.Leg(a, 100_000) for a in accounts] + [wallet_services.Leg(cashier.pk, -100_000 * n)],
    )
    Seat.objects.bulk_create([Seat(table=table, user=u, joined_at=now, last_seen_at=now) for u in users], 5000)
    tokens = [Token(key=secrets.token_hex(20), user=u) for u in users]
    Token.objects.bulk_create(tokens, batch_size=5000)
    return table, users, tokens


def prepare(n: int, sockets: int, change_seconds: int) -> tuple[int, list[int], list[str], list[str]]:
    """The table, N funded and seated players, their tokens, and sessions for ``sockets`` of
    them; returns (table id, user ids, token keys, session keys)."""
    import django

    django.setup()
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.sessions.backends.db import SessionStore
    from django.contrib.sessions.models import Session

    table, users, tokens = funded_table(n, prefix="m", change_seconds=change_seconds, reference="massive-funding")
    store = SessionStore()
    sessions = [
        Session(
            session_key=secrets.token_hex(16),
            session_data=store.encode(
                {
                    SESSION_KEY: str(u.pk),
                    BACKEND_SESSION_KEY: "django.contrib.auth.backends.ModelBackend",
                    HASH_SESSION_KEY: u.get_session_auth_hash(),
                }
            ),
            expire_date=store.get_expiry_date(),
        )
        for u in users[:sockets]
    ]
    Session.objects.bulk_create(sessions, batch_size=5000)
    return table.pk, [u.pk for u in users], [t.key for t in tokens], [s.session_key for s in sessions]


# --- The socket clients ---------------------------------------------------------------------


def buys_in_hand(index: int, hand: int, sockets: int, purchases: int) -> tuple[str, ...]:
    """The frames the socket of global ``index`` sends in ``hand`` (0-based): the buyers are
    ``ceil(purchases / 2)`` consecutive sockets, rotating by that many each hand; each sends
    ``redeal`` then ``buy_draw`` (the last buyer only the first when ``purchases`` is odd)."""
    if purchases <= 0 or sockets <= 0:
        return ()
    buyers = min(sockets, -(-purchases // len(BUY_ACTIONS)))
    rank = (index - hand * buyers) % sockets
    if rank >= buyers:
        return ()
    left = purchases - rank * len(BUY_ACTIONS)
    return BUY_ACTIONS[: max(0, min(len(BUY_ACTIONS), left))]


class HandClient(asyncio.Protocol):
    """A raw WebSocket client (one HTTP upgrade, unmasked server frames split by hand, pings
    answered): it parses only change-phase ``table_state`` frames and the answers to its own
    frames (``ack``/``error`` carrying its ``ref``); everything else is skipped unparsed."""

    def __init__(self, group: ClientGroup, index: int, request: bytes, ready: asyncio.Future[None]) -> None:
        self.group = group
        self.index = index
        self.request = request
        self.ready = ready
        self.buffer = b""
        self.upgraded = False
        self.transport: asyncio.Transport | None = None
        self.versions: set[int] = set()
        self.waiting: dict[int, asyncio.Future[tuple[float, str]]] = {}
        self.next_ref = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.write(self.request)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.ready.done():
            self.ready.set_exception(ConnectionError(f"closed before the upgrade: {exc}"))
        for future in self.waiting.values():
            if not future.done():
                future.set_exception(ConnectionError("socket closed"))

    def send(self, frame: dict[str, Any]) -> asyncio.Future[tuple[float, str]]:
        """Send ``frame`` (masked, as a client must) with a fresh ``ref``; the future gets
        (arrival time, "" for ``ack`` or the ``error`` code) when its answer comes."""
        assert self.transport is not None
        self.next_ref += 1
        ref = self.next_ref
        future: asyncio.Future[tuple[float, str]] = asyncio.get_running_loop().create_future()
        self.waiting[ref] = future
        payload = json.dumps({**frame, "ref": ref}).encode()
        mask = secrets.token_bytes(4)
        masked = bytes(b ^ mask[i % 4] for i, b in enumerate(payload))
        length = len(payload)
        head = bytes([0x81, 0x80 | length]) if length < 126 else bytes([0x81, 0x80 | 126]) + length.to_bytes(2, "big")
        self.transport.write(head + mask + masked)
        return future

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        if not self.upgraded:
            head, sep, rest = self.buffer.partition(b"\r\n\r\n")
            if not sep:
                return
            if b" 101 " not in head.split(b"\r\n", 1)[0]:
                if not self.ready.done():
                    self.ready.set_exception(ConnectionError(head.split(b"\r\n", 1)[0].decode()))
                return
            self.upgraded = True
            self.buffer = rest
            if not self.ready.done():
                self.ready.set_result(None)
        buffer = self.buffer
        while len(buffer) >= 2:
            opcode, length, offset = buffer[0] & 0x0F, buffer[1] & 0x7F, 2
            if length == 126:
                if len(buffer) < 4:
                    break
                length, offset = int.from_bytes(buffer[2:4], "big"), 4
            elif length == 127:
                if len(buffer) < 10:
                    break
                length, offset = int.from_bytes(buffer[2:10], "big"), 10
            if len(buffer) < offset + length:
                break
            payload = buffer[offset : offset + length]
            buffer = buffer[offset + length :]
            if opcode == 0x9 and self.transport is not None:  # ping: a masked pong, zero mask key
                self.transport.write(bytes([0x8A, 0x80 | len(payload)]) + b"\0\0\0\0" + payload)
            elif opcode == 0x1:
                self.text_frame(payload)
        self.buffer = buffer

    def text_frame(self, payload: bytes) -> None:
        head = payload[:60]
        if head.startswith(b'{"type":"table_state"') and b'"phase":"change"' in payload[:200]:
            received = time.time()
            frame = json.loads(payload)
            if frame["version"] not in self.versions:
                self.versions.add(frame["version"])
                self.group.change_frame(self, received, frame)
        elif head.startswith((b'{"type":"ack"', b'{"type":"error"')) and self.waiting:
            received = time.time()
            frame = json.loads(payload)
            future = self.waiting.pop(frame.get("ref"), None) if isinstance(frame.get("ref"), int) else None
            if future is not None and not future.done():
                future.set_result((received, "" if frame["type"] == "ack" else str(frame.get("code"))))


@dataclass
class HandRecord:
    """What one client process saw of one hand: change-frame arrivals (arrival, the frame's
    ``server_time`` epoch seconds, version) and purchases (action, sent, answered, code)."""

    arrivals: list[tuple[float, float, int]] = field(default_factory=list)
    purchases: list[tuple[str, float, float, str]] = field(default_factory=list)
    buying: int = 0


class ClientGroup:
    """One client process's sockets: opens them, buys on each change frame as planned
    (``buys_in_hand``), and reports each hand once all its sockets had the frame and every
    purchase was answered (or ``HAND_TIMEOUT`` passed)."""

    def __init__(self, sockets: int, purchases: int, results: Any) -> None:
        self.sockets = sockets
        self.purchases = purchases
        self.results = results
        self.clients: list[HandClient] = []
        self.hands: dict[int, HandRecord] = {}
        self.seen: dict[int, int] = {}  # socket index -> change frames seen
        self.tasks: set[asyncio.Task[None]] = set()
        self.cpu = time.process_time()

    def change_frame(self, client: HandClient, received: float, frame: dict[str, Any]) -> None:
        hand = self.seen.get(client.index, 0)
        self.seen[client.index] = hand + 1
        record = self.hands.setdefault(hand, HandRecord())
        record.arrivals.append((received, datetime.fromisoformat(frame["server_time"]).timestamp(), frame["version"]))
        actions = buys_in_hand(client.index, hand, self.sockets, self.purchases)
        if actions:
            record.buying += 1
            task = asyncio.get_running_loop().create_task(self.buy(client, record, actions))
            self.tasks.add(task)
            task.add_done_callback(self.tasks.discard)

    async def buy(self, client: HandClient, record: HandRecord, actions: tuple[str, ...]) -> None:
        for action in actions:
            sent = time.time()
            try:
                answered, code = await asyncio.wait_for(client.send({"type": action}), HAND_TIMEOUT)
            except (TimeoutError, ConnectionError) as error:
                answered, code = time.time(), f"no answer ({type(error).__name__})"
            record.purchases.append((action, sent, answered, code))
        record.buying -= 1

    async def report_hands(self, release: Any) -> None:
        hand = 0
        while not release.is_set():
            record = self.hands.get(hand)
            if record is None:
                await asyncio.sleep(0.05)
                continue
            first = min(a[0] for a in record.arrivals)
            while (len(record.arrivals) < len(self.clients) or record.buying) and time.time() - first < HAND_TIMEOUT:
                await asyncio.sleep(0.02)
            cpu, self.cpu = time.process_time() - self.cpu, time.process_time()
            self.results.put(("hand", hand, record.arrivals, record.purchases, cpu))
            hand += 1


async def _client_main(
    targets: list[tuple[str, str]],
    table_id: int,
    sessions: list[tuple[int, str]],
    total_sockets: int,
    purchases: int,
    connected: Any,
    results: Any,
    release: Any,
) -> None:
    loop = asyncio.get_running_loop()
    group = ClientGroup(total_sockets, purchases, results)
    retried = 0
    in_flight = asyncio.Semaphore(HANDSHAKES_IN_FLIGHT)

    async def open_one(position: int, index: int, cookie: str) -> None:
        nonlocal retried
        host, origin = targets[position % len(targets)]  # this process's sockets alternate over them
        address, port = host.split(":")
        request = (
            f"GET /ws/tables/{table_id}/ HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {base64.b64encode(secrets.token_bytes(16)).decode()}\r\n"
            f"Sec-WebSocket-Version: 13\r\nOrigin: {origin}\r\nCookie: sessionid={cookie}\r\n\r\n"
        ).encode()
        async with in_flight:
            for attempt in range(RETRIES + 1):
                ready: asyncio.Future[None] = loop.create_future()
                client = HandClient(group, index, request, ready)
                transport, _ = await loop.create_connection(lambda client=client: client, address, int(port))  # type: ignore[misc]
                try:
                    await asyncio.wait_for(ready, 300)
                    group.clients.append(client)
                    return
                except (ConnectionError, TimeoutError):  # refused under load: a player would reconnect
                    transport.close()
                    if attempt == RETRIES:
                        raise
                    retried += 1
                    await asyncio.sleep(2 ** (attempt + 1))

    await asyncio.gather(*(open_one(position, index, cookie) for position, (index, cookie) in enumerate(sessions)))
    results.put(("connected", retried, time.process_time()))
    connected.release()
    group.cpu = time.process_time()
    await group.report_hands(release)
    for client in group.clients:
        if client.transport is not None:
            client.transport.close()
    await asyncio.sleep(0.5)


def client_process(
    targets: list[tuple[str, str]],
    table_id: int,
    sessions: list[tuple[int, str]],
    total_sockets: int,
    purchases: int,
    connected: Any,
    results: Any,
    release: Any,
) -> None:
    """One client process: open its sockets (``sessions``: (global index, session key)),
    then report each hand (``("hand", number, arrivals, purchases, cpu seconds)``) until
    ``release`` is set."""
    try:
        raise_fd_limit()
        asyncio.run(_client_main(targets, table_id, sessions, total_sockets, purchases, connected, results, release))
    except BaseException as error:  # report, never hang the parent
        results.put(("error", repr(error)))


# --- Servers ----------------------------------------------------------------------------------


def start_servers(
    env: dict[str, str], processes: int, workdir: Path, *, clock: str = "beat"
) -> tuple[list[subprocess.Popen[bytes]], list[int]]:
    """``processes`` daphne processes, their stderr logged to ``workdir/server<i>.log``;
    returns them and their ports once they listen. With ``clock`` "in-process" the first runs
    the table clock; with "beat" none does (``start_clock`` runs it, as in production)."""
    servers, ports = [], []
    for index in range(processes):
        port = free_port()
        servers.append(
            subprocess.Popen(
                daphne_command(port),
                cwd=ROOT,
                env={**env, "TABLE_CLOCK": "beat" if clock == "beat" else "in-process" if index == 0 else "off"},
                stdout=subprocess.DEVNULL,
                stderr=(workdir / f"server{index}.log").open("w"),
            )
        )
        ports.append(port)
    for port, server in zip(ports, servers, strict=True):
        wait_listening(port, server)
    return servers, ports


def cpu_seconds(pid: int, *, children: bool = False) -> float:
    """User + system CPU seconds of a process (and of its direct children, for nginx)."""
    ticks = os.sysconf("SC_CLK_TCK")
    pids = [pid]
    if children:
        with contextlib.suppress(OSError):
            pids += [int(c) for c in Path(f"/proc/{pid}/task/{pid}/children").read_text().split()]
    total = 0.0
    for one in pids:
        with contextlib.suppress(OSError):
            fields = Path(f"/proc/{one}/stat").read_text().rsplit(")", 1)[1].split()
            total += (int(fields[11]) + int(fields[12])) / ticks
    return total


# --- One hand -------------------------------------------------------------------------------


@dataclass
class HandFigures:
    """One hand's measures (seconds, unless named otherwise)."""

    number: int
    entries: int
    deal: float  # hand start -> change frame built
    wake_to_frame: float  # deadline moved -> change frame built
    # The previous hand's results' end -> change frame built: the deadline moved plus the
    # freeze's lead (algorithm 3 freezes the next hand one beacon period before the results
    # end and deals it at their end: ``freeze_lead``); the wake itself for a waiting table.
    end_to_frame: float
    client_push: list[float]
    server: dict[str, Any] | None
    purchases: list[tuple[str, float, float, str]]
    settle: float = 0.0
    checked: bool = False
    cpu: dict[str, float] = field(default_factory=dict)
    failures: list[str] = field(default_factory=list)

    def confirmed(self) -> list[tuple[str, float, float, str]]:
        return [p for p in self.purchases if p[3] == ""]

    def throughput(self) -> float:
        ok = self.confirmed()
        if not ok:
            return 0.0
        span = max(p[2] for p in ok) - min(p[1] for p in self.purchases)
        return len(ok) / span if span > 0 else 0.0


def collect_hand(results: Any, clients: int, hand: int, timeout: float) -> tuple[list[Any], list[Any], float]:
    """Every client process's report of ``hand``: (arrivals, purchases, client CPU s)."""
    arrivals: list[Any] = []
    purchases: list[Any] = []
    cpu = 0.0
    got = 0
    deadline = time.monotonic() + timeout
    while got < clients:
        try:
            report = results.get(timeout=max(1.0, deadline - time.monotonic()))
        except queue.Empty:
            raise RuntimeError(
                f"hand {hand}: {got} of {clients} client processes reported in {timeout:.0f} s"
            ) from None
        if report[0] == "error":
            raise RuntimeError(f"a client process failed: {report[1]}")
        if report[0] != "hand" or report[1] != hand:
            continue
        arrivals += report[2]
        purchases += report[3]
        cpu += report[4]
        got += 1
    return arrivals, purchases, cpu


def play_hand(
    number: int,
    table_id: int,
    results: Any,
    clients: int,
    logs: list[Path],
    cpu_of: dict[str, Any],
) -> HandFigures:
    """Wake the table (its deadline to now), wait for the change frame at every socket and
    the socket purchases' answers, then end the change phase and wait for the settlement."""
    from django.db import transaction
    from django.utils import timezone

    from tables.models import Hand, HandStatus, Table, TablePhase
    from tables.services import beacon
    from tables.widerpoker.services.freezing import freeze_lead

    cpu_before = {name: read() for name, read in cpu_of.items()}
    previous = Hand.objects.filter(table_id=table_id).order_by("-number").values_list("number", flat=True).first()
    table = Table.objects.select_related("widerpoker").get(pk=table_id)
    # The deadline moved to now is the one the settlement set one lead before the results'
    # end (lifecycle._show_results): the results end one lead later, when the hand is dealt.
    lead = freeze_lead(table).total_seconds() if table.phase == TablePhase.RESULTS else 0.0
    woken = time.time()
    Table.objects.filter(pk=table_id).update(phase_deadline=timezone.now())
    arrivals, purchases, client_cpu = collect_hand(results, clients, number, HAND_TIMEOUT + 120)
    hand = Hand.objects.filter(table_id=table_id).order_by("-number").first()
    figures_failures: list[str] = []
    if hand is None or hand.number == previous:
        raise RuntimeError(f"hand {number}: the clock dealt no new hand")
    built = min(server_time for _, server_time, _ in arrivals)
    versions = {version for _, _, version in arrivals}
    if len(versions) != 1:
        figures_failures.append(f"change frames of several versions {sorted(versions)}")
    figures = HandFigures(
        number=hand.number,
        entries=hand.entry_count,
        deal=built - hand.started_at.timestamp(),
        wake_to_frame=built - woken,
        end_to_frame=built - (woken + lead),
        client_push=sorted(received - server_time for received, server_time, _ in arrivals),
        server=None,
        purchases=purchases,
        failures=figures_failures,
    )
    still_open = timezone.now() < Hand.objects.get(pk=hand.pk).change_deadline
    if not still_open:
        figures.failures.append("the change phase ran out before the purchases were answered")
    settling = time.time()
    with transaction.atomic():
        # The hand settles once its beacon round is out (algorithm 2): the round after the
        # new deadline, as the deal would have chosen (docs/provably-fair.md).
        moved = timezone.now()
        if (
            Hand.objects.filter(pk=hand.pk, status=HandStatus.CHANGE).update(
                change_deadline=moved, redeal_deadline=moved, beacon_round=beacon.round_after(moved)
            )
            == 1
        ):
            Table.objects.filter(pk=table_id).update(phase_deadline=moved)
    deadline = time.monotonic() + 600
    while Table.objects.get(pk=table_id).phase != TablePhase.RESULTS and time.monotonic() < deadline:
        time.sleep(0.05)
    figures.settle = time.time() - settling
    figures.server = server_fanout(logs, table_id, versions.pop() if len(versions) == 1 else -1)
    figures.cpu = {name: read() - cpu_before[name] for name, read in cpu_of.items()}
    figures.cpu["clients"] = client_cpu
    check_hand(hand.pk, figures)
    return figures


def check_hand(hand_id: int, figures: HandFigures) -> None:
    """Every confirmed purchase is in the settled hand and in what its entries paid."""
    from django.db.models import Sum

    from tables.models import Entry, Hand, HandStatus

    hand = Hand.objects.get(pk=hand_id)
    if hand.status != HandStatus.SETTLED:
        figures.failures.append(f"not settled: {hand.status} ({hand.cancel_reason})")
        return
    ok = figures.confirmed()
    draws = sum(1 for p in ok if p[0] == "buy_draw")
    redeals = sum(1 for p in ok if p[0] == "redeal")
    entries = Entry.objects.filter(hand=hand)
    totals = entries.aggregate(paid=Sum("paid_minor"), draws=Sum("draws_bought"))
    stored_draws = (totals["draws"] or 0) - hand.entry_count
    expected = ANTE * hand.entry_count + DRAW_PRICE * draws + REDEAL_PRICE * redeals
    if stored_draws != draws or hand.redeal_count != redeals or totals["paid"] != expected:
        figures.failures.append(
            f"purchases: confirmed {draws} draws / {redeals} redeals, settled {stored_draws} draws / "
            f"{hand.redeal_count} redeals; paid {totals['paid']} vs {expected}"
        )
    else:
        figures.checked = True


# --- Report -----------------------------------------------------------------------------------


def seconds(values: list[float], q: float) -> str:
    return f"{pct(values, q):.2f}" if values else "-"


def ms(values: list[float], q: float) -> str:
    return f"{pct(values, q) * 1000:.0f}" if values else "-"


def print_hands(hands: list[HandFigures]) -> None:
    print(
        "| hand | entries | deal (start / results' end / wake -> frame) | push at the clients p50 / p95 / p99 / max | "
        "push at the servers p50 / p95 / p99 / max (flushed; privates) | purchases confirmed / sent, per s | "
        "confirmation p50 / p95 / p99 ms | settle | CPU s: daphnes / nginx / clients | checked |"
    )
    print("|---|---:|---|---|---|---|---|---:|---|---|")
    for h in hands:
        server = h.server
        server_text = (
            f"{server['p50']:.2f} / {server['p95']:.2f} / {server['p99']:.2f} / {server['max']:.2f} "
            f"({server['flushed']:.2f}; {server['private'] or 0:.2f})"
            if server
            else "-"
        )
        latencies = sorted(p[2] - p[1] for p in h.confirmed())
        print(
            f"| {h.number} | {h.entries:,} | {h.deal:.2f} / {h.end_to_frame:.2f} / {h.wake_to_frame:.2f} s | "
            f"{seconds(h.client_push, 0.5)} / {seconds(h.client_push, 0.95)} / {seconds(h.client_push, 0.99)} / "
            f"{seconds(h.client_push, 1.0)} s | {server_text} | {len(h.confirmed()):,} / {len(h.purchases):,}, "
            f"{h.throughput():.0f}/s | {ms(latencies, 0.5)} / {ms(latencies, 0.95)} / {ms(latencies, 0.99)} | "
            f"{h.settle:.2f} s | {h.cpu.get('daphnes', 0):.1f} / {h.cpu.get('nginx', 0):.1f} / "
            f"{h.cpu.get('clients', 0):.1f} | {'ok' if h.checked and not h.failures else 'FAILED'} |"
        )


def print_summary(hands: list[HandFigures], books_ok: bool) -> None:
    later = hands[1:] or hands  # the first deal creates the players' sessions: reported apart
    push = sorted(v for h in hands for v in h.client_push)
    server_p95 = [h.server["p95"] for h in hands if h.server]
    latencies = sorted(p[2] - p[1] for h in hands for p in h.confirmed())
    refused: dict[str, int] = {}
    for h in hands:
        for p in h.purchases:
            if p[3]:
                refused[p[3]] = refused.get(p[3], 0) + 1
    print("\n| over the hands | measured |")
    print("|---|---|")
    print(f"| deal, first hand | {hands[0].deal:.2f} s (wake -> frame {hands[0].wake_to_frame:.2f} s) |")
    if len(hands) > 1:
        deals = sorted(h.end_to_frame for h in later)
        print(
            f"| deal, next hands (previous results' end -> change frame built), median / max | "
            f"{statistics.median(deals):.2f} / {deals[-1]:.2f} s |"
        )
    print(
        f"| push at the clients, all hands' sockets ({len(push):,}) p50 / p95 / p99 / max | "
        f"{seconds(push, 0.5)} / {seconds(push, 0.95)} / {seconds(push, 0.99)} / {seconds(push, 1.0)} s |"
    )
    if server_p95:
        print(
            f"| push at the servers, p95 per hand: median / max | "
            f"{statistics.median(server_p95):.2f} / {max(server_p95):.2f} s |"
        )
    rates = [h.throughput() for h in hands if h.purchases]
    if rates:
        print(
            f"| socket purchases: confirmed per second per hand, median / max; confirmation p50 / p95 / p99 | "
            f"{statistics.median(rates):.0f} / {max(rates):.0f}/s; {ms(latencies, 0.5)} / {ms(latencies, 0.95)} / "
            f"{ms(latencies, 0.99)} ms |"
        )
    print(f"| refused purchases (by code) | {refused or 'none'} |")
    settles = sorted(h.settle for h in hands)
    print(f"| settle (deadline -> results committed, beacon round and a clock tick included), median / max | "
          f"{statistics.median(settles):.2f} / {settles[-1]:.2f} s |")  # fmt: skip
    cpu = {k: sum(h.cpu.get(k, 0.0) for h in hands) for k in ("daphnes", "nginx", "clock", "clients")}
    print(
        f"| CPU over the hands: daphnes / nginx / clock (Celery worker + beat) / clients | {cpu['daphnes']:.1f} / "
        f"{cpu['nginx']:.1f} / {cpu['clock']:.1f} / {cpu['clients']:.1f} s |"
    )
    checked = all(h.checked and not h.failures for h in hands)
    print(
        f"| books check; every confirmed purchase in its settlement | {'ok' if books_ok else 'FAILED'}; "
        f"{'ok' if checked else 'FAILED'} |"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("players", type=int, nargs="?", default=10_000)
    parser.add_argument("--sockets", type=int, default=10_000, help="real game sockets (the rest are simulated)")
    parser.add_argument("--purchases", type=int, default=2000, help="socket purchase frames a hand")
    parser.add_argument("--hands", type=int, default=10, help="consecutive hands")
    parser.add_argument("--processes", type=int, default=2, help="daphne processes")
    parser.add_argument("--nginx", type=int, default=0, help="nginx worker processes in front (0: direct)")
    parser.add_argument("--change-seconds", type=int, default=600, help="the change phase (the harness ends it)")
    parser.add_argument(
        "--clock",
        choices=("beat", "in-process"),
        default="beat",
        help="the table clock in a Celery worker + beat (production) or in the first daphne",
    )
    args = parser.parse_args()
    raise_fd_limit()
    database_url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/bench_massive")
    sockets = min(args.sockets, args.players)

    workdir = Path(tempfile.mkdtemp(prefix="massive-"))
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url,
        "POKER_BEACON_ALLOW_LOCAL": "1",  # benchmarks run the local beacon on PostgreSQL (docs/deployment.md)
        "REDIS_URL": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/9"),
        "POKER_REDIS_PREFIX": f"massive{os.getpid()}",
        "DJANGO_SECRET_KEY": "bench-only-key-never-used-in-production-0123456789abcdef",
        "DJANGO_HTTPS": "off",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "POKER_API_ADDRESS_RATE": "1000000/min",
        "POKER_API_USER_RATE": "1000000/min",
        "POKER_API_ACTION_RATE": "1000000/min",
        "POKER_PRESENCE_TIMEOUT_SECONDS": "3600",
        "DB_POOL_MAX_SIZE": "20",
        "LOG_LEVEL": "info",  # the hubs' fanout-report lines, for every table frame:
        "POKER_FANOUT_REPORT_MIN_SOCKETS": "1",
        "TABLE_CLOCK": "off",
    }
    os.environ.clear()
    os.environ.update(env)
    recreate_database(database_url)

    started = time.perf_counter()
    table_id, _user_ids, _tokens, session_keys = prepare(args.players, sockets, args.change_seconds)
    print(f"prepared {args.players:,} players ({sockets:,} with sockets) in {time.perf_counter() - started:.1f} s")

    from django.utils import timezone

    from tables.models import Seat
    from wallet.selectors import check_books

    servers: list[subprocess.Popen[bytes]] = []
    balancers: list[subprocess.Popen[bytes]] = []
    failures: list[str] = []
    hands: list[HandFigures] = []
    clients: list[Any] = []
    clock: list[subprocess.Popen[bytes]] = []
    release: Any = None
    try:
        servers, ports = start_servers(env, args.processes, workdir, clock=args.clock)
        if args.clock == "beat":
            clock = start_clock(env, workdir)
        print(f"logs: {workdir}", flush=True)
        if args.nginx:
            balancer, port = start_nginx(workdir, args.nginx, ports, sockets + 100)
            balancers.append(balancer)
            wait_listening(port, balancer)
            targets = [(f"127.0.0.1:{port}", f"http://127.0.0.1:{port}")]
        else:
            targets = [(f"127.0.0.1:{port}", f"http://127.0.0.1:{port}") for port in ports]
        rss_before = [rss_kib(server.pid) for server in servers]
        fds_before = [socket_fds(server.pid) for server in servers]

        opened = time.perf_counter()
        context = multiprocessing.get_context("spawn")
        connected, results, release = context.Semaphore(0), context.Queue(), context.Event()
        indexed = list(enumerate(session_keys))
        shares = [indexed[i::CLIENT_PROCESSES] for i in range(CLIENT_PROCESSES)]
        clients = [
            context.Process(
                target=client_process,
                args=(
                    targets[i % len(targets) :] + targets[: i % len(targets)],
                    table_id,
                    share,
                    sockets,
                    args.purchases,
                    connected,
                    results,
                    release,
                ),
            )
            for i, share in enumerate(shares)
            if share
        ]
        for client in clients:
            client.start()
        retried = 0
        for _ in clients:
            report = results.get(timeout=3600)
            if report[0] != "connected":
                raise RuntimeError(f"a client process failed: {report[1]}")
            retried += report[1]
        print(f"connected {sockets:,} sockets in {time.perf_counter() - opened:.1f} s ({retried} retried)")
        time.sleep(2)
        rss = [rss_kib(server.pid) for server in servers]
        held = sum(socket_fds(server.pid) for server in servers) - sum(fds_before)
        per_socket = (sum(rss) - sum(rss_before)) / max(held, 1)

        logs = [workdir / f"server{i}.log" for i in range(len(servers))]
        cpu_of = {
            "daphnes": lambda: sum(cpu_seconds(s.pid) for s in servers),
            "nginx": lambda: sum(cpu_seconds(b.pid, children=True) for b in balancers),
            "clock": lambda: sum(cpu_seconds(c.pid, children=True) for c in clock),
        }
        for number in range(args.hands):
            # The simulated players stay present (no socket keeps their presence fresh).
            Seat.objects.filter(table_id=table_id).update(last_seen_at=timezone.now())
            figures = play_hand(number, table_id, results, len(clients), logs, cpu_of)
            hands.append(figures)
            failures += [f"hand {figures.number}: {f}" for f in figures.failures]
            if len(figures.client_push) < sockets:
                failures.append(f"hand {figures.number}: {len(figures.client_push)} of {sockets} sockets got the frame")
            print(
                f"hand {figures.number}: deal {figures.deal:.2f} s, push p95 clients "
                f"{seconds(figures.client_push, 0.95)} s / servers "
                f"{figures.server['p95'] if figures.server else float('nan'):.2f} s, "
                f"{len(figures.confirmed())} purchases at {figures.throughput():.0f}/s, settle {figures.settle:.2f} s",
                flush=True,
            )
        books = check_books()
        if not books.ok:
            failures.append("books do not balance")
        load = os.getloadavg()
        front = f"1 nginx ({args.nginx} workers)" if args.nginx else "direct"
        print(
            f"\n## {args.players:,} players, {sockets:,} sockets ({args.players - sockets:,} simulated), "
            f"{args.processes} daphne ({front}), clock {args.clock}, PostgreSQL + Redis, {len(hands)} hands; "
            f"load average {load[0]:.1f} / {load[1]:.1f} / {load[2]:.1f}\n"
        )
        print_hands(hands)
        print_summary(hands, books.ok)
        print(
            "| daphne RSS with sockets open | "
            + ", ".join(f"{value / 1024:.0f} MiB" for value in rss)
            + f"; {per_socket:.1f} KiB per socket ({held:,} sockets) |"
        )
    finally:
        if release is not None:
            release.set()
        for client in clients:
            client.join(timeout=30)
            if client.is_alive():
                client.terminate()
        for server in [*clock, *balancers, *servers]:
            server.terminate()
        for server in [*clock, *balancers, *servers]:
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    if failures:
        print("\nFAILED: " + "; ".join(failures))
        sys.exit(1)


if __name__ == "__main__":
    main()
