"""Purchases in one big hand, over the players' sockets and over REST (issue 23, item 1).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_purchase REDIS_URL=redis://127.0.0.1:6379/3 \\
        .venv/bin/python bench/socket_purchase.py 100000 --sockets 5000 --draws 4 --rate 2000 --rest 3000

What it does, on loopback (PostgreSQL, Redis, ``--processes`` daphne processes, each with
its purchase writer: tables/widerpoker/services/purchases.py):

1. recreates the scratch database (``bench_*``/``massive_*`` only) and makes N funded
   players seated at one fun table (``bench/massive.py``'s set-up);
2. opens ``--sockets`` real game sockets, one player each, from ``--clients`` client
   processes (a minimal raw WebSocket client: the clients share the two cores with the
   servers), then deals the hand in-process (not measured here: ``bench/massive.py``
   measures the deal) and waits ``--settle-pause`` seconds for its frames to be pushed;
3. each socket's player buys ``--draws`` draws (at most the table's 4 beyond the ante's),
   sent open-loop at ``--rate`` purchases a second over all sockets (0: each socket sends
   its next draw as soon as the previous is confirmed, as fast as the server confirms);
   a purchase's latency runs from its frame's send to its ``ack`` (sent after the commit);
4. then ``--rest`` draws over REST by other players (token-authenticated, ``--buyers``
   concurrent keep-alive connections from ``--rest-procs`` client processes of
   bench/rest_client.py, their CPU counted apart; ``--rest-client httpx``: httpx in this
   process, as before s5-rest, its CPU counted too), latency to the 200 answer;
5. settles the hand in-process and checks the books, that every confirmed purchase is in the
   settlement (draws bought and paid), and that no hold was left uncaptured.

Reports purchases/s, latency p50/p95/p99, the servers' and the clients' CPU seconds apart,
and the load average. ``run(...)`` returns the figures (bench/massive.py may call it).
"""

from __future__ import annotations

import argparse
import asyncio
import base64
import contextlib
import json
import multiprocessing
import os
import resource
import secrets
import signal
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.fanout import daphne_command, free_port, pct, raise_fd_limit, recreate_database, wait_listening  # noqa: E402
from bench.rest_client import fire_rest_processes  # noqa: E402

HANDSHAKES_IN_FLIGHT = 16


class PurchaseClient(asyncio.Protocol):
    """One player's socket: an HTTP upgrade, then masked text frames out (zero mask key) and
    the server's frames split; only ``ack`` and ``error`` frames are parsed (their ``ref``
    names the purchase), every ``entry_state`` is counted, not parsed."""

    def __init__(self, request: bytes, ready: asyncio.Future[None], answers: dict[str, tuple[float, str]]) -> None:
        self.request = request
        self.ready = ready
        self.answers = answers
        self.buffer = b""
        self.upgraded = False
        self.transport: asyncio.Transport | None = None
        self.waiters: dict[str, asyncio.Future[None]] = {}
        self.states = 0

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.write(self.request)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.ready.done():
            self.ready.set_exception(ConnectionError(f"closed before the upgrade: {exc}"))
        for waiter in self.waiters.values():
            if not waiter.done():
                waiter.set_exception(ConnectionError("socket closed"))

    def send_text(self, text: str) -> None:
        payload = text.encode()
        assert len(payload) < 126 and self.transport is not None
        self.transport.write(bytes([0x81, 0x80 | len(payload)]) + b"\0\0\0\0" + payload)

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
            if opcode == 0x9 and self.transport is not None:
                self.transport.write(bytes([0x8A, 0x80 | len(payload)]) + b"\0\0\0\0" + payload)
            elif opcode == 0x1 and payload.startswith((b'{"type":"ack"', b'{"type":"error"')):
                received = time.perf_counter()
                frame = json.loads(payload)
                ref = str(frame.get("ref"))
                if ref in self.waiters:
                    self.answers[ref] = (received, frame.get("code", "") if frame["type"] == "error" else "")
                    waiter = self.waiters.pop(ref)
                    if not waiter.done():
                        waiter.set_result(None)
            elif opcode == 0x1 and payload.startswith(b'{"type":"entry_state"'):
                self.states += 1
        self.buffer = buffer

    def buy(self, ref: str) -> asyncio.Future[None]:
        waiter: asyncio.Future[None] = asyncio.get_running_loop().create_future()
        self.waiters[ref] = waiter
        self.send_text(json.dumps({"type": "buy_draw", "ref": ref}, separators=(",", ":")))
        return waiter


async def _clients(
    targets: list[str], table_id: int, cookies: list[str], draws: int, rate: float, connected: Any, go: Any
) -> dict[str, Any]:
    loop = asyncio.get_running_loop()
    answers: dict[str, tuple[float, str]] = {}
    sent: dict[str, float] = {}
    clients: list[PurchaseClient] = []
    in_flight = asyncio.Semaphore(HANDSHAKES_IN_FLIGHT)

    async def open_one(index: int, cookie: str) -> None:
        host = targets[index % len(targets)]
        address, port = host.split(":")
        request = (
            f"GET /ws/tables/{table_id}/ HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {base64.b64encode(secrets.token_bytes(16)).decode()}\r\n"
            f"Sec-WebSocket-Version: 13\r\nOrigin: http://{host}\r\nCookie: sessionid={cookie}\r\n\r\n"
        ).encode()
        async with in_flight:
            for attempt in range(4):
                ready: asyncio.Future[None] = loop.create_future()
                client = PurchaseClient(request, ready, answers)
                transport, _ = await loop.create_connection(lambda: client, address, int(port))  # noqa: B023
                try:
                    await asyncio.wait_for(ready, 120)
                    break
                except (ConnectionError, TimeoutError):
                    transport.close()
                    if attempt == 3:
                        raise
                    await asyncio.sleep(2 ** (attempt + 1))
            clients.append(client)

    await asyncio.gather(*(open_one(i, cookie) for i, cookie in enumerate(cookies)))
    await asyncio.sleep(2)  # the snapshots arrive
    connected.release()
    await loop.run_in_executor(None, go.wait)
    cpu_before = resource.getrusage(resource.RUSAGE_SELF)
    started = time.perf_counter()

    async def closed_loop(number: int, client: PurchaseClient) -> None:
        for draw in range(draws):
            ref = f"{number}.{draw}"
            sent[ref] = time.perf_counter()
            with contextlib.suppress(ConnectionError):
                await asyncio.wait_for(client.buy(ref), 120)

    if rate <= 0:
        await asyncio.gather(*(closed_loop(i, c) for i, c in enumerate(clients)))
    else:
        waiting: list[asyncio.Future[None]] = []
        interval = 1 / rate
        step = 0
        for draw in range(draws):
            for number, client in enumerate(clients):
                due = started + step * interval
                step += 1
                delay = due - time.perf_counter()
                if delay > 0:
                    await asyncio.sleep(delay)
                ref = f"{number}.{draw}"
                sent[ref] = time.perf_counter()
                waiting.append(client.buy(ref))
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.gather(*waiting, return_exceptions=True), 120)
    finished = time.perf_counter()
    cpu_after = resource.getrusage(resource.RUSAGE_SELF)
    results = [(answers[ref][0] - sent[ref], answers[ref][1]) for ref in sent if ref in answers]
    for client in clients:
        if client.transport is not None:
            client.transport.close()
    return {
        "results": results,
        "sent": len(sent),
        "started": started,
        "finished": finished,
        "states": sum(client.states for client in clients),
        "cpu": (cpu_after.ru_utime + cpu_after.ru_stime) - (cpu_before.ru_utime + cpu_before.ru_stime),
    }


def client_process(
    targets: list[str], table_id: int, cookies: list[str], draws: int, rate: float, connected: Any, go: Any, out: Any
) -> None:
    """One client process: open the sockets of ``cookies``, buy when ``go`` is set, report."""
    try:
        raise_fd_limit()
        out.put(("ok", asyncio.run(_clients(targets, table_id, cookies, draws, rate, connected, go))))
    except BaseException as error:
        out.put(("error", repr(error)))


async def fire_rest(
    base_urls: list[str], table_id: int, tokens: list[str], buyers: int
) -> list[tuple[float, int, str]]:
    """One draw per token over REST with ``buyers`` concurrent clients: (seconds, status, code)."""
    import logging

    import httpx

    logging.getLogger("httpx").setLevel(logging.WARNING)
    queue: asyncio.Queue[str] = asyncio.Queue()
    for token in tokens:
        queue.put_nowait(token)
    results: list[tuple[float, int, str]] = []

    async def buyer(index: int) -> None:
        async with httpx.AsyncClient(base_url=base_urls[index % len(base_urls)], timeout=120) as client:
            while not queue.empty():
                token = queue.get_nowait()
                started = time.perf_counter()
                response = await client.post(
                    f"/api/tables/{table_id}/draws/", headers={"Authorization": f"Token {token}"}
                )
                elapsed = time.perf_counter() - started
                code = "" if response.status_code == 200 else str(response.json().get("code", ""))
                results.append((elapsed, response.status_code, code))

    await asyncio.gather(*(buyer(i) for i in range(buyers)))
    return results


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (/proc/<pid>/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def postgres_cpu() -> dict[int, float]:
    """CPU seconds so far of each PostgreSQL backend connected to the bench's database (its
    servers' pools; other databases on the shared box are not counted)."""
    from django.db import connection

    with connection.cursor() as cursor:
        cursor.execute(
            "SELECT pid FROM pg_stat_activity WHERE datname = current_database() AND pid <> pg_backend_pid()"
        )
        pids = [int(row[0]) for row in cursor.fetchall()]
    found: dict[int, float] = {}
    for pid in pids:
        with contextlib.suppress(OSError, IndexError, ValueError):
            found[pid] = cpu_seconds(pid)
    return found


def postgres_delta(before: dict[int, float]) -> float:
    after = postgres_cpu()
    return sum(value - before.get(pid, 0.0) for pid, value in after.items())


PY_SPY_RECORD = ("record", "--rate", "250", "--format", "raw", "--nonblocking", "--gil")


def profile_servers(py_spy: str, phase: str, servers: list[subprocess.Popen[bytes]]) -> list[subprocess.Popen[bytes]]:
    """With ``--py-spy PATH`` (the py-spy executable): sample each server's thread that
    holds the GIL (``--gil``: the Python work, not the waits), into
    ``bench-py-spy-<phase>-<n>.txt`` (collapsed stacks) in the working directory."""
    if not py_spy:
        return []
    return [
        subprocess.Popen(
            [py_spy, *PY_SPY_RECORD, "--pid", str(server.pid), "--output", f"bench-py-spy-{phase}-{index}.txt"],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for index, server in enumerate(servers)
    ]


def stop_profilers(profilers: list[subprocess.Popen[bytes]]) -> None:
    for profiler in profilers:
        profiler.send_signal(signal.SIGINT)
    for profiler in profilers:
        profiler.wait(timeout=60)


def quiet_servers(servers: list[subprocess.Popen[bytes]], limit: float = 120) -> None:
    """Wait (at most ``limit`` seconds) until the servers use less than 5 % of a core."""
    deadline = time.monotonic() + limit
    while time.monotonic() < deadline:
        before = sum(cpu_seconds(server.pid) for server in servers)
        time.sleep(1)
        if sum(cpu_seconds(server.pid) for server in servers) - before < 0.05:
            return


def run(args: argparse.Namespace) -> dict[str, Any]:
    """The whole benchmark (module docstring); returns its figures."""
    raise_fd_limit()
    database_url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/bench_purchase")
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url,
        "POKER_BEACON_ALLOW_LOCAL": "1",
        "POKER_BEACON_PERIOD_SECONDS": "1",
        "REDIS_URL": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/9"),
        "POKER_REDIS_PREFIX": f"sockbuy{os.getpid()}",
        "DJANGO_SECRET_KEY": "bench-only-key-never-used-in-production-0123456789abcdef",
        "DJANGO_HTTPS": "off",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "POKER_API_ADDRESS_RATE": "1000000/min",
        "POKER_API_USER_RATE": "1000000/min",
        "POKER_API_ACTION_RATE": "1000000/min",
        "POKER_PRESENCE_TIMEOUT_SECONDS": "3600",
        "POKER_PURCHASE_WRITER": args.writer,
        "POKER_PURCHASE_BATCH_MS": str(args.batch_ms),
        "DB_POOL_MAX_SIZE": "20",
        "TABLE_CLOCK": "off",
    }
    os.environ.clear()
    os.environ.update(env)
    recreate_database(database_url)
    import django

    django.setup()
    from django.db import transaction
    from django.utils import timezone

    from bench.massive import DRAW_PRICE, prepare
    from tables.clock import advance_table
    from tables.models import Entry, Hand, HandStatus, Table, TablePhase
    from tables.services import beacon
    from tables.widerpoker.services.play import buy_draw
    from wallet.models import Account, FundsHold
    from wallet.selectors import check_books

    sockets = min(args.sockets, args.players)
    started = time.perf_counter()
    table_id, _user_ids, tokens, cookies = prepare(args.players, sockets, args.change_seconds)
    print(f"prepared {args.players:,} players in {time.perf_counter() - started:.1f} s", flush=True)

    workdir = Path(tempfile.mkdtemp(prefix="sockbuy-"))
    servers: list[subprocess.Popen[bytes]] = []
    ports: list[int] = []
    failures: list[str] = []
    figures: dict[str, Any] = {"players": args.players, "sockets": sockets}
    clients: list[Any] = []
    try:
        for index in range(args.processes):
            port = free_port()
            servers.append(
                subprocess.Popen(
                    daphne_command(port),
                    cwd=ROOT,
                    env=env,
                    stdout=subprocess.DEVNULL,
                    stderr=(workdir / f"server{index}.log").open("w"),
                )
            )
            ports.append(port)
        for port, server in zip(ports, servers, strict=True):
            wait_listening(port, server)
        targets = [f"127.0.0.1:{port}" for port in ports]
        context = multiprocessing.get_context("spawn")
        connected, go, out = context.Semaphore(0), context.Event(), context.Queue()
        shares = [cookies[i :: args.clients] for i in range(args.clients)]
        clients = [
            context.Process(
                target=client_process,
                args=(targets, table_id, share, args.draws, args.rate / args.clients, connected, go, out),
            )
            for share in shares
            if share
        ]
        for client in clients:
            client.start()
        opened = time.perf_counter()
        for _ in clients:
            if not connected.acquire(timeout=1800):
                raise RuntimeError("the clients did not connect")
        print(f"connected {sockets:,} sockets in {time.perf_counter() - opened:.1f} s", flush=True)
        # The deal once the players are connected (its change frame and their private
        # frames are pushed to them), then a pause for that push to finish.
        started = time.perf_counter()
        Table.objects.filter(pk=table_id).update(phase_deadline=timezone.now())
        # Algorithm 3 freezes the players first and deals at the next beacon round: step
        # the table until its change phase.
        dealing = time.monotonic() + 120
        while Table.objects.get(pk=table_id).phase != TablePhase.CHANGE:
            if time.monotonic() > dealing:
                raise RuntimeError("the table did not reach its change phase")
            advance_table(table_id=table_id, now=timezone.now())
            time.sleep(0.1)
        hand = Hand.objects.get(table_id=table_id)
        print(f"dealt {hand.entry_count:,} entries in {time.perf_counter() - started:.1f} s", flush=True)
        time.sleep(args.settle_pause)

        load_before = os.getloadavg()
        server_cpu = [cpu_seconds(server.pid) for server in servers]
        pg_before = postgres_cpu()
        profilers = profile_servers(args.py_spy, "socket", servers)
        go.set()
        reports = [out.get(timeout=1800) for _ in clients]
        stop_profilers(profilers)
        server_cpu = [cpu_seconds(server.pid) - before for server, before in zip(servers, server_cpu, strict=True)]
        database_cpu = postgres_delta(pg_before)
        load_after = os.getloadavg()
        for status, payload in reports:
            if status != "ok":
                raise RuntimeError(f"a client process failed: {payload}")
        results = [r for _, payload in reports for r in payload["results"]]
        sent = sum(payload["sent"] for _, payload in reports)
        span = max(p["finished"] for _, p in reports) - min(p["started"] for _, p in reports)
        confirmed = sorted(latency for latency, code in results if not code)
        refused: dict[str, int] = {}
        for _, code in results:
            if code:
                refused[code] = refused.get(code, 0) + 1
        socket_draws = len(confirmed)
        figures["socket"] = {
            "sent": sent,
            "confirmed": len(confirmed),
            "unanswered": sent - len(results),
            "refused": refused,
            "seconds": span,
            "per_second": len(confirmed) / span,
            "p50": pct(confirmed, 0.5) if confirmed else None,
            "p95": pct(confirmed, 0.95) if confirmed else None,
            "p99": pct(confirmed, 0.99) if confirmed else None,
            "server_cpu": server_cpu,
            "postgres_cpu": database_cpu,
            "client_cpu": sum(p["cpu"] for _, p in reports),
            "load": (load_before, load_after),
        }
        print(f"sockets: {figures['socket']}", flush=True)

        rest_draws = 0
        if args.rest:
            # The sockets closed by their clients are recorded by the servers (presence,
            # play time): let that finish, so that the REST figures count REST alone.
            quiet_servers(servers)
            buyers_tokens = tokens[sockets : sockets + args.rest]
            load_before = os.getloadavg()
            server_cpu = [cpu_seconds(server.pid) for server in servers]
            pg_before = postgres_cpu()
            profilers = profile_servers(args.py_spy, "rest", servers)
            if args.rest_client == "lean":
                outcomes, rest_client_cpu, span = fire_rest_processes(
                    targets, table_id, buyers_tokens, args.buyers, args.rest_procs
                )
            else:  # httpx in this process (the figures before s5-rest)
                fired, before_cpu = time.perf_counter(), resource.getrusage(resource.RUSAGE_SELF)
                outcomes = asyncio.run(
                    fire_rest([f"http://{t}" for t in targets], table_id, buyers_tokens, args.buyers)
                )
                span, after_cpu = time.perf_counter() - fired, resource.getrusage(resource.RUSAGE_SELF)
                rest_client_cpu = after_cpu.ru_utime + after_cpu.ru_stime - before_cpu.ru_utime - before_cpu.ru_stime
            stop_profilers(profilers)
            server_cpu = [cpu_seconds(server.pid) - before for server, before in zip(servers, server_cpu, strict=True)]
            database_cpu = postgres_delta(pg_before)
            ok = sorted(seconds for seconds, status, _ in outcomes if status == 200)
            codes: dict[str, int] = {}
            for _, status, code in outcomes:
                if status != 200:
                    codes[code or str(status)] = codes.get(code or str(status), 0) + 1
            rest_draws = len(ok)
            figures["rest"] = {
                "sent": len(outcomes),
                "confirmed": len(ok),
                "refused": codes,
                "seconds": span,
                "per_second": len(ok) / span,
                "p50": pct(ok, 0.5) if ok else None,
                "p95": pct(ok, 0.95) if ok else None,
                "p99": pct(ok, 0.99) if ok else None,
                "server_cpu": server_cpu,
                "postgres_cpu": database_cpu,
                "client_cpu": rest_client_cpu,
                "load": (load_before, os.getloadavg()),
            }
            print(f"rest: {figures['rest']}", flush=True)
            if any(status >= 500 for _, status, _ in outcomes):
                failures.append("REST server errors")

        inprocess_draws = 0
        if args.inprocess:
            # The same run's baseline: one transaction per purchase (``play.buy_draw``) and the
            # buyer's new private state read for the answer (what a REST purchase did), against
            # the writer's batches (``purchase_batch.commit_batch``, whose outcomes carry that state),
            # other players, this process (no panel cached for either).
            from tables.widerpoker.selectors import get_entry_state
            from tables.widerpoker.services import purchases
            from tables.widerpoker.services.purchase_batch import commit_batch

            first = sockets + args.rest
            users = _user_ids[first : first + 2 * args.inprocess]
            single, batched = users[: args.inprocess], users[args.inprocess :]
            timed = time.perf_counter()
            for user_id in single:
                buy_draw(table_id=table_id, user_id=user_id, now=timezone.now())
                get_entry_state(table_id=table_id, user_id=user_id)
            one_each = (time.perf_counter() - timed) / len(single)
            timed = time.perf_counter()
            done = 0
            for start in range(0, len(batched), args.batch_size):
                orders = [
                    purchases.Order(kind=purchases.DRAW, table_id=table_id, user_id=user_id, now=timezone.now())
                    for user_id in batched[start : start + args.batch_size]
                ]
                # Each answer's frame built, as a waiting socket or request does.
                done += sum(1 for outcome in commit_batch(orders) if outcome.frame is not None)
            in_batches = (time.perf_counter() - timed) / len(batched)
            inprocess_draws = len(single) + done
            figures["inprocess"] = {
                "one_each_ms": one_each * 1000,
                "batched_ms": in_batches * 1000,
                "batch": args.batch_size,
                "ratio": one_each / in_batches,
                "load": os.getloadavg(),
            }
            print(f"in-process: {figures['inprocess']}", flush=True)

        # Settle in-process: the deadline moved to now, its beacon round awaited.
        woken = time.perf_counter()
        with transaction.atomic():
            moved = timezone.now()
            Hand.objects.filter(pk=hand.pk, status=HandStatus.CHANGE).update(
                change_deadline=moved, redeal_deadline=moved, beacon_round=beacon.round_after(moved)
            )
            Table.objects.filter(pk=table_id).update(phase_deadline=moved)
        deadline = time.monotonic() + 600
        while Table.objects.get(pk=table_id).phase != TablePhase.RESULTS and time.monotonic() < deadline:
            advance_table(table_id=table_id, now=timezone.now())
            time.sleep(0.2)
        figures["settle_seconds"] = time.perf_counter() - woken
        hand.refresh_from_db()
        entries = Entry.objects.filter(hand=hand)
        stored = sum(entries.values_list("draws_bought", flat=True)) - hand.entry_count
        paid = sum(entries.values_list("paid_minor", flat=True))
        expected_draws = socket_draws + rest_draws + inprocess_draws
        if hand.status != HandStatus.SETTLED:
            failures.append(f"the hand was not settled: {hand.status}")
        if stored != expected_draws or paid != hand.entry_count * 100 + DRAW_PRICE * expected_draws:
            failures.append(f"confirmed {expected_draws} draws, the settlement has {stored} (paid {paid})")
        if (
            FundsHold.objects.filter(transfer__isnull=True).exists()
            or Account.objects.filter(held_minor__gt=0).exists()
        ):
            failures.append("holds left uncaptured")
        books = check_books()
        if not books.ok:
            failures.append("books do not balance")
        figures["books"] = books.ok
        figures["failures"] = failures
    finally:
        for client in clients:
            client.join(timeout=30)
            if client.is_alive():
                client.terminate()
        for server in servers:
            server.terminate()
        for server in servers:
            try:
                server.wait(timeout=15)
            except subprocess.TimeoutExpired:
                server.kill()
                server.wait()
    return figures


def report(args: argparse.Namespace, figures: dict[str, Any]) -> None:
    def ms(value: float | None) -> str:
        return "-" if value is None else f"{value * 1000:.0f} ms"

    print(
        f"\n## Purchases in one hand of {figures['players']:,} entries; {args.processes} daphne, "
        f"writer {args.writer} ({args.batch_ms} ms)\n"
    )
    print(
        "| path | purchases | confirmed/s | p50 | p95 | p99 | CPU s: daphne / PostgreSQL / clients "
        "| load (1 min) before -> after |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for name, label in (
        ("socket", f"sockets ({figures['sockets']:,} players, rate {args.rate or 'max'})"),
        ("rest", f"REST ({args.buyers} clients, {args.rest_client})"),
    ):
        row = figures.get(name)
        if row is None:
            continue
        cpu = f"{sum(row['server_cpu']):.1f} / {row['postgres_cpu']:.1f} / {row.get('client_cpu', 0):.1f}"
        load = f"{row['load'][0][0]:.1f} -> {row['load'][1][0]:.1f}"
        print(
            f"| {label} | {row['confirmed']:,} of {row['sent']:,} in {row['seconds']:.1f} s "
            f"(refused {row['refused'] or 'none'}) | {row['per_second']:.0f} | {ms(row['p50'])} | "
            f"{ms(row['p95'])} | {ms(row['p99'])} | {cpu} | {load} |"
        )
    row = figures.get("inprocess")
    if row is not None:
        print(
            f"\nin-process, one thread: {row['one_each_ms']:.2f} ms per draw "
            "(one transaction and a read of the state each), "
            f"{row['batched_ms']:.3f} ms per draw in batches of {row['batch']} ({row['ratio']:.1f}x); "
            f"load {row['load'][0]:.1f}"
        )
    print(
        f"\nsettle {figures.get('settle_seconds', 0):.2f} s; books {'ok' if figures.get('books') else 'FAILED'}; "
        f"every confirmed purchase settled: {'yes' if not figures.get('failures') else figures['failures']}"
    )


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("players", type=int, nargs="?", default=100_000)
    parser.add_argument("--sockets", type=int, default=5000, help="players buying over a real socket")
    parser.add_argument("--draws", type=int, default=4, help="draws each socket player buys (at most 4)")
    parser.add_argument("--rate", type=float, default=2000, help="purchases/s over all sockets (0: closed loop)")
    parser.add_argument("--clients", type=int, default=2, help="client processes")
    parser.add_argument("--processes", type=int, default=2, help="daphne processes")
    parser.add_argument("--rest", type=int, default=3000, help="REST draws by other players (0: none)")
    parser.add_argument("--buyers", type=int, default=64, help="concurrent HTTP clients")
    parser.add_argument(
        "--rest-client",
        choices=("lean", "httpx"),
        default="lean",
        help="lean: keep-alive raw HTTP from --rest-procs processes (bench/rest_client.py); httpx: in this process",
    )
    parser.add_argument("--rest-procs", type=int, default=2, help="REST client processes (--rest-client lean)")
    parser.add_argument("--writer", choices=("batch", "inline"), default="batch")
    parser.add_argument("--batch-ms", type=float, default=5.0)
    parser.add_argument("--change-seconds", type=int, default=600)
    parser.add_argument("--inprocess", type=int, default=0, help="draws bought one per transaction, then in batches")
    parser.add_argument("--batch-size", type=int, default=200, help="purchases per batch of --inprocess")
    parser.add_argument("--settle-pause", type=float, default=20, help="seconds between the deal and the purchases")
    parser.add_argument("--py-spy", default="", help="path of py-spy: profile the servers (bench-py-spy-*.txt)")
    args = parser.parse_args()
    figures = run(args)
    report(args, figures)
    if figures.get("failures"):
        print("\nFAILED: " + "; ".join(figures["failures"]))
        sys.exit(1)


if __name__ == "__main__":
    main()
