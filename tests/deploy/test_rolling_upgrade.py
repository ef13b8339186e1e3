"""A rolling upgrade while a table plays, and a killed daphne and worker, on the production
path (docs/deployment.md, "Rolling upgrade without stopping play"; issue 26).

Two daphne processes behind the shipped nginx site (TLS, consistent hash on the session),
Celery worker and beat driving the clock, PostgreSQL and Redis; a player's game socket
connected through nginx that reconnects as the game page does (static/js/common.js: 0.5 s
doubling, jitter) and pings every second. Each process runs under a small supervisor that
restarts it when it exits, as systemd's ``Restart=always`` does; ``bin/rolling-restart`` is
given a restart command that stops a unit's process and waits for the supervisor's new one,
as ``systemctl restart`` does.

1. **Expand**: a column is added to ``tables_table`` (``ALTER TABLE ... ADD COLUMN``, nullable,
   under a lock timeout) while release N serves and its clock keeps updating the rows.
2. **Roll**: ``bin/rolling-restart`` restarts each daphne, waiting for its readiness, then
   the worker and beat. Meanwhile: ``/readyz`` through nginx answers 200 every time, the
   socket's longest silence stays within one ping plus its first reconnect attempts, no
   hand is cancelled and hands keep settling.
3. **Backfill** in batches, each its own transaction, while the table plays; **contract**
   (the column dropped) at the end. (Not on ``tables_hand``: a settled hand is final and
   its trigger refuses any UPDATE, a backfill included.) The *switch* is a code release; there is none here.
4. A daphne killed (SIGKILL, not restarted): nginx's ``/readyz`` still answers 200, the
   killed one's does not answer, and ``widerpoker_asgi_processes_alive`` falls below its
   earlier maximum (alert ``WiderPokerWebProcessMissing``). The worker killed: readiness
   turns ``degraded`` (still 200) and ``widerpoker_clock_last_tick_age_seconds`` passes the
   threshold of alert ``WiderPokerClockStopped``.

The books check holds at the end. Figures (longest socket gap, hands settled, restart time)
are printed (``-s``) and recorded in docs/deployment.md.
"""

from __future__ import annotations

import itertools
import json
import os
import random
import re
import shutil
import signal
import ssl
import subprocess
import sys
import threading
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pytest
import yaml
from django.conf import settings
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.sessions.backends.db import SessionStore
from django.db import connection
from django.utils import timezone
from prometheus_client.parser import text_string_to_metric_families

from tables.models import Hand, HandStatus, Table
from tables.widerpoker.services.seating import join_table
from tests.conftest import make_player
from tests.deploy.harness import ROOT, free_port, start_nginx, wait_http
from tests.helpers import create_fun_table
from tests.tables.conftest import wait_for
from wallet.selectors import check_books

pytestmark = [
    pytest.mark.django_db(transaction=True),
    pytest.mark.slow,
    pytest.mark.skipif(shutil.which("nginx") is None, reason="nginx is not installed (apt-get install nginx)"),
    pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed"),
    pytest.mark.skipif(
        not (settings.USING_POSTGRES and settings.REDIS_URL),
        reason="needs PostgreSQL and Redis (DATABASE_URL, REDIS_URL)",
    ),
]

ALERTS = ROOT / "deploy/prometheus/alerts.yml"
# The value backfilled: a table's ante, in its WiderPoker conditions row (0 for a table of
# another game, which has none).
ANTE_OF_TABLE = (
    "COALESCE((SELECT c.ante_minor FROM tables_widerpokerconditions c WHERE c.table_id = tables_table.id), 0)"
)
PING_SECONDS = 1.0
RECONNECT_BASE_SECONDS = 0.5  # static/js/common.js RECONNECT_BASE_MS
RECONNECT_MAX_SECONDS = 15.0  # static/js/common.js RECONNECT_MAX_MS

RESTART = """#!/bin/sh
# `systemctl restart <unit>` for the test's supervisor: stop the unit's process, then wait
# until the supervisor has started its successor (it writes the new pid).
pidfile="{units}/$1.pid"
old=$(cat "$pidfile") || exit 1
kill -TERM "$old" || exit 1
tries=0
while [ "$(cat "$pidfile")" = "$old" ]; do
    sleep 0.1
    tries=$((tries + 1))
    if [ "$tries" -gt 900 ]; then exit 1; fi
done
"""


class Supervisor:
    """Runs named processes ("units") and starts a unit again when its process exits, as
    systemd's ``Restart=always`` does (at once: the restart command asked for it); writes
    ``<units>/<unit>.pid``. ``hold`` keeps a unit down."""

    def __init__(self, directory: Path, env: dict[str, str]) -> None:
        self.directory = directory
        self.env = env
        self.commands: dict[str, list[str]] = {}
        self.env_of: dict[str, dict[str, str]] = {}
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        self.held: set[str] = set()
        self.starts: dict[str, int] = {}
        self.stopping = threading.Event()
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._watch, daemon=True)

    def add(self, unit: str, command: list[str], **env: str) -> None:
        self.commands[unit] = command
        self.env_of[unit] = {**self.env, **env}
        self._start(unit)

    def _start(self, unit: str) -> None:
        process = subprocess.Popen(
            self.commands[unit],
            cwd=ROOT,
            env=self.env_of[unit],
            stdout=subprocess.DEVNULL,
            stderr=(self.directory / f"{unit}.log").open("a"),
        )
        self.processes[unit] = process
        self.starts[unit] = self.starts.get(unit, 0) + 1
        pidfile = self.directory / f"{unit}.pid"
        (self.directory / f"{unit}.pid.new").write_text(str(process.pid))
        (self.directory / f"{unit}.pid.new").replace(pidfile)

    def _watch(self) -> None:
        while not self.stopping.is_set():
            with self.lock:
                for unit, process in list(self.processes.items()):
                    if process.poll() is not None and unit not in self.held and not self.stopping.is_set():
                        self._start(unit)
            time.sleep(0.05)

    def kill(self, unit: str) -> None:
        """SIGKILL the unit's process and keep it down (a crash nobody restarts)."""
        with self.lock:
            self.held.add(unit)
            self.processes[unit].send_signal(signal.SIGKILL)
            self.processes[unit].wait(timeout=10)

    def stop(self) -> None:
        self.stopping.set()
        with self.lock:
            for process in self.processes.values():
                if process.poll() is None:
                    process.terminate()
            for process in self.processes.values():
                try:
                    process.wait(timeout=20)
                except subprocess.TimeoutExpired:
                    process.kill()
                    process.wait()


@dataclass(eq=False)  # a thread must stay hashable
class Player(threading.Thread):
    """A game page's socket through nginx: reconnects as static/js/common.js does and pings
    every ``PING_SECONDS``; records each frame's arrival (monotonic seconds)."""

    url: str
    origin: str
    cookie: str
    context: ssl.SSLContext
    frames: list[float] = field(default_factory=list)
    types: list[str] = field(default_factory=list)
    connections: int = 0
    errors: list[str] = field(default_factory=list)
    stopping: threading.Event = field(default_factory=threading.Event)

    def __post_init__(self) -> None:
        threading.Thread.__init__(self, daemon=True)

    def run(self) -> None:
        from websockets.sync.client import connect
        from websockets.typing import Origin

        attempt = 0
        while not self.stopping.is_set():
            try:
                with connect(
                    self.url,
                    ssl=self.context,
                    origin=Origin(self.origin),
                    additional_headers={"Cookie": self.cookie},
                    open_timeout=10,
                ) as websocket:
                    attempt = 0
                    self.connections += 1
                    next_ping = 0.0
                    while not self.stopping.is_set():
                        if time.monotonic() >= next_ping:
                            websocket.send(json.dumps({"type": "ping"}))
                            next_ping = time.monotonic() + PING_SECONDS
                        try:
                            message = websocket.recv(timeout=0.2)
                        except TimeoutError:
                            continue
                        self.frames.append(time.monotonic())
                        self.types.append(str(json.loads(message).get("type")))
            except Exception as error:  # closed, refused, reset: reconnect like the page
                self.errors.append(f"{type(error).__name__}: {error}")
            if self.stopping.is_set():
                return
            ceiling = min(RECONNECT_MAX_SECONDS, RECONNECT_BASE_SECONDS * 2**attempt)
            attempt += 1
            time.sleep(ceiling * (0.5 + random.random() / 2))

    def longest_gap(self, start: float, end: float) -> float:
        times = [start, *[t for t in self.frames if start <= t <= end], end]
        return max(b - a for a, b in itertools.pairwise(times))


class ReadinessPoller(threading.Thread):
    """GET ``url`` every 0.2 s; keeps (monotonic time, HTTP status or the error's name)."""

    def __init__(self, url: str, context: ssl.SSLContext) -> None:
        super().__init__(daemon=True)
        self.url, self.context = url, context
        self.answers: list[tuple[float, int | str]] = []
        self.stopping = threading.Event()

    def run(self) -> None:
        while not self.stopping.is_set():
            status: int | str
            try:
                with urllib.request.urlopen(self.url, timeout=5, context=self.context) as response:
                    status = response.status
            except urllib.error.HTTPError as error:
                status = error.code
            except Exception as error:
                status = type(error).__name__
            self.answers.append((time.monotonic(), status))
            time.sleep(0.2)


def get(url: str, context: ssl.SSLContext | None = None) -> tuple[int, bytes]:
    try:
        with urllib.request.urlopen(url, timeout=5, context=context) as response:
            return response.status, response.read()
    except urllib.error.HTTPError as error:
        return error.code, error.read()


def metric(port: int, name: str) -> float | None:
    """One unlabelled sample of ``name`` from the daphne on ``port`` (loopback: trusted)."""
    text = get(f"http://127.0.0.1:{port}/metrics")[1].decode()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == name:
                return float(sample.value)
    return None


def alert_expression(name: str) -> str:
    rules = yaml.safe_load(ALERTS.read_text())["groups"][0]["rules"]
    (rule,) = [r for r in rules if r.get("alert") == name]
    return str(rule["expr"])


@dataclass
class Site:
    https: int
    web: tuple[int, int]
    context: ssl.SSLContext
    supervisor: Supervisor
    workdir: Path


@pytest.fixture
def site(tmp_path: Path) -> Iterator[Site]:
    """Two daphnes, a Celery worker and beat (supervised), and nginx in front, on the test
    database and Redis, as deploy/systemd runs them."""
    db = connection.settings_dict
    metrics_dir = tmp_path / "metrics"
    metrics_dir.mkdir()
    static = tmp_path / "static"
    static.mkdir()
    units = tmp_path / "units"
    units.mkdir()
    env = {
        **{k: v for k, v in os.environ.items() if k != "DJANGO_SETTINGS_MODULE"},
        "DJANGO_SETTINGS_MODULE": "config.settings",
        "DATABASE_URL": "postgres://{}@{}:{}/{}".format(
            db["USER"] or "postgres", db["HOST"] or "127.0.0.1", db["PORT"] or 5432, db["NAME"]
        ),
        "REDIS_URL": str(settings.REDIS_URL),
        "DJANGO_SECRET_KEY": str(settings.SECRET_KEY),  # sessions and the ledger's seals
        "DJANGO_HTTPS": "on",
        "DJANGO_NUM_PROXIES": "1",
        "TABLE_CLOCK": "beat",
        "LOG_FORMAT": "json",
        "PROMETHEUS_MULTIPROC_DIR": str(metrics_dir),
        # No drand from this machine: the local beacon, which production refuses without this
        # opt-in (docs/deployment.md); the suite's own settings opt in the same way.
        "POKER_BEACON": "local",
        "POKER_BEACON_ALLOW_LOCAL": "1",
        "POKER_BEACON_PERIOD_SECONDS": "1",
        "POKER_PRESENCE_TIMEOUT_SECONDS": "3600",  # the players without a socket stay seated
        "POKER_PRESENCE_HEARTBEAT_SECONDS": "1",
        "POKER_PRESENCE_PROCESS_TIMEOUT_SECONDS": "3",
        "POKER_BOOKS_CHECK_MINUTES": "0",
        "DB_POOL_MIN_SIZE": "1",
        "DB_POOL_MAX_SIZE": "4",
    }
    supervisor = Supervisor(units, env)
    web = (free_port(), free_port())
    celery = [sys.executable, "-m", "celery", "-A", "config"]
    for port in web:
        supervisor.add(
            f"widerpoker-web@{port}",
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "config.asgi:application"],
            POKER_PROCESS_ROLE="web",
        )
    supervisor.add(
        "widerpoker-worker",
        [*celery, "worker", "--pool=solo", "--loglevel=WARNING", "--without-heartbeat", "--without-gossip",
         "--without-mingle"],
        POKER_PROCESS_ROLE="worker",
    )  # fmt: skip
    supervisor.add(
        "widerpoker-beat",
        [*celery, "beat", "--loglevel=WARNING", f"--schedule={tmp_path / 'beat-schedule'}"],
        POKER_PROCESS_ROLE="beat",
    )
    supervisor.thread.start()
    nginx, _http, https, context = start_nginx(tmp_path, backends=web, static=static)
    try:
        for port in web:
            wait_http(f"http://127.0.0.1:{port}/readyz", seconds=120)
        wait_http(f"https://localhost:{https}/healthz", context)
        yield Site(https, web, context, supervisor, tmp_path)
    finally:
        nginx.terminate()
        supervisor.stop()
        nginx.wait(timeout=15)


def session_cookie(user_id: int, hash_: str) -> str:
    session = SessionStore()
    session[SESSION_KEY] = str(user_id)
    session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
    session[HASH_SESSION_KEY] = hash_
    session.create()
    return f"sessionid={session.session_key}"


def open_socket_directly(port: int, table_id: int, cookie: str) -> None:
    """A game socket straight to the daphne on ``port`` (not through nginx): one frame, closed."""
    from websockets.sync.client import connect
    from websockets.typing import Origin

    with connect(
        f"ws://127.0.0.1:{port}/ws/tables/{table_id}/",
        origin=Origin(f"http://127.0.0.1:{port}"),
        additional_headers={"Cookie": cookie},
        open_timeout=20,
    ) as websocket:
        websocket.recv(timeout=20)


def settled(table_id: int) -> int:
    return Hand.objects.filter(table_id=table_id, status=HandStatus.SETTLED).count()


def test_a_rolling_upgrade_with_an_added_column_keeps_play_going_and_a_killed_daphne_and_worker_show(
    site: Site,
) -> None:
    table = create_fun_table("Rolling Rail", change_seconds=5, redeal_seconds=3, results_seconds=1)
    create_fun_table("Idle Rail A")  # two tables nobody sits at: more rows for the backfill
    create_fun_table("Idle Rail B")
    players = [make_player(f"roller{i}") for i in range(3)]
    for person in players:
        join_table(table_id=table.pk, user_id=person.pk, now=timezone.now())
    origin = f"https://localhost:{site.https}"
    player = Player(
        url=f"wss://localhost:{site.https}/ws/tables/{table.pk}/",
        origin=origin,
        cookie=session_cookie(players[0].pk, players[0].get_session_auth_hash()),
        context=site.context,
    )
    player.start()
    poller = ReadinessPoller(f"{origin}/readyz", site.context)
    try:
        wait_for(lambda: settled(table.pk) >= 1, 120, "the clock to settle a first hand")
        assert player.connections >= 1 and "pong" in player.types

        # 1. Expand, while release N serves and the table plays.
        with connection.cursor() as cursor:
            cursor.execute("SET lock_timeout = '2s'")
            cursor.execute("ALTER TABLE tables_table ADD COLUMN rollout_ante_minor bigint NULL")
            cursor.execute("RESET lock_timeout")
        expanded_at = settled(table.pk)
        wait_for(lambda: settled(table.pk) > expanded_at, 60, "a hand settled into the expanded table")

        # 2. Roll every process, one at a time.
        poller.start()
        before = settled(table.pk)
        connections_before = player.connections
        restart = site.workdir / "restart"
        restart.write_text(RESTART.format(units=site.workdir / "units"))
        restart.chmod(0o755)
        started = time.monotonic()
        done = subprocess.run(
            ["bin/rolling-restart"],
            cwd=ROOT,
            env={
                **os.environ,
                "WEB_PORTS": " ".join(map(str, site.web)),
                "RESTART_COMMAND": str(restart),
                "READY_TIMEOUT": "90",
            },
            capture_output=True,
            text=True,
            timeout=300,
        )
        rolled = time.monotonic()
        assert done.returncode == 0, done.stderr
        assert all(site.supervisor.starts[unit] == 2 for unit in site.supervisor.commands), site.supervisor.starts
        during = settled(table.pk) - before
        wait_for(lambda: settled(table.pk) >= before + during + 2, 90, "two hands settled by the new worker")
        ended = time.monotonic()
        poller.stopping.set()
        poller.join(timeout=10)

        gap = player.longest_gap(started, ended)
        reconnects = player.connections - connections_before
        not_ready = [status for _at, status in poller.answers if status != 200]
        cancelled = Hand.objects.filter(table=table, status=HandStatus.CANCELLED).count()
        print(
            f"\nrolling restart {rolled - started:.1f} s; hands settled during it {during}, "
            f"by the end {settled(table.pk) - before}; socket reconnects {reconnects}, longest gap between frames "
            f"{gap:.2f} s; /readyz through nginx {len(poller.answers)} polls, not 200: {len(not_ready)}"
        )
        assert not_ready == [], not_ready
        assert cancelled == 0
        assert reconnects >= 1  # the socket's daphne was restarted: it moved, and came back
        # A closed socket is noticed at once; the silence is at most the ping interval, the
        # page's first two reconnect delays and a TLS handshake on a loaded machine.
        assert gap < PING_SECONDS + RECONNECT_BASE_SECONDS * (1 + 2) + 2.0, (gap, player.errors)

        # 3. Backfill, in batches each its own transaction, while the table plays (on
        # tables_table, the row the clock updates every phase; hands and entries are final
        # once settled and refuse any UPDATE: tables/migrations/0003_hand_records_final.py).
        batches = 0
        while True:
            with connection.cursor() as cursor:
                cursor.execute(
                    f"UPDATE tables_table SET rollout_ante_minor = {ANTE_OF_TABLE} WHERE id IN ("
                    " SELECT id FROM tables_table WHERE rollout_ante_minor IS NULL ORDER BY id LIMIT 1"
                    " FOR UPDATE SKIP LOCKED)"
                )
                if cursor.rowcount == 0:
                    break
                batches += 1
        with connection.cursor() as cursor:
            cursor.execute(
                f"SELECT count(*) FROM tables_table WHERE rollout_ante_minor IS DISTINCT FROM {ANTE_OF_TABLE}"
            )
            assert cursor.fetchone()[0] == 0
        assert batches == Table.objects.count() == 3
        backfilled = settled(table.pk)
        wait_for(lambda: settled(table.pk) > backfilled, 60, "a hand settled after the backfill")

        # 4. A daphne killed and not restarted: nginx still answers ready, the dead one does not.
        # A daphne stamps its heartbeat once it has held a game socket: give each one one.
        cookie = session_cookie(players[1].pk, players[1].get_session_auth_hash())
        for port in site.web:
            open_socket_directly(port, table.pk, cookie)
        wait_for(lambda: metric(site.web[0], "widerpoker_asgi_processes_alive") == 2, 30, "both daphnes' heartbeats")
        alive = 2
        site.supervisor.kill(f"widerpoker-web@{site.web[1]}")
        for _ in range(5):
            assert get(f"{origin}/readyz", site.context)[0] == 200
        with pytest.raises(urllib.error.URLError):
            urllib.request.urlopen(f"http://127.0.0.1:{site.web[1]}/readyz", timeout=5)
        assert alert_expression("WiderPokerWebProcessMissing") == (
            "widerpoker_asgi_processes_alive < max_over_time(widerpoker_asgi_processes_alive[1h])"
        )
        wait_for(
            lambda: metric(site.web[0], "widerpoker_asgi_processes_alive") == alive - 1,
            30,
            "the killed daphne's heartbeat to go silent",
        )

        # The worker killed: no tick; readiness degraded (still serving), the clock alert's
        # threshold passed.
        site.supervisor.kill("widerpoker-worker")
        killed = time.monotonic()
        expression = alert_expression("WiderPokerClockStopped")
        found = re.fullmatch(
            r"widerpoker_clock_last_tick_age_seconds > (\d+) or absent\(widerpoker_clock_last_tick_age_seconds\)",
            expression,
        )
        assert found, expression
        threshold = float(found.group(1))

        def clock_alert_holds(age: float | None) -> bool:
            # Absent too: the shared Redis may be flushed (by other test runs, or a restart).
            return age is None or age > threshold

        ages: list[float | None] = []
        while time.monotonic() < killed + threshold + 30:
            ages.append(metric(site.web[0], "widerpoker_clock_last_tick_age_seconds"))
            if time.monotonic() > killed + threshold + 1 and clock_alert_holds(ages[-1]):
                break
            time.sleep(1)
        assert clock_alert_holds(ages[-1]), ages
        print(f"worker killed: the clock's last tick age {ages[-1]} s after {time.monotonic() - killed:.0f} s")
        status, body = get(f"http://127.0.0.1:{site.web[0]}/readyz")
        detail = json.loads(body)
        assert (status, detail["status"]) == (200, "degraded")
        assert detail["checks"]["clock"]["state"] == "warn"
        assert get(f"{origin}/readyz", site.context) == (200, b'{"status": "degraded"}')

        assert Hand.objects.filter(table=table, status=HandStatus.CANCELLED).count() == 0
        assert check_books().ok
    finally:
        player.stopping.set()
        poller.stopping.set()
        player.join(timeout=15)
        with connection.cursor() as cursor:  # 5. Contract.
            cursor.execute("ALTER TABLE tables_table DROP COLUMN IF EXISTS rollout_ante_minor")
