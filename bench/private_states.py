"""CPU of the private states of a big hand's change frame, in one process (issue 23).

    DATABASE_URL=postgres://postgres@127.0.0.1:5432/bench_private \\
        .venv/bin/python bench/private_states.py 100000 --sockets 10000 --compare /work/main

What a daphne spends on the private states it sends after a change frame (and after every
purchase: ``TableHub.deliver_players``): ``render_private_frames`` of its sockets' players,
read and serialised in slices of ``PRIVATE_SLICE`` (tables/realtime/refresh.py).

1. recreates the scratch database (``bench_*`` only; ``--reuse`` keeps the last one), makes
   N funded players seated at one fun table (``bench/massive.py``'s set-up) and deals the hand;
2. in a fresh process per code tree (this one, and ``--compare``'s, e.g. the main checkout),
   alternating ``--rounds`` times, renders the private states of the first ``--sockets``
   players ``--passes`` times: the first pass computes every probability panel (a new
   hand's change frame), the later ones find them cached (every later refresh). Reports
   CPU (``time.process_time``) and wall ms per private state of each pass and a digest of
   all the texts, which must be the same for both trees (byte-identical frames).
"""

from __future__ import annotations

import argparse
import hashlib
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

ROOT = Path(__file__).resolve().parents[1]
DEFAULT_URL = "postgres://postgres@127.0.0.1:5432/bench_private"
ENV = {
    "DJANGO_SETTINGS_MODULE": "config.settings",
    "POKER_BEACON_ALLOW_LOCAL": "1",
    "POKER_BEACON_PERIOD_SECONDS": "1",
    "DJANGO_SECRET_KEY": "bench-only-key-never-used-in-production-0123456789abcdef",
    "DJANGO_HTTPS": "off",
    "TABLE_CLOCK": "off",
    "POKER_PRESENCE_TIMEOUT_SECONDS": "86400",  # a 100,000-player set-up takes minutes
}


def prepare(players: int, table_id: int | None) -> int:
    """The dealt table's id (its hand in the change phase): a new database and table, or
    ``table_id`` of the last one (dealt if it is not yet)."""
    sys.path.insert(0, str(ROOT))
    from bench.fanout import recreate_database

    if table_id is None:
        recreate_database(os.environ["DATABASE_URL"])
    import django

    django.setup()
    from django.utils import timezone

    from bench.massive import funded_table
    from tables.clock import advance_table
    from tables.models import Seat, Table, TablePhase

    started = time.perf_counter()
    if table_id is None:
        table, _players, _tokens = funded_table(players, prefix="p", change_seconds=600, reference="private-funding")
        table_id = int(table.pk)
    if Table.objects.get(pk=table_id).phase != TablePhase.CHANGE:
        Seat.objects.filter(table_id=table_id).update(last_seen_at=timezone.now(), status="active", left_at=None)
        Table.objects.filter(pk=table_id).update(phase_deadline=timezone.now())
    deadline = time.monotonic() + 300
    while Table.objects.get(pk=table_id).phase != TablePhase.CHANGE:
        if time.monotonic() > deadline:
            raise RuntimeError("the table did not reach its change phase")
        advance_table(table_id=table_id, now=timezone.now())
        time.sleep(0.1)
    print(f"{players:,} players dealt in {time.perf_counter() - started:.1f} s", flush=True)
    return table_id


def backend_cpu(pid: int) -> float:
    """User + system CPU seconds of process ``pid`` (/proc/<pid>/stat: the PostgreSQL backend)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / os.sysconf("SC_CLK_TCK")


def child(table_id: int, sockets: int, passes: int) -> dict[str, Any]:
    """Run in the measured tree (its path first on ``sys.path``): the passes' figures."""
    import django

    django.setup()
    from django.db import connection

    from tables.models import Entry, Table
    from tables.realtime.hub import render_private_frames
    from tables.realtime.refresh import PRIVATE_SLICE

    hand_id = Table.objects.get(pk=table_id).current_hand_id
    assert hand_id is not None, "the table has no running hand"
    users = list(Entry.objects.filter(hand_id=hand_id).order_by("user_id").values_list("user_id", flat=True)[:sockets])
    connection.ensure_connection()
    with connection.cursor() as cursor:
        cursor.execute("SELECT pg_backend_pid()")
        backend = int(cursor.fetchone()[0])
    figures = []
    digest = hashlib.sha256()
    for number in range(passes):
        cpu, wall, pg = time.process_time(), time.perf_counter(), backend_cpu(backend)
        texts: dict[int, str] = {}
        for start in range(0, len(users), PRIVATE_SLICE):
            texts.update(render_private_frames(table_id, set(users[start : start + PRIVATE_SLICE])))
        cpu, wall, pg = time.process_time() - cpu, time.perf_counter() - wall, backend_cpu(backend) - pg
        figures.append(
            {"cpu_ms": 1000 * cpu / len(users), "pg_ms": 1000 * pg / len(users), "wall_ms": 1000 * wall / len(users)}
        )
        if number == 0:
            for user_id in users:
                digest.update(texts[user_id].encode())
            figures[-1]["bytes"] = sum(len(text) for text in texts.values()) / len(users)
    return {"passes": figures, "digest": digest.hexdigest()[:16]}


def measure(tree: Path, table_id: int, sockets: int, passes: int) -> dict[str, Any]:
    """``child`` in a fresh process importing the code of ``tree``."""
    env = {**os.environ, **ENV, "PYTHONPATH": str(tree)}
    code = (
        f"import sys, json; sys.path.insert(0, {str(tree)!r}); sys.path.insert(1, {str(ROOT / 'bench')!r}); "
        f"import private_states; print(json.dumps(private_states.child({table_id}, {sockets}, {passes})))"
    )
    done = subprocess.run([sys.executable, "-c", code], env=env, cwd=tree, capture_output=True, text=True, check=False)
    if done.returncode:
        raise SystemExit(done.stderr)
    result: dict[str, Any] = json.loads(done.stdout.strip().splitlines()[-1])
    return result


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("players", type=int, nargs="?", default=100_000)
    parser.add_argument("--sockets", type=int, default=10_000, help="players whose private states are rendered")
    parser.add_argument("--passes", type=int, default=3, help="renders of every state (the first computes panels)")
    parser.add_argument("--rounds", type=int, default=2, help="alternations of the trees")
    parser.add_argument("--compare", type=Path, help="another checkout to measure the same way (baseline)")
    parser.add_argument("--reuse", type=int, metavar="TABLE_ID", help="skip the set-up: the dealt table's id")
    args = parser.parse_args()
    os.environ.setdefault("DATABASE_URL", DEFAULT_URL)
    os.environ.update(ENV)
    table_id = prepare(args.players, args.reuse)
    if args.reuse is None:
        print(f"table {table_id} (--reuse {table_id} to measure again)", flush=True)
    trees = [("baseline", args.compare.resolve())] if args.compare else []
    trees.append(("this tree", ROOT))
    results: dict[str, list[dict[str, Any]]] = {label: [] for label, _ in trees}
    for _ in range(args.rounds):
        for label, tree in trees:
            load = Path("/proc/loadavg").read_text().split()[0]
            result = measure(tree, table_id, args.sockets, args.passes)
            results[label].append(result)
            shown = ", ".join(
                f"pass {i + 1} CPU {p['cpu_ms']:.3f} + PostgreSQL {p['pg_ms']:.3f} ms, wall {p['wall_ms']:.3f} ms"
                for i, p in enumerate(result["passes"])
            )
            print(
                f"{label:9s} ({tree}): {args.sockets:,} private states, {result['passes'][0]['bytes']:.0f} B each: "
                f"{shown} per state; digest {result['digest']}; load {load}",
                flush=True,
            )
    if args.compare:
        base, ours = results["baseline"], results["this tree"]
        for number in range(args.passes):
            parts: list[str] = []
            for measure_name in ("cpu_ms", "pg_ms", "wall_ms"):
                before = min(r["passes"][number][measure_name] for r in base)
                after = min(r["passes"][number][measure_name] for r in ours)
                parts.append(f"{measure_name[:-3]} {before:.3f} -> {after:.3f} ms (x{before / max(after, 1e-9):.2f})")
            print(f"pass {number + 1}, best of {args.rounds} per state: " + ", ".join(parts))
        same = {r["digest"] for r in base} == {r["digest"] for r in ours}
        print("texts identical" if same else "TEXTS DIFFER", flush=True)


if __name__ == "__main__":
    main()
