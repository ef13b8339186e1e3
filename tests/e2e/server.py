"""The e2e server and browser: a daphne subprocess on its own database and Redis prefix,
and Debian's Chromium driven by Playwright. Fixtures are in ``conftest.py``."""

from __future__ import annotations

import socket
import subprocess
import sys
import time
import urllib.error
import urllib.request
from pathlib import Path
from urllib.parse import urlsplit, urlunsplit

ROOT = Path(__file__).resolve().parents[2]
CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-quic",
    "--no-first-run",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
]
TABLE = "E2E Sprint"
ANTE, DRAW_PRICE, REDEAL_PRICE = 100, 50, 80
CHANGE_SECONDS = 15
# Long enough to read the results and sit out before the clock would deal the next hand.
RESULTS_SECONDS = 40
CREATE_TABLE = f"""
from tables.models import Table
from tables.widerpoker.services.create import create_table
if not Table.objects.filter(name={TABLE!r}).exists():
    create_table(name={TABLE!r}, mode="fun", currency="FUN", ante_minor={ANTE},
                 draw_price_bps={DRAW_PRICE * 10_000 // ANTE}, redeal_price_minor={REDEAL_PRICE},
                 change_seconds={CHANGE_SECONDS}, results_seconds={RESULTS_SECONDS},
                 redeal_seconds=10)
"""
# The environment of each running e2e server, by its URL (for ``manage``).
SERVER_ENVS: dict[str, dict[str, str]] = {}
# The daphne process of each running e2e server, by its URL (a test may kill it).
SERVER_PROCESSES: dict[str, subprocess.Popen[bytes]] = {}


def manage(server: str, *args: str) -> str:
    """Run ``manage.py <args>`` against the e2e server's database; return its output."""
    result = subprocess.run(
        [sys.executable, "manage.py", *args],
        cwd=ROOT,
        env=SERVER_ENVS[server],
        capture_output=True,
        text=True,
    )
    if result.returncode != 0:
        raise RuntimeError(f"manage.py {args[0]} failed:\n{result.stderr[-3000:]}")
    return result.stdout


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return int(probe.getsockname()[1])


def _postgres_admin(database_url: str) -> str:
    """The same server, connected to its maintenance database."""
    parts = urlsplit(database_url)
    return urlunsplit(parts._replace(path="/postgres"))


def _with_database(database_url: str, name: str) -> str:
    return urlunsplit(urlsplit(database_url)._replace(path=f"/{name}"))


def _with_user(database_url: str, user: str) -> str:
    """The same database, connected as ``user`` (trust or peer authentication assumed)."""
    parts = urlsplit(database_url)
    host = parts.netloc.rsplit("@", 1)[-1]
    return urlunsplit(parts._replace(netloc=f"{user}@{host}"))


def _run_postgres(database_url: str, statement: str) -> None:
    import psycopg

    with psycopg.connect(_postgres_admin(database_url), autocommit=True) as connection:
        connection.execute(statement)


def _drop_redis_keys(redis_url: str, prefix: str) -> None:
    """Forget the channel-layer groups the killed server left behind."""
    import redis

    client = redis.Redis.from_url(redis_url)
    for key in client.scan_iter(f"{prefix}*"):
        client.delete(key)
    client.close()


def _wait_until_serving(url: str, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        if process.poll() is not None:
            raise RuntimeError(f"daphne exited with code {process.returncode}")
        try:
            with urllib.request.urlopen(url, timeout=2) as response:
                if response.status == 200:
                    return
        except (urllib.error.URLError, ConnectionError, TimeoutError):
            time.sleep(0.2)
    raise RuntimeError(f"{url} did not answer within 30 s")
