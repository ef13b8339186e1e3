"""Bursts of concurrent requests from one account against two daphne processes (security
audit F3): no server error, other players still served, and the table clock on time.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_concurrency \\
        .venv/bin/python bench/concurrency.py --burst 500 --bursts 4

The production path on loopback: PostgreSQL with the default connection pools, Redis, two
daphne processes, one Celery worker and one Celery beat driving the clock, the default
throttles. One fun table deals a hand every few seconds to three seated players. Then:

1. a quiet window measures how late the clock moves the table (hand settled after its
   change deadline, next hand dealt after the results pause) with no load;
2. ``--bursts`` times, ``--burst`` requests of one account (token-authenticated; reads and
   holds, half to each daphne) are released at once, while another player reads her own
   state every 100 ms;
3. the clock's lateness is measured again over the bursts.

It prints a Markdown table and exits non-zero on any 5xx or connection error, on a failure
of the other player's requests, on a clock more than 2 s late, or if the books do not check.
"""

from __future__ import annotations

import argparse
import asyncio
import itertools
import logging
import os
import subprocess
import sys
import tempfile
import time
from collections import Counter
from datetime import datetime, timedelta
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from bench.fanout import free_port, pct, recreate_database, wait_listening  # noqa: E402

CHANGE_SECONDS, RESULTS_SECONDS = 5, 2
errors: Counter[str] = Counter()  # client-side failures by exception, for the report


def endpoint(port: int) -> str:
    """daphne's listening endpoint with a listen backlog of 1024 (Twisted's default of 50
    resets connections when hundreds arrive at once; the Procfile uses the same)."""
    return f"tcp:port={port}:interface=127.0.0.1:backlog=1024"


def prepare() -> tuple[int, dict[str, str]]:
    """Migrate; the table, three funded seated players and their API tokens."""
    import django

    django.setup()
    from django.contrib.auth.models import User
    from django.core.management import call_command
    from django.utils import timezone
    from rest_framework.authtoken.models import Token

    from tables.widerpoker.services.create import create_table
    from tables.widerpoker.services.seating import join_table
    from wallet import services as wallet_services

    call_command("migrate", verbosity=0)
    table = create_table(
        name="Burst Rail",
        mode="fun",
        currency="FUN",
        ante_minor=100,
        draw_price_bps=5000,
        redeal_price_minor=80,
        change_seconds=CHANGE_SECONDS,
        redeal_seconds=CHANGE_SECONDS,
        results_seconds=RESULTS_SECONDS,
    )
    tokens = {}
    for name in ("burster", "bystander", "third"):
        user = User.objects.create_user(username=name, password="!")
        wallet_services.grant_signup_fun_chips(user_id=user.pk)
        join_table(table_id=table.pk, user_id=user.pk, now=timezone.now())
        tokens[name] = Token.objects.create(user=user).key
    return table.pk, tokens


async def burst(base_urls: list[str], table_id: int, token: str, size: int) -> list[tuple[int, float]]:
    """``size`` requests of one account released together; (status or -1, seconds) each."""
    import httpx

    gate = asyncio.Event()
    headers = {"Authorization": f"Token {token}"}
    limits = httpx.Limits(max_connections=size, max_keepalive_connections=0)

    async def one(index: int, client: httpx.AsyncClient) -> tuple[int, float]:
        base = base_urls[index % len(base_urls)]
        await gate.wait()
        started = time.perf_counter()
        try:
            if index % 3 == 0:
                response = await client.post(
                    f"{base}/api/tables/{table_id}/hold/", json={"hold": [index % 2 == 0, True, False, False, True]}
                )
            elif index % 3 == 1:
                response = await client.get(f"{base}/api/tables/{table_id}/me/")
            else:
                response = await client.get(f"{base}/api/wallet/")
            return response.status_code, time.perf_counter() - started
        except httpx.HTTPError as error:
            errors[type(error).__name__] += 1
            return -1, time.perf_counter() - started

    async with httpx.AsyncClient(headers=headers, limits=limits, timeout=60) as client:
        tasks = [asyncio.create_task(one(i, client)) for i in range(size)]
        await asyncio.sleep(0.2)
        gate.set()
        return await asyncio.gather(*tasks)


async def bystander(base_url: str, table_id: int, token: str, stop: asyncio.Event) -> list[tuple[int, float]]:
    """Another player reading her own state every 100 ms until ``stop``."""
    import httpx

    results = []
    async with httpx.AsyncClient(headers={"Authorization": f"Token {token}"}, timeout=30) as client:
        while not stop.is_set():
            started = time.perf_counter()
            try:
                status = (await client.get(f"{base_url}/api/tables/{table_id}/me/")).status_code
            except httpx.HTTPError:
                status = -1
            results.append((status, time.perf_counter() - started))
            await asyncio.sleep(0.1)
    return results


async def run_bursts(
    base_urls: list[str], table_id: int, tokens: dict[str, str], size: int, count: int
) -> tuple[list[tuple[int, float]], list[tuple[int, float]]]:
    stop = asyncio.Event()
    watcher = asyncio.create_task(bystander(base_urls[1], table_id, tokens["bystander"], stop))
    outcomes: list[tuple[int, float]] = []
    for _ in range(count):
        outcomes += await burst(base_urls, table_id, tokens["burster"], size)
        await asyncio.sleep(3)
    stop.set()
    return outcomes, await watcher


def clock_lateness(table_id: int, since: datetime, until: datetime) -> list[float]:
    """Seconds each clock step came after its due time within [since, until]: settlements
    after the change deadline, deals after the previous hand's results pause."""
    from tables.models import Hand, HandStatus

    hands = list(Hand.objects.filter(table_id=table_id).order_by("number"))
    late = [
        (hand.settled_at - hand.change_deadline).total_seconds()
        for hand in hands
        if hand.status == HandStatus.SETTLED and hand.settled_at and since <= hand.change_deadline <= until
    ]
    for previous, hand in itertools.pairwise(hands):
        if previous.settled_at is None:
            continue
        due = previous.settled_at + timedelta(seconds=RESULTS_SECONDS)
        if since <= due <= until:
            late.append((hand.started_at - due).total_seconds())
    return late


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("--burst", type=int, default=500, help="concurrent requests per burst")
    parser.add_argument("--bursts", type=int, default=4)
    parser.add_argument("--quiet-seconds", type=int, default=20, help="the no-load window measured first")
    args = parser.parse_args()
    logging.getLogger("httpx").setLevel(logging.WARNING)
    database_url = os.environ.get("DATABASE_URL", "postgres://postgres@127.0.0.1:5432/bench_concurrency")
    workdir = Path(tempfile.mkdtemp(prefix="concurrency-"))
    env = {
        **os.environ,
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": database_url,
        "POKER_BEACON_ALLOW_LOCAL": "1",  # benchmarks run the local beacon on PostgreSQL (docs/deployment.md)
        "REDIS_URL": os.environ.get("REDIS_URL", "redis://127.0.0.1:6379/8"),
        "POKER_REDIS_PREFIX": f"burst{os.getpid()}",
        "DJANGO_SECRET_KEY": "bench-only-key-never-used-in-production-0123456789abcdef",
        "DJANGO_HTTPS": "off",
        "DJANGO_ALLOWED_HOSTS": "127.0.0.1,localhost",
        "POKER_PRESENCE_TIMEOUT_SECONDS": "3600",
        "TABLE_CLOCK": "beat",
    }
    os.environ.clear()
    os.environ.update(env)
    recreate_database(database_url)
    table_id, tokens = prepare()

    from django.utils import timezone

    from wallet.selectors import check_books

    processes: list[subprocess.Popen[bytes]] = []
    failures: list[str] = []

    def start(name: str, command: list[str]) -> subprocess.Popen[bytes]:
        log = (workdir / f"{name}.log").open("w")
        process = subprocess.Popen(command, cwd=ROOT, env=env, stdout=log, stderr=subprocess.STDOUT)
        processes.append(process)
        return process

    try:
        ports = [free_port(), free_port()]
        for index, port in enumerate(ports):
            server = start(
                f"daphne{index}",
                [sys.executable, "-m", "daphne", "-e", endpoint(port), "config.asgi:application"],
            )
            wait_listening(port, server)
        start(
            "worker",
            [sys.executable, "-m", "celery", "-A", "config", "worker", "--concurrency=2", "--loglevel=WARNING"],
        )
        start(
            "beat",
            [
                sys.executable,
                "-m",
                "celery",
                "-A",
                "config",
                "beat",
                "--loglevel=WARNING",
                f"--schedule={workdir / 'beat'}",
            ],
        )
        print(f"logs: {workdir}")
        base_urls = [f"http://127.0.0.1:{port}" for port in ports]

        quiet_start = timezone.now()
        time.sleep(args.quiet_seconds)
        quiet_end = timezone.now()
        outcomes, watched = asyncio.run(run_bursts(base_urls, table_id, tokens, args.burst, args.bursts))
        load_end = timezone.now()
        time.sleep(CHANGE_SECONDS + RESULTS_SECONDS + 2)  # let the steps due in the window happen

        quiet = sorted(clock_lateness(table_id, quiet_start, quiet_end))
        loaded = sorted(clock_lateness(table_id, quiet_end, load_end))
        statuses = Counter(status for status, _ in outcomes)
        served = sorted(seconds for status, seconds in outcomes if status == 200)
        watched_ok = sorted(seconds for status, seconds in watched if status == 200)
        server_errors = sum(count for status, count in statuses.items() if status >= 500 or status < 0)
        if server_errors:
            failures.append(f"{server_errors} server or connection errors")
        if len(watched_ok) != len(watched):
            failures.append(f"the other player got {Counter(s for s, _ in watched)}")
        if not loaded or max(loaded) > 2.0:
            failures.append(f"clock late under load: {loaded}")
        if not check_books().ok:
            failures.append("books do not balance")

        def ms(values: list[float], q: float) -> str:
            return f"{pct(values, q) * 1000:.0f} ms" if values else "-"

        print(
            f"\n## {args.bursts} bursts of {args.burst} concurrent requests from one account, 2 daphne, Celery beat\n"
        )
        print("| measured | value |")
        print("|---|---|")
        print(f"| answers | {', '.join(f'{count} x {status}' for status, count in sorted(statuses.items()))} |")
        print(f"| server errors (5xx) and connection errors | {server_errors} {dict(errors) or ''} |")
        print(f"| served (200) latency p50 / p95 / max | {ms(served, 0.5)} / {ms(served, 0.95)} / {ms(served, 1.0)} |")
        print(
            f"| another player's reads during the bursts | {len(watched_ok)}/{len(watched)} ok, "
            f"p50 {ms(watched_ok, 0.5)}, p95 {ms(watched_ok, 0.95)}, max {ms(watched_ok, 1.0)} |"
        )
        print(f"| clock steps late, no load ({len(quiet)} steps) | max {max(quiet, default=0):.2f} s |")
        print(f"| clock steps late, during the bursts ({len(loaded)} steps) | max {max(loaded, default=0):.2f} s |")
    finally:
        for process in processes:
            process.terminate()
        for process in processes:
            try:
                process.wait(timeout=10)
            except subprocess.TimeoutExpired:
                process.kill()
    if failures:
        print("\nFAILED: " + "; ".join(failures))
        raise SystemExit(1)


if __name__ == "__main__":
    main()
