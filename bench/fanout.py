"""Benchmark: how fast a phase change reaches N WebSocket clients on loopback.

Starts one or more daphne processes with the table clock (embedded default: SQLite and the
in-memory layer; with ``--redis``, the Redis channel layer and the per-process hub's Redis
subscription), optionally behind haproxy (Debian's package), logs N players in, opens N
game sockets to one table from several client processes, wakes the table so the clock deals
a hand, and measures for each client the delay from the broadcast (the frame's
``server_time``) and from the deal to the arrival of the ``table_state`` frame of the change
phase. It also reports each daphne's resident memory before and after the sockets opened,
per socket.

    .venv/bin/python bench/fanout.py 500
    .venv/bin/python bench/fanout.py 500 --redis                     # needs a local Redis
    .venv/bin/python bench/fanout.py 10000 --redis --processes 2 --haproxy 2
    .venv/bin/python bench/fanout.py 10000 --redis --processes 2 --nginx 2 \
        --database-url postgres://postgres@127.0.0.1:5432/massive_fanout   # one nginx, 2 workers

With ``--redis`` the table clock runs in a Celery worker and Celery beat
(``TABLE_CLOCK=beat``, ``start_clock``), as in production, and every daphne only serves
sockets and receives table frames through Redis; without it (or with ``--clock in-process``)
the first daphne runs the clock. Each
haproxy holds two file descriptors per socket and this workplace allows 20,000 a process, so
10,000 sockets need two balancers (``--haproxy 2``: clients alternate between them, as DNS
round-robin over two balancer nodes would); one nginx with ``--nginx 2`` worker processes does
it alone (each worker has its own descriptors). The balancer's configuration is written to
the run's temporary directory. The clients are raw asyncio WebSocket clients (``RawClient``)
that keep their sockets open until the run ends. Client, servers, balancers and the database
share the machine's two cores: figures are pessimistic.
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
import resource
import secrets
import shutil
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))
CLIENT_PROCESSES = 4
RETRIES = 3  # handshakes refused under load (daphne's 5 s connect timeout) are tried again
HANDSHAKES_IN_FLIGHT = 64  # per client process: players arrive together (the hub batches their reads)


def recreate_database(url: str) -> None:
    """Drop and create the scratch database ``url`` names (``bench_*`` or ``massive_*`` only:
    this must never be pointed at a database that matters)."""
    import psycopg

    name = url.rsplit("/", 1)[1]
    if not name.startswith(("bench_", "massive_")):
        raise SystemExit(f"refusing to recreate {name!r}: the database must be named bench_* or massive_*")
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as connection:
        connection.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        connection.execute(f'CREATE DATABASE "{name}"')


def daphne_command(port: int) -> list[str]:
    """daphne as in the Procfile (listen backlog 1024), except that a WebSocket handshake may
    take 30 s instead of 5: 10,000 players connecting at once to a 2-core box shared with
    the clients and the database queue longer than that, and the benchmark measures the
    broadcast, not the connect storm."""
    return [
        sys.executable,
        "-m",
        "daphne",
        "--websocket_connect_timeout",
        "30",
        "-e",
        f"tcp:port={port}:interface=127.0.0.1:backlog=1024",
        "config.asgi:application",
    ]


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def prepare(n: int) -> tuple[int, list[str]]:
    """Create the table, N funded, seated players and their sessions; return ids and cookies."""
    import django

    django.setup()
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.models import User
    from django.contrib.sessions.backends.db import SessionStore
    from django.contrib.sessions.models import Session
    from django.core.management import call_command
    from django.utils import timezone

    from tables.models import Seat
    from tables.widerpoker.services.create import create_table
    from wallet import services as wallet_services
    from wallet.models import AccountKind, Currency, TransferKind

    call_command("migrate", verbosity=0)
    now = timezone.now()
    table = create_table(
        name=f"Fanout {n} {time.time():.0f}",
        mode="fun",
        currency="FUN",
        ante_minor=100,
        draw_price_bps=5000,
        redeal_price_minor=80,
        change_seconds=60,
    )
    users = User.objects.bulk_create([User(username=f"f{table.pk}_{i}", password="!") for i in range(n)])
    cashier = wallet_services.ensure_house_account(kind=AccountKind.CASHIER, currency=Currency.FUN)
    accounts = wallet_services.ensure_player_accounts(user_ids=[u.pk for u in users], currency=Currency.FUN).values()
    wallet_services.post_transfer(
        reference=f"fanout-{table.pk}",
        kind=TransferKind.FUN_GRANT,
        currency=Currency.FUN,
        legs=[wallet_services.Leg(a, 1000) for a in accounts] + [wallet_services.Leg(cashier.pk, -1000 * n)],
    )
    Seat.objects.bulk_create([Seat(table=table, user=u, joined_at=now, last_seen_at=now) for u in users])
    sessions = []
    for user in users:
        store = SessionStore()
        data = {
            SESSION_KEY: str(user.pk),
            BACKEND_SESSION_KEY: "django.contrib.auth.backends.ModelBackend",
            HASH_SESSION_KEY: user.get_session_auth_hash(),
        }
        sessions.append(
            Session(
                session_key=secrets.token_hex(16), session_data=store.encode(data), expire_date=store.get_expiry_date()
            )
        )
    Session.objects.bulk_create(sessions, batch_size=2000)
    return table.pk, [session.session_key for session in sessions]


class RawClient(asyncio.Protocol):
    """A minimal WebSocket client for the benchmark: one HTTP upgrade, then it only reads.

    The ``websockets`` library costs tens of microseconds of client CPU per frame, and the
    clients share the box's two cores with the servers: with 10,000 sockets the harness, not
    the server, would set the latency. This one splits the server's (unmasked) frames, answers
    pings, and parses only the frame it waits for: the ``table_state`` of the change phase.
    """

    def __init__(self, request: bytes, arrivals: list[tuple[float, str, int]], ready: asyncio.Future[None]) -> None:
        self.request = request
        self.arrivals = arrivals
        self.ready = ready
        self.buffer = b""
        self.upgraded = False
        self.done = False
        self.transport: asyncio.Transport | None = None

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport
        transport.write(self.request)

    def connection_lost(self, exc: Exception | None) -> None:
        if not self.ready.done():
            self.ready.set_exception(ConnectionError(f"closed before the upgrade: {exc}"))

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
            elif opcode == 0x1 and not self.done and b'"table_state"' in payload:
                received = time.time()
                frame = json.loads(payload)
                if frame.get("type") == "table_state" and frame.get("phase") == "change":
                    self.arrivals.append((received, frame["server_time"], frame["version"]))
                    self.done = True
        self.buffer = buffer


async def _client_group(
    targets: list[tuple[str, str]], table_id: int, cookies: list[str], connected: Any, results: Any, release: Any
) -> None:
    arrivals: list[tuple[float, str, int]] = []
    loop = asyncio.get_running_loop()
    transports: list[asyncio.BaseTransport] = []
    retried = 0
    in_flight = asyncio.Semaphore(HANDSHAKES_IN_FLIGHT)

    async def open_one(i: int, cookie: str) -> None:
        nonlocal retried
        host, origin = targets[i % len(targets)]
        address, port = host.split(":")
        request = (
            f"GET /ws/tables/{table_id}/ HTTP/1.1\r\nHost: {host}\r\nUpgrade: websocket\r\n"
            f"Connection: Upgrade\r\nSec-WebSocket-Key: {base64.b64encode(secrets.token_bytes(16)).decode()}\r\n"
            f"Sec-WebSocket-Version: 13\r\nOrigin: {origin}\r\nCookie: sessionid={cookie}\r\n\r\n"
        ).encode()
        async with in_flight:
            for attempt in range(RETRIES + 1):
                ready: asyncio.Future[None] = loop.create_future()
                transport, _ = await loop.create_connection(
                    lambda request=request, ready=ready: RawClient(request, arrivals, ready),  # type: ignore[misc]
                    address,
                    int(port),
                )
                try:
                    await asyncio.wait_for(ready, 300)
                    break
                except (ConnectionError, TimeoutError):  # refused under load: a player would reconnect
                    transport.close()
                    if attempt == RETRIES:
                        raise
                    retried += 1
                    await asyncio.sleep(2 ** (attempt + 1))
            transports.append(transport)

    await asyncio.gather(*(open_one(i, cookie) for i, cookie in enumerate(cookies)))
    connected.release()
    cpu = time.process_time()
    deadline = loop.time() + 300
    while len(arrivals) < len(cookies) and loop.time() < deadline:
        await asyncio.sleep(0.05)
    results.put(("ok", (list(arrivals), retried, time.process_time() - cpu)))
    # Players stay connected: closing at once would load the servers with disconnects
    # while other sockets still wait for the frame.
    while not release.is_set():
        await asyncio.sleep(0.1)
    for transport in transports:
        transport.close()
    await asyncio.sleep(0.5)


def client_process(
    targets: list[tuple[str, str]], table_id: int, cookies: list[str], connected: Any, results: Any, release: Any
) -> None:
    """One client process: open its share of the sockets, report the change frame arrivals
    (``results``) once every socket has its frame or 300 s passed, close the sockets when
    ``release`` (a multiprocessing event) is set."""
    try:
        raise_fd_limit()
        asyncio.run(_client_group(targets, table_id, cookies, connected, results, release))
    except BaseException as error:  # report, never hang the parent
        results.put(("error", repr(error)))


def raise_fd_limit() -> int:
    """Raise this process's soft limit of open files to its hard limit; return it."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    if soft < hard:
        resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    return hard


def socket_fds(pid: int) -> int:
    """How many sockets a process holds open (its file descriptors that are sockets)."""
    count = 0
    for fd in Path(f"/proc/{pid}/fd").iterdir():
        with contextlib.suppress(OSError):  # closed meanwhile
            count += os.readlink(fd).startswith("socket:")
    return count


def start_clients(
    targets: list[tuple[str, str]], table_id: int, sessions: list[str]
) -> tuple[list[Any], Any, Any, Any]:
    """Start ``CLIENT_PROCESSES`` spawned ``client_process`` es sharing ``sessions`` (session
    keys, one socket each) over ``targets``; each process alternates its sockets over the
    targets from its own offset. Returns (processes, connected semaphore, results queue,
    release event)."""
    context = multiprocessing.get_context("spawn")
    connected, results, release = context.Semaphore(0), context.Queue(), context.Event()
    shares = [sessions[i::CLIENT_PROCESSES] for i in range(CLIENT_PROCESSES)]
    clients = [
        context.Process(
            target=client_process,
            args=(
                targets[i % len(targets) :] + targets[: i % len(targets)],
                table_id,
                share,
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
    return clients, connected, results, release


def wait_connected(clients: list[Any], connected: Any, results: Any, timeout: float = 1800) -> list[Any]:
    """Wait until every client process has opened its sockets; fail at once if one reports
    an error. Returns the reports that arrived meanwhile (for ``collect_arrivals``)."""
    early: list[Any] = []
    deadline = time.monotonic() + timeout
    waiting = len(clients)
    while waiting:
        if connected.acquire(timeout=1):
            waiting -= 1
            continue
        with contextlib.suppress(queue.Empty):
            report = results.get_nowait()
            if report[0] != "ok":
                raise RuntimeError(f"a client process failed: {report[1]}")
            early.append(report)
        if time.monotonic() > deadline:
            raise RuntimeError(f"the clients did not connect within {timeout:.0f} s")
    return early


def collect_arrivals(
    clients: list[Any], results: Any, early: list[Any]
) -> tuple[list[tuple[float, str, int]], int, float]:
    """Every client process's change-frame arrivals (arrival, ``server_time``, version), how
    many handshakes were retried, and the client processes' CPU seconds from the moment they
    were all connected to their report (their own cost of the push, apart from the servers')."""
    arrivals: list[tuple[float, str, int]] = []
    retried = 0
    cpu = 0.0
    reports = list(early)
    while len(reports) < len(clients):
        reports.append(results.get(timeout=600))
    for status, payload in reports:
        if status != "ok":
            raise RuntimeError(f"a client process failed: {payload}")
        arrivals.extend(payload[0])
        retried += payload[1]
        cpu += payload[2]
    return arrivals, retried, cpu


def rss_kib(pid: int) -> int:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def start_haproxy(workdir: Path, index: int, backends: list[int], maxconn: int) -> tuple[subprocess.Popen[bytes], int]:
    """An haproxy in HTTP mode (WebSocket upgrades pass through as tunnels), leastconn over the
    daphnes; returns the process and its port."""
    port = free_port()
    servers = "\n".join(f"    server d{i} 127.0.0.1:{p} maxconn {maxconn}" for i, p in enumerate(backends))
    config = workdir / f"haproxy{index}.cfg"
    config.write_text(
        f"""global
    maxconn {maxconn}
    log stderr format raw local0 warning
defaults
    mode http
    timeout connect 5s
    timeout client 600s
    timeout server 600s
    timeout tunnel 600s
    option forwardfor
frontend ws
    bind 127.0.0.1:{port}
    maxconn {maxconn}
    default_backend daphnes
backend daphnes
    balance leastconn
{servers}
"""
    )
    process = subprocess.Popen(
        ["haproxy", "-f", str(config), "-db"],
        stdout=subprocess.DEVNULL,
        stderr=(workdir / f"haproxy{index}.log").open("w"),
    )
    return process, port


def start_nginx(
    workdir: Path, workers: int, backends: list[int], connections: int
) -> tuple[subprocess.Popen[bytes], int]:
    """Debian's nginx as the load balancer: ``workers`` worker processes (each its own
    file-descriptor table: a proxied socket holds two descriptors, and one process of this
    box may hold 20,000), ``least_conn`` over the daphnes, WebSocket upgrades passed through,
    the listening socket shared by the workers with ``reuseport``; returns the master
    process and the port. The configuration is written to ``workdir``."""
    port = free_port()
    temp = workdir / "nginx-temp"
    temp.mkdir(exist_ok=True)
    # max_fails=0: a daphne refusing a handshake under load is not taken out of the pool.
    servers = "\n".join(f"        server 127.0.0.1:{p} max_fails=0;" for p in backends)
    per_worker = min(19_000, 2 * connections // workers + 1000)
    config = workdir / "nginx.conf"
    config.write_text(
        f"""worker_processes {workers};
worker_rlimit_nofile {per_worker + 500};
pid {workdir}/nginx.pid;
error_log {workdir}/nginx-error.log warn;
daemon off;
events {{
    worker_connections {per_worker};
}}
http {{
    access_log off;
    client_body_temp_path {temp}/body;
    proxy_temp_path {temp}/proxy;
    fastcgi_temp_path {temp}/fastcgi;
    uwsgi_temp_path {temp}/uwsgi;
    scgi_temp_path {temp}/scgi;
    map $http_upgrade $connection_upgrade {{
        default upgrade;
        '' close;
    }}
    upstream daphnes {{
        zone daphnes 64k;
        least_conn;
{servers}
    }}
    server {{
        listen 127.0.0.1:{port} reuseport backlog=4096;
        location / {{
            proxy_pass http://daphnes;
            proxy_http_version 1.1;
            proxy_set_header Upgrade $http_upgrade;
            proxy_set_header Connection $connection_upgrade;
            proxy_set_header Host $http_host;
            proxy_set_header X-Forwarded-For $proxy_add_x_forwarded_for;
            proxy_read_timeout 600s;
            proxy_send_timeout 600s;
            proxy_buffering off;
        }}
    }}
}}
"""
    )
    process = subprocess.Popen(
        ["nginx", "-c", str(config), "-p", str(workdir)],
        stdout=subprocess.DEVNULL,
        stderr=(workdir / "nginx.log").open("w"),
    )
    return process, port


def start_clock(env: dict[str, str], workdir: Path) -> list[subprocess.Popen[bytes]]:
    """The table clock as production runs it (docs/deployment.md, the Procfile): a Celery
    worker (concurrency 2) and Celery beat, ``TABLE_CLOCK=beat``, logs in ``workdir``."""
    clock_env = {**env, "TABLE_CLOCK": "beat", "LOG_LEVEL": "warning"}
    celery = [sys.executable, "-m", "celery", "-A", "config"]
    commands = {
        "worker": [*celery, "worker", "--concurrency=2", "--loglevel=WARNING"],
        "beat": [*celery, "beat", "--loglevel=WARNING", f"--schedule={workdir / 'celerybeat-schedule'}"],
    }
    return [
        subprocess.Popen(
            command, cwd=ROOT, env=clock_env, stdout=subprocess.DEVNULL, stderr=(workdir / f"{name}.log").open("w")
        )
        for name, command in commands.items()
    ]


def children_rss_kib(pid: int) -> int:
    """Resident memory of a process and its direct children (nginx's master and workers)."""
    total = rss_kib(pid)
    for child in Path(f"/proc/{pid}/task/{pid}/children").read_text().split():
        total += rss_kib(int(child))
    return total


def wait_listening(port: int, process: subprocess.Popen[bytes]) -> None:
    for _ in range(300):
        if process.poll() is not None:
            raise RuntimeError(f"process on port {port} exited with {process.returncode}")
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
            return
        except OSError:
            time.sleep(0.1)
    raise RuntimeError(f"nothing listens on {port}")


def server_fanout(logs: list[Path], table_id: int, version: int) -> dict[str, Any] | None:
    """The servers' own measure of one change frame's fan-out: the ``fanout-report`` (and
    ``fanout-private``) lines of every daphne's log for the table's change-phase
    ``table_state`` of ``version`` (tables/realtime/hub.py, ``FanoutReport``), merged: write
    offsets from the publication (p50/p95/p99/max over all sockets, each process's 101
    percentiles weighted by its socket count), the last process's start, flush and private
    states (None until every process logged them)."""
    wanted = {"type": "table_state", "version": version, "phase": "change"}
    reports: list[dict[str, Any]] = []
    privates: list[dict[str, Any]] = []
    for log in logs:
        with contextlib.suppress(OSError), log.open() as lines:
            for line in lines:
                if "fanout-" not in line:
                    continue
                text = json.loads(line)["message"] if line.startswith("{") else line
                for kind, bucket in (("fanout-report ", reports), ("fanout-private ", privates)):
                    if kind in text:
                        report = json.loads(text.split(kind, 1)[1])
                        if report["table_id"] == table_id and report.get("frame") == wanted and report["sockets"]:
                            bucket.append(report)
    if not reports:
        return None
    weighted: list[tuple[float, float]] = sorted(
        (float(offset), report["sockets"] / len(report["written_pct"]))
        for report in reports
        for offset in report["written_pct"]
    )
    total = sum(weight for _, weight in weighted)

    def quantile(q: float) -> float:
        running = 0.0
        for offset, weight in weighted:
            running += weight
            if running >= q * total:
                return offset
        return weighted[-1][0]

    return {
        "sockets": sum(r["sockets"] for r in reports),
        "processes": len(reports),
        "p50": quantile(0.5),
        "p95": quantile(0.95),
        "p99": quantile(0.99),
        "max": max(r["written_pct"][-1] for r in reports),
        "queued": max(r["queued"] for r in reports),
        "flushed": max(r["flushed"] for r in reports),
        "private": max(r["private"] for r in privates) if len(privates) == len(reports) else None,
    }


def pct(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("clients", type=int, nargs="?", default=500)
    parser.add_argument("--redis", action="store_true", help="use the Redis channel layer (REDIS_URL or local)")
    parser.add_argument("--processes", type=int, default=1, help="daphne processes (more than 1 needs --redis)")
    parser.add_argument("--haproxy", type=int, default=0, help="haproxy balancers in front (0: connect directly)")
    parser.add_argument("--nginx", type=int, default=0, help="one nginx in front with this many worker processes")
    parser.add_argument(
        "--clock",
        choices=("beat", "in-process"),
        default="",
        help="the table clock in a Celery worker + beat (the default with --redis, as production) "
        "or in the first daphne (the default without)",
    )
    parser.add_argument(
        "--database-url",
        default="",
        help="a scratch PostgreSQL database (massive_* or bench_*, dropped and recreated) instead of SQLite",
    )
    args = parser.parse_args()
    limit = raise_fd_limit()
    if args.clients > limit - 1000 and not args.haproxy and not args.nginx and args.processes < 2:
        parser.error(f"one daphne process may hold {limit} descriptors: use --processes 2 or more")
    if args.processes > 1 and not args.redis:
        parser.error("--processes > 1 needs --redis: frames reach other processes through Redis")
    if args.haproxy and not shutil.which("haproxy"):
        parser.error("haproxy is not installed (apt-get install haproxy)")
    if args.nginx and not shutil.which("nginx"):
        parser.error("nginx is not installed (apt-get install nginx)")
    if args.haproxy and args.nginx:
        parser.error("--haproxy or --nginx, not both")
    args.clock = args.clock or ("beat" if args.redis else "in-process")
    if args.clock == "beat" and not args.redis:
        parser.error("--clock beat needs --redis (Celery's broker)")

    workdir = Path(tempfile.mkdtemp(prefix="fanout-"))
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "TABLE_CLOCK": "in-process", "LOG_LEVEL": "info"}
    env["POKER_FANOUT_REPORT_MIN_SOCKETS"] = "1"  # the hubs' fanout-report lines, for every table frame
    env.setdefault("POKER_BEACON_ALLOW_LOCAL", "1")  # benchmarks run the local beacon (docs/deployment.md)
    if args.database_url:  # PostgreSQL, as in production: a scratch database, recreated
        recreate_database(args.database_url)
        env["DATABASE_URL"] = args.database_url
    else:
        env.pop("DATABASE_URL", None)
        env["SQLITE_PATH"] = str(workdir / "db.sqlite3")
    if args.redis:
        env["REDIS_URL"] = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/3")
        env["POKER_REDIS_PREFIX"] = f"fanout{os.getpid()}"
        env.setdefault("DJANGO_SECRET_KEY", "bench-only-key-never-used-in-production-0123456789abcdef")
        env["DJANGO_HTTPS"] = "off"
    else:
        env.pop("REDIS_URL", None)
    os.environ.clear()
    os.environ.update(env)

    started = time.perf_counter()
    table_id, cookies = prepare(args.clients)
    print(f"prepared {args.clients} players and sessions in {time.perf_counter() - started:.1f} s")
    servers: list[subprocess.Popen[bytes]] = []
    balancers: list[subprocess.Popen[bytes]] = []
    clock: list[subprocess.Popen[bytes]] = []
    ports = []
    try:
        if args.clock == "beat":
            clock = start_clock(env, workdir)
        for index in range(args.processes):
            port = free_port()
            in_process = "in-process" if index == 0 else "off"
            server_env = {**env, "TABLE_CLOCK": "beat" if args.clock == "beat" else in_process}
            servers.append(
                subprocess.Popen(
                    daphne_command(port),
                    cwd=ROOT,
                    env=server_env,
                    stdout=subprocess.DEVNULL,
                    stderr=(workdir / f"server{index}.log").open("w"),
                )
            )
            ports.append(port)
        for port, server in zip(ports, servers, strict=True):
            wait_listening(port, server)
        if args.haproxy:
            per_balancer = args.clients // args.haproxy + 100
            targets = []
            for index in range(args.haproxy):
                balancer, port = start_haproxy(workdir, index, ports, per_balancer)
                balancers.append(balancer)
                wait_listening(port, balancer)
                targets.append((f"127.0.0.1:{port}", f"http://127.0.0.1:{port}"))
        elif args.nginx:
            balancer, port = start_nginx(workdir, args.nginx, ports, args.clients)
            balancers.append(balancer)
            wait_listening(port, balancer)
            targets = [(f"127.0.0.1:{port}", f"http://127.0.0.1:{port}")]
        else:
            targets = [(f"127.0.0.1:{port}", f"http://127.0.0.1:{port}") for port in ports]
        print(f"logs: {workdir}")
        before = [rss_kib(server.pid) for server in servers]
        sockets_before = [socket_fds(server.pid) for server in servers]

        from django.utils import timezone

        from tables.models import Hand, Seat, Table

        opened = time.perf_counter()
        clients, connected, results, release = start_clients(targets, table_id, cookies)
        early = wait_connected(clients, connected, results)
        print(f"connected {args.clients} sockets in {time.perf_counter() - opened:.1f} s")
        time.sleep(3)
        after = [rss_kib(server.pid) for server in servers]
        held = [socket_fds(server.pid) - n for server, n in zip(servers, sockets_before, strict=True)]
        Seat.objects.filter(table_id=table_id).update(last_seen_at=timezone.now())
        Table.objects.filter(pk=table_id).update(phase_deadline=timezone.now())
        arrivals, retried, client_cpu = collect_arrivals(clients, results, early)
        frame_versions = {(version, server_time) for _, server_time, version in arrivals}
        balancer_rss = [children_rss_kib(b.pid) for b in balancers]
        release.set()
        for client in clients:
            client.join(timeout=60)

        hand = Hand.objects.get(table_id=table_id)
        dealt = hand.started_at.timestamp()
        from_broadcast = sorted(t - datetime.fromisoformat(s).timestamp() for t, s, _ in arrivals)
        from_deal = sorted(t - dealt for t, _, _ in arrivals)
        layer = ("Redis, per-process hub" if args.redis else "in-memory") + f"; clock {args.clock}"
        front = (
            f"{args.haproxy} haproxy" if args.haproxy else f"1 nginx ({args.nginx} workers)" if args.nginx else "direct"
        )
        print(
            f"\n{args.clients} clients, {args.processes} daphne ({layer}), {front}; load {os.getloadavg()}; "
            f"{len(arrivals)} received the change phase; hand of {hand.entry_count} entries; "
            f"{retried} handshakes retried\n"
        )
        print("| measured from | p50 | p95 | p99 | max |")
        print("|---|---:|---:|---:|---:|")
        for label, values in (
            ("broadcast (frame built)", from_broadcast),
            ("deal started (ante + entries included)", from_deal),
        ):
            print(
                f"| {label} | {statistics.median(values):.3f} s | {pct(values, 0.95):.3f} s | "
                f"{pct(values, 0.99):.3f} s | {values[-1]:.3f} s |"
            )
        versions = {version for version, _ in frame_versions}
        logs = [workdir / f"server{i}.log" for i in range(len(servers))]
        measured = None
        waited = time.monotonic() + 60  # the private states are logged once handed over
        while time.monotonic() < waited:
            measured = server_fanout(logs, table_id, max(versions) if versions else -1)
            if measured and measured["processes"] == len(servers) and measured["private"] is not None:
                break
            time.sleep(1)
        if measured:
            print(
                f"| at the servers ({measured['sockets']} sockets, {measured['processes']} processes; "
                f"from the publication, writes handed to the transports) | {measured['p50']:.3f} s | "
                f"{measured['p95']:.3f} s | {measured['p99']:.3f} s | {measured['max']:.3f} s |"
            )
            print(
                f"\nservers: began writing after {measured['queued']:.3f} s, transports flushed at "
                f"{measured['flushed']:.3f} s, private states handed over at {measured['private'] or 0:.3f} s"
            )
        print(f"client processes' CPU during the push: {client_cpu:.2f} s")
        print("\n| daphne | sockets | RSS before | RSS after | per socket |")
        print("|---|---:|---:|---:|---:|")
        for index, (rss0, rss1, share) in enumerate(zip(before, after, held, strict=True)):
            print(
                f"| {index} | {share} | {rss0 / 1024:.0f} MiB | {rss1 / 1024:.0f} MiB | "
                f"{(rss1 - rss0) / max(share, 1):.1f} KiB |"
            )
        total = sum(after) - sum(before)
        print(f"| all | {sum(held)} | | | {total / max(sum(held), 1):.1f} KiB |")
        if balancers:
            print(
                "\n"
                + ", ".join(f"balancer {i}: {rss / 1024:.0f} MiB RSS" for i, rss in enumerate(balancer_rss))
                + " (with its workers)"
            )
    finally:
        for process in [*clock, *balancers, *servers]:
            process.terminate()
        for process in [*clock, *balancers, *servers]:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:  # busy with thousands of sockets: do not leave it behind
                process.kill()
                process.wait()


if __name__ == "__main__":
    main()
