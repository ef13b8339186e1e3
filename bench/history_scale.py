"""Benchmark: the hand history, the lobby and the auditor's exports with years of data.

Fills a scratch PostgreSQL database with ``--entries`` entries (default 10^7: 100,000 hands
of 100 players over one year at 20 tables) and their ledger legs (an ante transfer of 101
legs and a settlement transfer of 12 legs per hand, ~1.1 x 10^7 legs), all with set-based
``INSERT ... SELECT generate_series`` (no Python row objects), then times what players,
the lobby and auditors read, through the real views and selectors, and prints the
``EXPLAIN (ANALYZE, BUFFERS)`` plan of each main query.

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/massive_history \\
        .venv/bin/python bench/history_scale.py generate --entries 10000000
    DATABASE_URL=postgres://postgres@127.0.0.1:5432/massive_history \\
        .venv/bin/python bench/history_scale.py measure
    # the same measurement with another checkout's code (e.g. before an index migration):
    ... bench/history_scale.py measure --code /tmp/before

``generate`` drops and recreates the database named by ``DATABASE_URL`` (it refuses any name
that does not start with ``massive_`` or ``bench_``: a scratch database only) and migrates it
to the code's migrations. The rows are shaped like real play, not like the application's
invariants: the hash chain, balances and escrows are placeholders (``check_books`` does not
hold on this database), foreign-key triggers are skipped during the load
(``session_replication_role = replica``).

2% of the entries are of players not connected at the end of their hand. Players: user 1
("grinder") played every second hand (50,000 entries at 10^7), users 2..
100,001 share the rest (~100 hands each). The measured day is the 200th of the year.
"""

from __future__ import annotations

import argparse
import os
import statistics
import sys
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]

PLAYERS = 100_000
PER_HAND = 100
TABLES = 20
ANTE = 100
GRINDER = 1
YEAR_START = "2025-11-23 00:00:00+00"
MEASURED_DAY = "2026-06-11"  # day 200 of the generated year


def _setup(code: Path) -> None:
    sys.path.insert(0, str(code))
    os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")
    os.environ.setdefault("POKER_BEACON_ALLOW_LOCAL", "1")  # the local beacon on PostgreSQL (docs/deployment.md)
    os.environ.setdefault("DJANGO_SECRET_KEY", "bench-only-key-never-used-in-production-0123456789abcdef")
    os.environ.setdefault("DJANGO_HTTPS", "off")
    os.environ.setdefault("DJANGO_ALLOWED_HOSTS", "testserver,127.0.0.1")
    import django

    django.setup()


def _database_url() -> str:
    url = os.environ.get("DATABASE_URL", "")
    name = url.rsplit("/", 1)[-1]
    if not url.startswith("postgres") or not name.startswith(("massive_", "bench_")):
        raise SystemExit("DATABASE_URL must name a scratch PostgreSQL database massive_* or bench_*")
    return url


def generate(entries: int) -> None:
    """Recreate the scratch database, migrate it and load ``entries`` entries and their legs."""
    import psycopg

    url = _database_url()
    name = url.rsplit("/", 1)[1]
    with psycopg.connect(url.rsplit("/", 1)[0] + "/postgres", autocommit=True) as admin:
        admin.execute(f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        admin.execute(f'CREATE DATABASE "{name}"')
    _setup(ROOT)
    from django.core.management import call_command

    call_command("migrate", verbosity=0)
    hands = entries // PER_HAND
    seconds_per_hand = 365 * 86400 / hands
    started = time.perf_counter()
    with psycopg.connect(url, autocommit=True) as db:
        db.execute("SET session_replication_role = replica")  # no FK or append-only triggers: a load

        def step(label: str, sql: str, params: dict[str, Any] | None = None) -> None:
            t0 = time.perf_counter()
            db.execute(sql, params)  # SQL built from constants here
            print(f"  {label}: {time.perf_counter() - t0:.1f} s", flush=True)

        step(
            "users",
            """INSERT INTO auth_user (id, password, is_superuser, username, first_name, last_name, email,
                                      is_staff, is_active, date_joined)
               SELECT u, '!', false, CASE WHEN u = 1 THEN 'grinder' ELSE 'p' || u END, '', '', '', false, true,
                      %(start)s::timestamptz
               FROM generate_series(1, %(players)s + 1) u""",
            {"start": YEAR_START, "players": PLAYERS},
        )
        step(
            "tables",
            """INSERT INTO tables_table (id, name, mode, currency, is_open, phase, version, hands_dealt,
                   pending_changes, created_at, game)
               SELECT t, 'Table ' || t, 'fun', 'FUN', true, 'idle', 0, %(hands)s / %(tables)s, '{}'::jsonb,
                      %(start)s::timestamptz, 'widerpoker'
               FROM generate_series(1, %(tables)s) t""",
            {"hands": hands, "tables": TABLES, "start": YEAR_START},
        )
        step(
            "conditions",
            """INSERT INTO tables_widerpokerconditions (table_id, ante_minor, change_seconds, results_seconds,
                   rake_bps, paid_fraction_bps, min_prize_minor, max_draws, redeal_price_minor, max_redeals,
                   redeal_seconds, draw_price_bps)
               SELECT t, %(ante)s, 30, 10, 500, 1000, 0, 5, 80, 3, 10, 5000
               FROM generate_series(1, %(tables)s) t""",
            {"ante": ANTE, "tables": TABLES},
        )
        step(
            "hands",
            """INSERT INTO tables_hand (id, table_id, number, status, server_seed, commitment, board, config,
                   started_at, change_deadline, redeal_deadline, settled_at, entry_count, redeal_count,
                   antes_minor, draws_minor, redeals_minor, gross_minor, rake_minor, carry_in_minor, pool_minor,
                   breakage_minor, leaderboard, cancel_reason, jackpot_results, spin_award_minor, algorithm,
                   beacon_value, chain_seed, not_dealt, jackpot_awards_minor, jackpot_contributions_minor)
               SELECT h, 1 + h %% %(tables)s, 1 + h / %(tables)s, 'settled', md5(h::text) || md5(h::text),
                      md5('c' || h) || md5('c' || h), '{"columns": [], "out": []}'::jsonb,
                      '{"currency": "FUN", "ante_minor": 100}'::jsonb,
                      s, s + interval '30 seconds', s + interval '40 seconds', s + interval '41 seconds',
                      %(per_hand)s, 0, %(per_hand)s * %(ante)s, 0, 0, %(per_hand)s * %(ante)s,
                      %(per_hand)s * %(ante)s / 20, 0, %(per_hand)s * %(ante)s * 19 / 20, 0,
                      '[]'::jsonb, '', '{}'::jsonb, 0, 1, '', '', '[]'::jsonb, 0, 0
               FROM generate_series(1, %(hands)s) h,
                    LATERAL (SELECT %(start)s::timestamptz + h * %(step)s * interval '1 second' AS s) t""",
            {
                "tables": TABLES,
                "per_hand": PER_HAND,
                "ante": ANTE,
                "hands": hands,
                "start": YEAR_START,
                "step": seconds_per_hand,
            },
        )
        # One FUN account per player (id = user id), one escrow per hand, one rake account.
        step(
            "accounts",
            """INSERT INTO wallet_account (id, key, kind, currency, balance_minor, held_minor, created_at, user_id)
               SELECT u, 'player:' || u || ':FUN', 'player', 'FUN', 1000000, 0, %(start)s::timestamptz, u
               FROM generate_series(1, %(players)s + 1) u
               UNION ALL
               SELECT 10000000 + h, 'escrow:hand:' || h, 'escrow', 'FUN', 0, 0, %(start)s::timestamptz, NULL
               FROM generate_series(1, %(hands)s) h
               UNION ALL
               SELECT 9000000, 'house:rake:FUN', 'rake', 'FUN', 0, 0, %(start)s::timestamptz, NULL""",
            {"players": PLAYERS, "hands": hands, "start": YEAR_START},
        )
        step(
            "transfers",
            """INSERT INTO wallet_transfer (id, reference, kind, currency, memo, created_at, chain_hash, sequence)
               SELECT 2 * h - k, CASE k WHEN 1 THEN 'ante:hand:' ELSE 'settle:hand:' END || h,
                      CASE k WHEN 1 THEN 'ante' ELSE 'settlement' END, 'FUN', '', hand.started_at
                          + CASE k WHEN 1 THEN interval '0' ELSE interval '41 seconds' END,
                      md5(h::text || k) || md5(k || h::text), 2 * h - k
               FROM generate_series(1, %(hands)s) h JOIN tables_hand hand ON hand.id = h,
                    (VALUES (1), (0)) AS kk(k)""",
            {"hands": hands},
        )
        chunk = max(1, 1_000_000 // PER_HAND)  # a million entries per statement
        user_expr = (
            f"CASE WHEN j = 0 AND h % 2 = 0 THEN {GRINDER} "
            f"ELSE 2 + ((h * 97 + j * 1009) % {PLAYERS}) END"  # distinct within a hand: 1009 is prime
        )
        for low in range(1, hands + 1, chunk):
            high = min(hands, low + chunk - 1)
            step(
                f"entries of hands {low}..{high}",
                f"""INSERT INTO tables_entry (hand_id, user_id, join_order, initial_combination, combination,
                       redeals, hold_mask, client_seed, hold_at, draws_bought, paid_minor, connected_at_end,
                       hold_used, draw_strengths, best_draw, strength, category, place, prize_minor, promo_minor,
                       jackpot_minor)
                   SELECT h, {user_expr}, j + 1, j * 997, j * 997, '[]'::jsonb, j % 32, '', NULL, 1,
                          {ANTE}, (j * 7 + h) % 50 <> 0, j % 32, NULL, 0, 1000000 - j, j % 10, j + 1,
                          CASE WHEN j < 10 THEN {PER_HAND * ANTE * 19 // 200} ELSE 0 END, 0, 0
                   FROM generate_series({low}, {high}) h, generate_series(0, {PER_HAND - 1}) j""",
            )
            step(
                f"ledger legs of hands {low}..{high}",
                f"""INSERT INTO wallet_ledgerentry (transfer_id, account_id, delta_minor, balance_after_minor)
                   SELECT 2 * h - 1, {user_expr}, -{ANTE}, 1000000
                   FROM generate_series({low}, {high}) h, generate_series(0, {PER_HAND - 1}) j
                   UNION ALL
                   SELECT 2 * h - 1, 10000000 + h, {PER_HAND * ANTE}, {PER_HAND * ANTE}
                   FROM generate_series({low}, {high}) h
                   UNION ALL
                   SELECT 2 * h, CASE WHEN j = 10 THEN 10000000 + h WHEN j = 11 THEN 9000000 ELSE {user_expr} END,
                          CASE WHEN j = 10 THEN -{PER_HAND * ANTE} WHEN j = 11 THEN {PER_HAND * ANTE // 20}
                               ELSE {PER_HAND * ANTE * 19 // 200} END, 0
                   FROM generate_series({low}, {high}) h, generate_series(0, 11) j""",
            )
        for table, column in (
            ("auth_user", "id"),
            ("tables_table", "id"),
            ("tables_hand", "id"),
            ("wallet_account", "id"),
            ("wallet_transfer", "id"),
        ):
            db.execute(
                f"SELECT setval(pg_get_serial_sequence('{table}', '{column}'), (SELECT max({column}) FROM {table}))"
            )
        step("ANALYZE", "ANALYZE")
        for table in ("tables_entry", "wallet_ledgerentry", "tables_hand", "wallet_transfer"):
            # Summed over the partitions (entries and legs are partitioned: a parent has no storage).
            size = db.execute(
                f"SELECT (SELECT count(*) FROM {table}), pg_size_pretty(sum(pg_table_size(relid))), "
                f"pg_size_pretty(sum(pg_indexes_size(relid))) "
                f"FROM (SELECT relid FROM pg_partition_tree('{table}') UNION SELECT '{table}'::regclass) AS t"
            ).fetchone()
            print(f"  {table}: {size[0]:,} rows, table {size[1]}, indexes {size[2]}")  # type: ignore[index]
    print(f"generated {entries:,} entries in {time.perf_counter() - started:.0f} s")


def _timed(label: str, run: Callable[[], Any], repeat: int) -> float:
    run()  # warm: templates, the connection, the plan cache
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        run()
        times.append(time.perf_counter() - t0)
    median = statistics.median(times)
    print(f"| {label} | {median * 1000:,.0f} ms | {min(times) * 1000:,.0f} ms |", flush=True)
    return median


def measure(repeat: int, plans: bool) -> None:
    """Time the reads (median and best of ``repeat``) and print the main queries' plans."""
    _database_url()
    _setup(Path(os.environ["HISTORY_SCALE_CODE"]) if os.environ.get("HISTORY_SCALE_CODE") else ROOT)
    from datetime import date

    from django.contrib.auth.models import User
    from django.test import Client

    from backoffice import auditing
    from backoffice.selectors import day_bounds
    from handhistory import widerpoker as history
    from tables import selectors as table_selectors
    from tables.models import Entry

    staff, _ = User.objects.get_or_create(username="auditor", defaults={"is_staff": True, "is_superuser": True})
    grinder = User.objects.get(pk=GRINDER)
    casual = User.objects.get(pk=2)
    clients = {}
    for user in (staff, grinder, casual):
        clients[user.pk] = Client()
        clients[user.pk].force_login(user)
    day = date.fromisoformat(MEASURED_DAY)

    def get(user: User, path: str) -> int:
        response = clients[user.pk].get(path)
        if response.status_code != 200:
            raise RuntimeError(f"{path}: HTTP {response.status_code}")
        body = b"".join(response.streaming_content) if response.streaming else response.content  # type: ignore[attr-defined]
        return len(body)

    def rows(path: str) -> Callable[[], Any]:
        return lambda: get(staff, path)

    print(f"entries in the database: ~{Entry.objects.order_by().count():,}")
    grinder_rows = history.list_player_hands(user_id=GRINDER).count()
    print(f"grinder's entries: {grinder_rows:,}; measured day {day}\n")
    print("| read | median | best |")
    print("|---|---:|---:|")
    casual_rows = history.list_player_hands(user_id=casual.pk).count()
    last_page = (grinder_rows + 49) // 50
    _timed(f"/history/ page 1, player with {grinder_rows:,} hands", lambda: get(grinder, "/history/"), repeat)
    _timed(
        f"/history/?page={last_page} (the oldest), same player",
        lambda: get(grinder, f"/history/?page={last_page}"),
        repeat,
    )
    _timed(f"/history/ page 1, player with {casual_rows:,} hands", lambda: get(casual, "/history/"), repeat)
    _timed(f"/api/hands/ page 1, player with {grinder_rows:,} hands", lambda: get(grinder, "/api/hands/"), repeat)
    _timed(
        "lobby: game recall of a table (last 10 hands, own results)",
        lambda: table_selectors.list_recent_hands(table_id=1, user_id=GRINDER),
        repeat,
    )
    _timed(
        "lobby: missed result on return (find_missed_result)",
        lambda: table_selectors.find_missed_result(table_id=2, user_id=GRINDER, since=grinder.date_joined),
        repeat,
    )
    query = f"?start={day}&end={day}"
    _timed("auditor: one-day export, hands CSV", rows(f"/backoffice/audit/hands.csv{query}"), repeat)
    _timed("auditor: one-day export, entries CSV", rows(f"/backoffice/audit/entries.csv{query}"), repeat)
    _timed("auditor: one-day export, ledger legs CSV", rows(f"/backoffice/audit/transfers.csv{query}"), repeat)
    _timed("auditor: one-day report by player", rows(f"/backoffice/audit/{query}&group=player"), repeat)
    _timed("auditor: one-day report by day", rows(f"/backoffice/audit/{query}&group=day"), repeat)
    _timed(
        "back-office rake report, 7 days",
        rows(f"/backoffice/rake/?start={day}&end={day.replace(day=day.day + 6)}"),
        repeat,
    )
    if not plans:
        return
    from wallet.models import LedgerEntry

    since, until = day_bounds(day, day)
    for label, queryset in (
        ("history page 1 (grinder)", history.list_player_hands(user_id=GRINDER)[:50]),
        (
            "one-day entries export",
            Entry.objects.filter(hand__in=auditing._terminal_hands(start=day, end=day).values("id")).order_by(
                "hand_id", "join_order"
            )[:100_000],
        ),
        (
            "one-day ledger export",
            LedgerEntry.objects.filter(transfer__created_at__gte=since, transfer__created_at__lt=until).order_by(
                "transfer_id", "id"
            )[:1_000_000],
        ),
        ("one-day hands", auditing._terminal_hands(start=day, end=day).order_by("settled_at", "id")),
    ):
        print(f"\n### {label}\n\n```\n{queryset.explain(analyze=True, buffers=True)}\n```")


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = parser.add_subparsers(dest="command", required=True)
    gen = sub.add_parser("generate")
    gen.add_argument("--entries", type=int, default=10_000_000)
    run = sub.add_parser("measure")
    run.add_argument("--repeat", type=int, default=3)
    run.add_argument("--no-plans", action="store_true")
    run.add_argument("--code", type=Path, help="import the project from this checkout instead")
    args = parser.parse_args()
    if args.command == "generate":
        generate(args.entries)
    else:
        if args.code:
            os.environ["HISTORY_SCALE_CODE"] = str(args.code.resolve())
        measure(args.repeat, not args.no_plans)


if __name__ == "__main__":
    main()
