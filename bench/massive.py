"""Load harness: one WiderPoker hand of N players on the production path, end to end.

    apt-get install nginx     # only with --nginx
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_massive \\
        .venv/bin/python bench/massive.py 10000 --sockets 10000 --nginx 2 --purchases 3000 --buyers 64
    # 100,000 players, 10,000 of them with a real socket, the rest simulated:
    ... bench/massive.py 100000 --sockets 10000 --nginx 2 --purchases 20000
    # the cheap smoke run (tests/bench/test_massive_smoke.py runs it when asked):
    ... bench/massive.py 50 --sockets 50 --purchases 100 --buyers 8 --change-seconds 30

What it does, on loopback (PostgreSQL, Redis, ``--processes`` daphne processes; the first
runs the table clock in-process, the others only serve):

1. recreates the database named by ``DATABASE_URL``, migrates it, and makes N players with
   funded wallets, seats at one fun table, API tokens, and sessions for the socket clients
   (bulk writes: this is set-up, not what is measured);
2. opens ``--sockets`` real game sockets from four client processes, directly or through one
   nginx (``--nginx W``: W worker processes, least-connections over the daphnes, config
   written to a temporary directory); the rest of the N players are "simulated": seated and
   dealt in, buying through REST, with no socket, as the box's limit of 20,000 file
   descriptors a process allows about 10,000 sockets through a balancer. Then it wakes the
   table;
3. measures the **deal** (the clock's ante transfer and N entries: from the hand's start to
   the change-phase frame being built) and the **push** of that frame to every socket;
4. during the change phase fires ``--purchases`` REST actions (holds, draws, redeals, each
   player at most one of each) from ``--buyers`` concurrent HTTP clients, token-authenticated,
   and reports throughput and latency p50/p95/p99 of the confirmed ones;
5. waits for the **settlement** (from the change deadline's tick to the results frame) and
   checks the books and that every confirmed purchase is in the settled hand.

The throttles are raised for the run (every simulated player shares 127.0.0.1). It prints a
Markdown table and exits non-zero if the books or the purchases do not check out.
"""

from __future__ import annotations

import argparse
import asyncio
import os
import random
import secrets
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

from bench.fanout import (  # noqa: E402
    collect_arrivals,
    daphne_command,
    free_port,
    pct,
    raise_fd_limit,
    recreate_database,
    rss_kib,
    socket_fds,
    start_clients,
    start_nginx,
    wait_connected,
    wait_listening,
)

ANTE, DRAW_PRICE, REDEAL_PRICE = 100, 50, 80


def funded_table(n: int, *, prefix: str, change_seconds: int, reference: str) -> tuple[Any, list[Any], list[Any]]:
    """A fun table whose change phase lasts ``change_seconds``, and ``n`` players (named
    ``<prefix><i>``) funded with 10,000 chips each by one transfer (``reference``), seated,
    each with an API token; returns (table, users, tokens). Django must be set up."""
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.utils import timezone
    from rest_framework.authtoken.models import Token

    from tables import services
    from tables.models import Seat
    from wallet import services as wallet_services
    from wallet.models import AccountKind, Currency, TransferKind

    call_command("migrate", verbosity=0)
    now = timezone.now()
    table = services.create_table(
        name=f"{prefix.upper()} {n}",
        mode="fun",
        currency="FUN",
        ante_minor=ANTE,
        draw_price_bps=DRAW_PRICE * 10_000 // ANTE,
        redeal_price_minor=REDEAL_PRICE,
        change_seconds=change_seconds,
        redeal_seconds=change_seconds,
        results_seconds=30,
    )
    users = User.objects.bulk_create([User(username=f"{prefix}{i}", password="!") for i in range(n)], batch_size=5000)
    cashier = wallet_services.ensure_house_account(kind=AccountKind.CASHIER, currency=Currency.FUN)
    accounts = wallet_services.ensure_player_accounts(user_ids=[u.pk for u in users], currency=Currency.FUN).values()
    wallet_services.post_transfer(
        reference=reference,
        kind=TransferKind.FUN_GRANT,
        currency=Currency.FUN,
        legs=[wallet_services.Leg(a, 10_000) for a in accounts] + [wallet_services.Leg(cashier.pk, -10_000 * n)],
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


async def fire_purchases(
    base_urls: list[str], table_id: int, plan: list[tuple[str, str]], buyers: int
) -> list[tuple[str, int, float, str]]:
    """Send ``plan`` ((token, action) pairs) with ``buyers`` concurrent clients; returns
    (action, status, seconds, code) per request."""
    import logging

    import httpx

    logging.getLogger("httpx").setLevel(logging.WARNING)  # one INFO line per request otherwise
    queue: asyncio.Queue[tuple[str, str]] = asyncio.Queue()
    for item in plan:
        queue.put_nowait(item)
    results: list[tuple[str, int, float, str]] = []
    paths = {"hold": "hold/", "draw": "draws/", "redeal": "redeals/"}

    async def buyer(index: int) -> None:
        base = base_urls[index % len(base_urls)]
        async with httpx.AsyncClient(base_url=base, timeout=60) as client:
            while not queue.empty():
                token, action = queue.get_nowait()
                body = {"hold": [True, False, True, False, False]} if action == "hold" else None
                started = time.perf_counter()
                response = await client.post(
                    f"/api/tables/{table_id}/{paths[action]}",
                    json=body,
                    headers={"Authorization": f"Token {token}"},
                )
                elapsed = time.perf_counter() - started
                code = "" if response.status_code == 200 else str(response.json().get("code", ""))
                results.append((action, response.status_code, elapsed, code))

    await asyncio.gather(*(buyer(i) for i in range(buyers)))
    return results


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("players", type=int, nargs="?", default=10_000)
    parser.add_argument("--sockets", type=int, default=4000, help="real game sockets (the rest are simulated)")
    parser.add_argument("--purchases", type=int, default=3000, help="REST actions during the change phase")
    parser.add_argument("--buyers", type=int, default=64, help="concurrent HTTP clients")
    parser.add_argument("--processes", type=int, default=2, help="daphne processes")
    parser.add_argument("--nginx", type=int, default=0, help="nginx worker processes in front (0: direct)")
    parser.add_argument("--change-seconds", type=int, default=90)
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
        "TABLE_CLOCK": "off",
    }
    os.environ.clear()
    os.environ.update(env)
    recreate_database(database_url)

    started = time.perf_counter()
    table_id, _user_ids, tokens, session_keys = prepare(args.players, sockets, args.change_seconds)
    print(f"prepared {args.players} players ({sockets} with sockets) in {time.perf_counter() - started:.1f} s")

    from django.db import transaction
    from django.utils import timezone

    from tables.models import Entry, Hand, HandStatus, Table, TablePhase
    from tables.services import beacon
    from wallet.selectors import check_books

    servers: list[subprocess.Popen[bytes]] = []
    balancers: list[subprocess.Popen[bytes]] = []
    ports: list[int] = []
    failures: list[str] = []
    try:
        for index in range(args.processes):
            port = free_port()
            servers.append(
                subprocess.Popen(
                    daphne_command(port),
                    cwd=ROOT,
                    env={**env, "TABLE_CLOCK": "in-process" if index == 0 else "off"},
                    stdout=subprocess.DEVNULL,
                    stderr=(workdir / f"server{index}.log").open("w"),
                )
            )
            ports.append(port)
        for port, server in zip(ports, servers, strict=True):
            wait_listening(port, server)
        print(f"logs: {workdir}")
        if args.nginx:
            balancer, port = start_nginx(workdir, args.nginx, ports, sockets + args.buyers)
            balancers.append(balancer)
            wait_listening(port, balancer)
            targets = [(f"127.0.0.1:{port}", f"http://127.0.0.1:{port}")]
        else:
            targets = [(f"127.0.0.1:{port}", f"http://127.0.0.1:{port}") for port in ports]
        rss_before = [rss_kib(server.pid) for server in servers]
        fds_before = [socket_fds(server.pid) for server in servers]

        opened = time.perf_counter()
        clients, connected, results, release = start_clients(targets, table_id, session_keys)
        early = wait_connected(clients, connected, results)
        print(f"connected {sockets} sockets in {time.perf_counter() - opened:.1f} s")
        time.sleep(2)
        rss = [rss_kib(server.pid) for server in servers]
        held = sum(socket_fds(server.pid) for server in servers) - sum(fds_before)
        per_socket = (sum(rss) - sum(rss_before)) / max(held, 1)

        Table.objects.filter(pk=table_id).update(phase_deadline=timezone.now())
        arrivals, retried = collect_arrivals(clients, results, early)
        hand = Hand.objects.get(table_id=table_id)
        built = min(datetime.fromisoformat(s).timestamp() for _, s in arrivals)
        deal_seconds = built - hand.started_at.timestamp()
        push = sorted(t - datetime.fromisoformat(s).timestamp() for t, s in arrivals)
        print(
            f"deal {deal_seconds:.2f} s; push to {len(push):,} sockets p50 {statistics.median(push):.2f} s, "
            f"p95 {pct(push, 0.95):.2f} s, p99 {pct(push, 0.99):.2f} s, max {push[-1]:.2f} s",
            flush=True,
        )

        # Purchases: each player at most one hold, one draw and one redeal.
        rng = random.Random(7)
        plan = [(token, action) for token in tokens for action in ("hold", "draw", "redeal")]
        rng.shuffle(plan)
        plan = plan[: args.purchases]
        base_urls = [origin for _, origin in targets]
        fired = time.perf_counter()
        outcomes = asyncio.run(fire_purchases(base_urls, table_id, plan, args.buyers))
        purchase_seconds = time.perf_counter() - fired
        confirmed = [o for o in outcomes if o[1] == 200]
        refused = [o for o in outcomes if o[1] != 200]
        latencies = sorted(o[2] for o in confirmed)
        still_open = timezone.now() < Hand.objects.get(pk=hand.pk).change_deadline

        # Settlement: move the deadline to now so the clock settles without waiting it out;
        # if the change phase ran out during the purchases, the clock settled (or is
        # settling) at its own deadline: measured from the deadline to the hand's settlement.
        woken = time.perf_counter()
        with transaction.atomic():
            # The hand settles once its beacon round is out (algorithm 2): the round after the
            # new deadline, as the deal would have chosen (docs/provably-fair.md).
            moved = timezone.now()
            still_open = (
                Hand.objects.filter(pk=hand.pk, status=HandStatus.CHANGE).update(
                    change_deadline=moved, redeal_deadline=moved, beacon_round=beacon.round_after(moved)
                )
                == 1
                and still_open
            )
            if still_open:
                Table.objects.filter(pk=table_id).update(phase_deadline=timezone.now())
        deadline = time.monotonic() + 600
        while Table.objects.get(pk=table_id).phase != TablePhase.RESULTS and time.monotonic() < deadline:
            time.sleep(0.05)
        settle_seconds = time.perf_counter() - woken
        hand.refresh_from_db()
        if not still_open and hand.settled_at is not None:
            settle_seconds = (hand.settled_at - hand.change_deadline).total_seconds()

        draws_ok = sum(1 for o in confirmed if o[0] == "draw")
        redeals_ok = sum(1 for o in confirmed if o[0] == "redeal")
        entries = Entry.objects.filter(hand=hand)
        stored_draws = sum(e.draws_bought - 1 for e in entries.only("draws_bought"))
        paid = sum(entries.values_list("paid_minor", flat=True))
        expected_paid = ANTE * hand.entry_count + DRAW_PRICE * draws_ok + REDEAL_PRICE * redeals_ok
        if len(arrivals) < sockets:
            failures.append(f"only {len(arrivals)} of {sockets} sockets received the change phase")
        if hand.status != HandStatus.SETTLED:
            failures.append(f"the hand was not settled: {hand.status} ({hand.cancel_reason})")
        books = check_books()
        if not books.ok:
            failures.append("books do not balance")
        if stored_draws != draws_ok or paid != expected_paid or hand.redeal_count != redeals_ok:
            failures.append(
                f"purchases: confirmed {draws_ok} draws / {redeals_ok} redeals, settled {stored_draws} draws / "
                f"{hand.redeal_count} redeals; paid {paid} vs {expected_paid}"
            )
        if any(o[1] >= 500 for o in outcomes):
            failures.append(f"{sum(1 for o in outcomes if o[1] >= 500)} server errors")

        def ms(values: list[float], q: float) -> str:
            return f"{pct(values, q) * 1000:.0f} ms" if values else "-"

        front = f"1 nginx ({args.nginx} workers)" if args.nginx else "direct"
        print(
            f"\n## {args.players:,} players, {sockets:,} sockets, {args.processes} daphne ({front}), "
            f"PostgreSQL + Redis; load average {os.getloadavg()[0]:.1f} / {os.getloadavg()[1]:.1f}\n"
        )
        print("| step | measured |")
        print("|---|---|")
        print(f"| deal (ante + {hand.entry_count:,} entries, until the change frame is built) | {deal_seconds:.2f} s |")
        print(
            f"| push of the change frame to {len(push):,} sockets, from broadcast | "
            f"p50 {statistics.median(push):.2f} s, p95 {pct(push, 0.95):.2f} s, p99 {pct(push, 0.99):.2f} s, "
            f"max {push[-1]:.2f} s |"
        )
        print(
            f"| purchases: {len(outcomes):,} REST actions from {args.buyers} clients in {purchase_seconds:.1f} s | "
            f"{len(confirmed) / purchase_seconds:.0f} confirmed/s; latency p50 {ms(latencies, 0.5)}, "
            f"p95 {ms(latencies, 0.95)}, p99 {ms(latencies, 0.99)} |"
        )
        codes: dict[str, int] = {}
        for o in refused:
            codes[o[3] or str(o[1])] = codes.get(o[3] or str(o[1]), 0) + 1
        print(f"| refused purchases (by code) | {codes or 'none'} |")
        print(f"| socket handshakes retried (refused under load) | {retried} |")
        print(f"| change phase still open when the purchases ended | {still_open} |")
        print(f"| settle (deadline -> results phase committed, one clock tick included) | {settle_seconds:.2f} s |")
        print(
            f"| books check; purchases in the settlement | {'ok' if books.ok else 'FAILED'}; "
            f"{'ok' if not failures else 'FAILED'} |"
        )
        print(
            "| daphne RSS with sockets open | "
            + ", ".join(f"{value / 1024:.0f} MiB" for value in rss)
            + f"; {per_socket:.1f} KiB per socket ({held:,} sockets) |"
        )
        release.set()
        for client in clients:
            client.join(timeout=60)
    finally:
        for server in [*balancers, *servers]:
            server.terminate()
        for server in [*balancers, *servers]:
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
