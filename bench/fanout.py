"""Benchmark: how fast a phase change reaches N WebSocket clients on loopback.

Starts one daphne process with the in-process table clock (embedded default: SQLite and the
in-memory layer; or, with ``--redis``, the Redis channel layer), logs N players in, opens N
game sockets to one table, wakes the table so the clock deals a hand, and measures for each
client the delay from the broadcast (the frame's ``server_time``) and from the deal to the
arrival of the ``table_state`` frame of the change phase.

    .venv/bin/python bench/fanout.py 500
    .venv/bin/python bench/fanout.py 500 --redis      # needs a local Redis

Client, server and database share the machine's cores; figures are pessimistic.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import socket
import statistics
import subprocess
import sys
import tempfile
import time
from datetime import datetime
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))


def free_port() -> int:
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        return int(sock.getsockname()[1])


def prepare(n: int) -> tuple[int, list[str], int]:
    """Create the table, N funded, seated players and their sessions; return ids and cookies."""
    import django

    django.setup()
    from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
    from django.contrib.auth.models import User
    from django.contrib.sessions.backends.db import SessionStore
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
        draw_price_minor=50,
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
    cookies = []
    for user in users:
        session = SessionStore()
        session[SESSION_KEY] = str(user.pk)
        session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
        session[HASH_SESSION_KEY] = user.get_session_auth_hash()
        session.create()
        cookies.append(session.session_key or "")
    return table.pk, cookies, n


async def client(
    url: str, cookie: str, origin: str, arrivals: list[tuple[float, str]], ready: asyncio.Event, go: asyncio.Event
) -> None:
    import websockets

    async with websockets.connect(
        url,
        additional_headers={"Cookie": f"sessionid={cookie}", "Origin": origin},
        compression=None,
        ping_interval=None,
        max_queue=None,
        open_timeout=120,
    ) as ws:
        ready.set()
        async for message in ws:
            frame = json.loads(message)
            if frame.get("type") == "table_state" and frame.get("phase") == "change":
                arrivals.append((time.time(), frame["server_time"]))
                return


async def run_clients(port: int, table_id: int, cookies: list[str], wake: object) -> list[tuple[float, str]]:
    url = f"ws://127.0.0.1:{port}/ws/tables/{table_id}/"
    origin = f"http://127.0.0.1:{port}"
    arrivals: list[tuple[float, str]] = []
    go = asyncio.Event()
    tasks = []
    started = time.perf_counter()
    for i, cookie in enumerate(cookies):
        ready = asyncio.Event()
        tasks.append(asyncio.create_task(client(url, cookie, origin, arrivals, ready, go)))
        if i % 50 == 49:
            await asyncio.sleep(0.2)  # a gentle connect ramp, like real players arriving
        await ready.wait()
    print(f"connected {len(cookies)} sockets in {time.perf_counter() - started:.1f} s")
    await asyncio.sleep(2)
    await asyncio.to_thread(wake)  # type: ignore[arg-type]
    await asyncio.wait_for(asyncio.gather(*tasks), timeout=120)
    return arrivals


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("clients", type=int, nargs="?", default=500)
    parser.add_argument("--redis", action="store_true", help="use the Redis channel layer (REDIS_URL or local)")
    args = parser.parse_args()

    workdir = Path(tempfile.mkdtemp(prefix="fanout-"))
    env = {**os.environ, "DJANGO_SETTINGS_MODULE": "config.settings", "TABLE_CLOCK": "in-process"}
    env.pop("DATABASE_URL", None)
    env["SQLITE_PATH"] = str(workdir / "db.sqlite3")
    if args.redis:
        env["REDIS_URL"] = os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/3")
        env["CHANNEL_LAYER_PREFIX"] = f"fanout{os.getpid()}"
    else:
        env.pop("REDIS_URL", None)
    os.environ.clear()
    os.environ.update(env)

    table_id, cookies, n = prepare(args.clients)
    port = free_port()
    server = subprocess.Popen(
        [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "config.asgi:application"],
        cwd=ROOT,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=(workdir / "server.log").open("w"),
    )
    print(f"server log: {workdir / 'server.log'}")
    try:
        for _ in range(100):
            try:
                socket.create_connection(("127.0.0.1", port), timeout=0.2).close()
                break
            except OSError:
                time.sleep(0.1)

        from django.utils import timezone

        from tables.models import Hand, Table

        def wake() -> None:
            Table.objects.filter(pk=table_id).update(phase_deadline=timezone.now())

        arrivals = asyncio.run(run_clients(port, table_id, cookies, wake))
        hand = Hand.objects.get(table_id=table_id)
        dealt = hand.started_at.timestamp()
        from_broadcast = sorted(t - datetime.fromisoformat(s).timestamp() for t, s in arrivals)
        from_deal = sorted(t - dealt for t, _ in arrivals)

        def pct(values: list[float], q: float) -> float:
            return values[min(len(values) - 1, int(q * len(values)))]

        layer = "Redis" if args.redis else "in-memory"
        print(f"\n{n} clients, daphne + {layer} layer, {len(arrivals)} received the change phase\n")
        print("| measured from | p50 | p95 | max |")
        print("|---|---:|---:|---:|")
        for label, values in (
            ("broadcast (frame built)", from_broadcast),
            ("deal started (ante + entries included)", from_deal),
        ):
            print(f"| {label} | {statistics.median(values):.3f} s | {pct(values, 0.95):.3f} s | {values[-1]:.3f} s |")
    finally:
        server.terminate()
        try:
            server.wait(timeout=10)
        except subprocess.TimeoutExpired:  # busy with hundreds of sockets: do not leave it behind
            server.kill()
            server.wait()


if __name__ == "__main__":
    main()
