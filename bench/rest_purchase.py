"""Benchmark: the cost of one REST purchase (hold, draw, redeal) in one process.

What a daphne process's single thread for sync code spends on each REST action during a
big hand (docs/benchmarks.md, "The load harness at 10,000 players"): token authentication,
the throttles, the purchase's statements and the answer (the player's private state), plus
what the process holding the player's socket spends on the private push that follows
(``render_entry_states`` for him, as the hub does). Requests go through Django's test
client with the real middleware, ``Authorization: Token <key>`` and the production
settings of ``DATABASE_URL`` / ``REDIS_URL`` (the database named in the URL is dropped and
re-created, so point it at a scratch name), e.g.:

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_rest REDIS_URL=redis://127.0.0.1:6379/9 \\
        .venv/bin/python bench/rest_purchase.py --players 2000 --buyers 300

Prints, per action, ms per request (wall: median and mean; the thread's CPU: median) and
queries per request, then the same for the hub's private frame of one player. ``--profile`` runs the requests under
pyinstrument (``pip install pyinstrument``) and prints its tree. Not part of the test suite.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from pathlib import Path
from typing import Any

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
os.environ.setdefault("POKER_BEACON_ALLOW_LOCAL", "1")  # the local beacon on PostgreSQL (docs/deployment.md)
os.environ.setdefault("TABLE_CLOCK", "off")
# One clock step deals (algorithm 2): algorithm 3 writes the same rows one step later, after
# its deal round (docs/provably-fair.md, 1.9; bench/deal_wait.py measures the wait).
os.environ.setdefault("POKER_DEAL_ALGORITHM", "2")
os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-key-never-used-in-production-0123456789abcdef")
os.environ.setdefault("DJANGO_HTTPS", "off")
# One client address sends every request: its limit must not refuse them.
os.environ.setdefault("POKER_API_ADDRESS_RATE", "1000000/min")

from bench.fanout import recreate_database
from bench.massive import funded_table


def prepare(players: int) -> tuple[int, list[int], list[str]]:
    """A fun table with a running hand of ``players`` funded entries; returns (table id,
    user ids, token keys)."""
    from django.utils import timezone

    from tables.clock import advance_table
    from tables.models import Table

    table, users, tokens = funded_table(players, prefix="r", change_seconds=600, reference="rest-bench-funding")
    now = timezone.now()
    Table.objects.filter(pk=table.pk).update(phase_deadline=now)
    assert advance_table(table_id=table.pk, now=now), "the hand was not dealt"
    return table.pk, [u.pk for u in users], [t.key for t in tokens]


ROUTES = {"hold": "hold/", "draw": "draws/", "redeal": "redeals/"}


def run(table_id: int, tokens: list[str], user_ids: list[int], *, profile: bool) -> None:
    from django.db import connection
    from django.test import Client
    from django.test.utils import CaptureQueriesContext

    from tables.widerpoker.selectors import render_entry_states

    client = Client(SERVER_NAME="localhost")
    bodies = {"hold": '{"hold": [true, false, true, false, false]}', "draw": "{}", "redeal": "{}"}
    # Warm up (imports, the first connection of the pool, URL resolver).
    half = len(tokens) // 2
    timed_tokens, counted_tokens = tokens[1:half], tokens[half:]
    warm = client.post(
        f"/api/tables/{table_id}/hold/",
        bodies["hold"],
        content_type="application/json",
        headers={"Authorization": f"Token {tokens[0]}"},
    )
    assert warm.status_code == 200, warm.content

    def send(token: str, action: str) -> Any:
        response = client.post(
            f"/api/tables/{table_id}/{ROUTES[action]}",
            bodies[action],
            content_type="application/json",
            headers={"Authorization": f"Token {token}"},
        )
        assert response.status_code == 200, (action, response.content)
        return response

    profiler: Any = None
    if profile:
        from pyinstrument import Profiler

        profiler = Profiler(interval=0.0005)
        profiler.start()
    print("| action | requests | ms/request p50 | mean | CPU ms/request p50 | queries/request |")
    print("|---|---:|---:|---:|---:|---:|")
    for action in ("hold", "draw", "redeal"):
        times, cpu = [], []
        for token in timed_tokens:
            start, start_cpu = time.perf_counter(), time.thread_time()
            send(token, action)
            times.append((time.perf_counter() - start) * 1000)
            cpu.append((time.thread_time() - start_cpu) * 1000)
        counts = []
        for token in counted_tokens[:20]:
            with CaptureQueriesContext(connection) as queries:
                send(token, action)
            counts.append(len(queries.captured_queries))
        print(
            f"| {action} | {len(times)} | {statistics.median(times):.2f} | {statistics.fmean(times):.2f} "
            f"| {statistics.median(cpu):.2f} | {statistics.fmean(counts):.1f} |"
        )
    if profiler is not None:
        profiler.stop()
    # What the process holding a buyer's socket does on each private push (tables/realtime/hub.py,
    # deliver_player): his private frame, read and serialised.
    times, cpu = [], []
    for user_id in user_ids[1:half]:
        start, start_cpu = time.perf_counter(), time.thread_time()
        render_entry_states(table_id=table_id, user_ids={user_id})
        times.append((time.perf_counter() - start) * 1000)
        cpu.append((time.thread_time() - start_cpu) * 1000)
    with CaptureQueriesContext(connection) as queries:
        render_entry_states(table_id=table_id, user_ids={user_ids[1]})
    print(
        f"\nprivate push (hub, one player): {statistics.median(times):.2f} ms p50 "
        f"({statistics.median(cpu):.2f} ms CPU), {len(queries.captured_queries)} queries"
    )
    if profiler is not None:
        print(profiler.output_text(unicode=False, color=False, show_all=False))


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--players", type=int, default=2000, help="entries in the running hand")
    parser.add_argument("--buyers", type=int, default=300, help="players who act (each: hold, draw, redeal)")
    parser.add_argument("--profile", action="store_true", help="pyinstrument's tree of the requests")
    args = parser.parse_args()
    url = os.environ.get("DATABASE_URL", "")
    if url.startswith("postgres"):
        recreate_database(url)
    import django

    django.setup()
    from django.db import connection

    table_id, user_ids, tokens = prepare(args.players)
    print(f"database: {connection.vendor}, {args.players:,} entries, {args.buyers} buyers\n")
    buyers = min(args.buyers, len(tokens))
    run(table_id, tokens[:buyers], user_ids[:buyers], profile=args.profile)


if __name__ == "__main__":
    main()
