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

With several processes only the first runs the clock (``TABLE_CLOCK=in-process``); the
others only serve sockets and receive table frames through Redis, as in production. Each
haproxy holds two file descriptors per socket and this workplace allows 20,000 a process, so
10,000 sockets need two balancers (``--haproxy 2``: clients alternate between them, as DNS
round-robin over two balancer nodes would). Client, servers, balancers and the database share
the machine's two cores: figures are pessimistic.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import multiprocessing
import os
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

    from tables import services
    from tables.models import Seat
    from wallet import services as wallet_services
    from wallet.models import AccountKind, Currency, TransferKind

    call_command("migrate", verbosity=0)
    now = timezone.now()
    table = services.create_table(
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


async def _client(url: str, cookie: str, origin: str, arrivals: list[tuple[float, str]], ready: asyncio.Event) -> None:
    import websockets

    async with websockets.connect(
        url,
        additional_headers={"Cookie": f"sessionid={cookie}", "Origin": origin},
        compression=None,
        ping_interval=None,
        max_queue=None,
        open_timeout=300,
    ) as ws:
        ready.set()
        async for message in ws:
            if '"table_state"' not in message:
                continue
            frame = json.loads(message)
            if frame.get("type") == "table_state" and frame.get("phase") == "change":
                arrivals.append((time.time(), frame["server_time"]))
                return


async def _client_group(
    targets: list[tuple[str, str]], table_id: int, cookies: list[str], connected: Any
) -> list[tuple[float, str]]:
    arrivals: list[tuple[float, str]] = []
    tasks = []
    for i, cookie in enumerate(cookies):
        host, origin = targets[i % len(targets)]
        ready = asyncio.Event()
        tasks.append(
            asyncio.create_task(_client(f"ws://{host}/ws/tables/{table_id}/", cookie, origin, arrivals, ready))
        )
        if i % 50 == 49:
            await asyncio.sleep(0.05)  # a connect ramp, like players arriving
        await ready.wait()
    connected.release()
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=300)
    return arrivals


def client_process(
    targets: list[tuple[str, str]], table_id: int, cookies: list[str], connected: Any, results: Any
) -> None:
    """One client process: open its share of the sockets, report the change frame arrivals."""
    try:
        arrivals = asyncio.run(_client_group(targets, table_id, cookies, connected))
        results.put(("ok", arrivals))
    except BaseException as error:  # report, never hang the parent
        results.put(("error", repr(error)))


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


def pct(values: list[float], q: float) -> float:
    return values[min(len(values) - 1, int(q * len(values)))]


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("clients", type=int, nargs="?", default=500)
    parser.add_argument("--redis", action="store_true", help="use the Redis channel layer (REDIS_URL or local)")
    parser.add_argument("--processes", type=int, default=1, help="daphne processes (more than 1 needs --redis)")
    parser.add_argument("--haproxy", type=int, default=0, help="haproxy balancers in front (0: connect directly)")
    args = parser.parse_args()
    if args.processes > 1 and not args.redis:
        parser.error("--processes > 1 needs --redis: frames reach other processes through Redis")
    if args.haproxy and not shutil.which("haproxy"):
        parser.error("haproxy is not installed (apt-get install haproxy)")

    workdir = Path(tempfile.mkdtemp(prefix="fanout-"))
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "TABLE_CLOCK": "in-process"}
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
    ports = []
    try:
        for index in range(args.processes):
            port = free_port()
            server_env = {**env, "TABLE_CLOCK": "in-process" if index == 0 else "off"}
            servers.append(
                subprocess.Popen(
                    [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "config.asgi:application"],
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
        else:
            targets = [(f"127.0.0.1:{port}", f"http://127.0.0.1:{port}") for port in ports]
        print(f"logs: {workdir}")
        before = [rss_kib(server.pid) for server in servers]

        from django.utils import timezone

        from tables.models import Hand, Seat, Table

        context = multiprocessing.get_context("spawn")
        connected, results = context.Semaphore(0), context.Queue()
        shares = [cookies[i::CLIENT_PROCESSES] for i in range(CLIENT_PROCESSES)]
        # Each client process alternates its sockets over the targets from its own offset.
        clients = [
            context.Process(
                target=client_process,
                args=(targets[i % len(targets) :] + targets[: i % len(targets)], table_id, share, connected, results),
            )
            for i, share in enumerate(shares)
            if share
        ]
        opened = time.perf_counter()
        for client in clients:
            client.start()
        for _ in clients:
            if not connected.acquire(timeout=900):
                raise RuntimeError("the clients did not connect within 15 minutes")
        print(f"connected {args.clients} sockets in {time.perf_counter() - opened:.1f} s")
        time.sleep(3)
        after = [rss_kib(server.pid) for server in servers]
        Seat.objects.filter(table_id=table_id).update(last_seen_at=timezone.now())
        Table.objects.filter(pk=table_id).update(phase_deadline=timezone.now())
        arrivals: list[tuple[float, str]] = []
        for _ in clients:
            status, payload = results.get(timeout=600)
            if status != "ok":
                raise RuntimeError(f"a client process failed: {payload}")
            arrivals.extend(payload)
        for client in clients:
            client.join(timeout=30)

        hand = Hand.objects.get(table_id=table_id)
        dealt = hand.started_at.timestamp()
        from_broadcast = sorted(t - datetime.fromisoformat(s).timestamp() for t, s in arrivals)
        from_deal = sorted(t - dealt for t, _ in arrivals)
        layer = "Redis, per-process hub" if args.redis else "in-memory"
        front = f"{args.haproxy} haproxy" if args.haproxy else "direct"
        print(
            f"\n{args.clients} clients, {args.processes} daphne ({layer}), {front}; "
            f"{len(arrivals)} received the change phase; hand of {hand.entry_count} entries\n"
        )
        print("| measured from | p50 | p95 | max |")
        print("|---|---:|---:|---:|")
        for label, values in (
            ("broadcast (frame built)", from_broadcast),
            ("deal started (ante + entries included)", from_deal),
        ):
            print(f"| {label} | {statistics.median(values):.3f} s | {pct(values, 0.95):.3f} s | {values[-1]:.3f} s |")
        print("\n| daphne | sockets | RSS before | RSS after | per socket |")
        print("|---|---:|---:|---:|---:|")
        for index, (rss0, rss1) in enumerate(zip(before, after, strict=True)):
            share = args.clients / args.processes
            print(
                f"| {index} | ~{share:.0f} | {rss0 / 1024:.0f} MiB | {rss1 / 1024:.0f} MiB | "
                f"{(rss1 - rss0) / share:.1f} KiB |"
            )
        if balancers:
            print(
                "\n" + ", ".join(f"haproxy {i}: {rss_kib(b.pid) / 1024:.0f} MiB RSS" for i, b in enumerate(balancers))
            )
    finally:
        for process in [*balancers, *servers]:
            process.terminate()
        for process in [*balancers, *servers]:
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:  # busy with thousands of sockets: do not leave it behind
                process.kill()
                process.wait()


if __name__ == "__main__":
    main()
