"""The deployment's nginx configuration (deploy/nginx/widerpoker.conf), run as it is in
front of two daphne processes: TLS termination with a certificate made here, a page, the
static files, a game socket's upgrade, readiness without detail, /metrics closed to the
public, and stickiness (one browser session, one daphne). Skipped where Debian's nginx or
openssl is not installed (``apt-get install nginx``)."""

from __future__ import annotations

import json
import os
import shutil
import ssl
import subprocess
import sys
import urllib.error
import urllib.request
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest
from prometheus_client.parser import text_string_to_metric_families

from tests.deploy.harness import ROOT, free_port, start_nginx, wait_http

pytestmark = [
    pytest.mark.skipif(shutil.which("nginx") is None, reason="nginx is not installed (apt-get install nginx)"),
    pytest.mark.skipif(shutil.which("openssl") is None, reason="openssl is not installed"),
    pytest.mark.slow,
]

SETUP = """
from django.contrib.auth import BACKEND_SESSION_KEY, HASH_SESSION_KEY, SESSION_KEY
from django.contrib.auth.models import User
from django.contrib.sessions.backends.db import SessionStore
from tables.widerpoker.services.create import create_table
table = create_table(
    name="Nginx Rail", mode="fun", currency="FUN", ante_minor=100, draw_price_bps=5000, redeal_price_minor=80,
    change_seconds=30,
)
user = User.objects.create_user("nginx-player", password="nginx player pass")
session = SessionStore()
session[SESSION_KEY] = str(user.pk)
session[BACKEND_SESSION_KEY] = "django.contrib.auth.backends.ModelBackend"
session[HASH_SESSION_KEY] = user.get_session_auth_hash()
session.create()
print("SETUP", table.pk, session.session_key)
"""


@dataclass
class Deployment:
    https: int
    http: int
    backends: tuple[int, int]
    table_id: int
    session_key: str
    context: ssl.SSLContext


@pytest.fixture(scope="module")
def deployment(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Deployment]:
    workdir = tmp_path_factory.mktemp("nginx")
    static = workdir / "static"
    static.mkdir()
    (static / "probe.txt").write_text("served by nginx\n")
    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL", "DJANGO_SETTINGS_MODULE"}}
    env.update(
        SQLITE_PATH=str(workdir / "db.sqlite3"),
        DJANGO_SETTINGS_MODULE="config.settings",
        DJANGO_HTTPS="on",  # behind the TLS-terminating proxy, as in production
        DJANGO_NUM_PROXIES="1",
        TABLE_CLOCK="off",
        LOG_FORMAT="json",
    )
    subprocess.run([sys.executable, "manage.py", "migrate", "-v0"], cwd=ROOT, env=env, check=True, timeout=300)
    setup = subprocess.run(
        [sys.executable, "manage.py", "shell", "-c", SETUP],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=120,
        text=True,
        capture_output=True,
    )
    (line,) = [line for line in setup.stdout.splitlines() if line.startswith("SETUP ")]
    _marker, table_id, session_key = line.split()
    backends = (free_port(), free_port())
    daphnes = [
        subprocess.Popen(
            [sys.executable, "-m", "daphne", "-b", "127.0.0.1", "-p", str(port), "config.asgi:application"],
            cwd=ROOT,
            env=env,
            stdout=(workdir / f"daphne-{port}.log").open("w"),
            stderr=subprocess.STDOUT,
        )
        for port in backends
    ]
    nginx, http, https, context = start_nginx(workdir, backends=backends, static=static)
    try:
        for port in backends:
            wait_http(f"http://127.0.0.1:{port}/healthz")
        wait_http(f"https://localhost:{https}/healthz", context)
        yield Deployment(https, http, backends, int(table_id), session_key, context)
    finally:
        for process in (nginx, *daphnes):
            process.terminate()
        for process in (nginx, *daphnes):
            try:
                process.wait(timeout=15)
            except subprocess.TimeoutExpired:
                process.kill()


def get(url: str, context: ssl.SSLContext | None, **headers: str) -> tuple[int, dict[str, str], bytes]:
    request = urllib.request.Request(url, headers=headers)
    opener = urllib.request.build_opener(urllib.request.HTTPSHandler(context=context), NoRedirect())
    try:
        with opener.open(request, timeout=10) as response:
            return response.status, dict(response.headers), response.read()
    except urllib.error.HTTPError as error:
        return error.code, dict(error.headers), error.read()


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, *args: object, **kwargs: object) -> None:
        return None


def test_a_page_is_served_over_tls_with_a_request_id(deployment: Deployment) -> None:
    status, headers, body = get(f"https://localhost:{deployment.https}/", deployment.context)
    assert status == 200
    assert b"WiderPoker" in body
    assert len(headers["X-Request-ID"]) == 32


def test_plain_http_is_sent_to_https(deployment: Deployment) -> None:
    status, headers, _body = get(f"http://localhost:{deployment.http}/lobby?x=1", None)
    assert status == 301
    assert headers["Location"] == "https://localhost/lobby?x=1"


def test_static_files_are_served_by_nginx(deployment: Deployment) -> None:
    status, headers, body = get(f"https://localhost:{deployment.https}/static/probe.txt", deployment.context)
    assert (status, body) == (200, b"served by nginx\n")
    assert "max-age=604800" in headers["Cache-Control"]


def test_readiness_through_nginx_gives_the_status_only_and_metrics_are_not_public(deployment: Deployment) -> None:
    status, _headers, body = get(f"https://localhost:{deployment.https}/readyz", deployment.context)
    assert status == 200
    assert json.loads(body) == {"status": "ok"}
    assert get(f"https://localhost:{deployment.https}/metrics", deployment.context)[0] == 404
    # Prometheus on the host reads each daphne directly, with the detail.
    port = deployment.backends[0]
    assert b"widerpoker_ready 1.0" in get(f"http://127.0.0.1:{port}/metrics", None)[2]
    detail = json.loads(get(f"http://127.0.0.1:{port}/readyz", None)[2])
    assert detail["checks"]["database"]["state"] == "ok"


def test_a_game_socket_upgrades_through_nginx(deployment: Deployment) -> None:
    from websockets.sync.client import connect
    from websockets.typing import Origin

    origin = f"https://localhost:{deployment.https}"
    with connect(
        f"wss://localhost:{deployment.https}/ws/tables/{deployment.table_id}/",
        ssl=deployment.context,
        origin=Origin(origin),
        additional_headers={"Cookie": f"sessionid={deployment.session_key}"},
        open_timeout=20,
    ) as websocket:
        frame = json.loads(websocket.recv(timeout=20))
    assert frame["type"]
    assert frame.get("table", {}).get("id", deployment.table_id) == deployment.table_id


def _lobby_count(port: int) -> float:
    text = get(f"http://127.0.0.1:{port}/metrics", None)[2].decode()
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            if sample.name == "widerpoker_http_requests_total" and sample.labels.get("route") == "/":
                return sample.value
    return 0.0


def test_one_browser_session_stays_on_one_daphne_process(deployment: Deployment) -> None:
    before = [_lobby_count(port) for port in deployment.backends]
    for _ in range(8):
        status, _headers, _body = get(
            f"https://localhost:{deployment.https}/",
            deployment.context,
            Cookie=f"sessionid={deployment.session_key}",
        )
        assert status == 200
    served = sorted(_lobby_count(port) - then for port, then in zip(deployment.backends, before, strict=True))
    assert served == [0, 8]


def test_a_rolling_restart_goes_one_ready_process_at_a_time_and_stops_at_one_not_ready(
    deployment: Deployment, tmp_path: Path
) -> None:
    log = tmp_path / "restarts.log"
    recorder = tmp_path / "restart"
    recorder.write_text(f'#!/bin/sh\necho "$1" >> {log}\n')
    recorder.chmod(0o755)
    env = {**os.environ, "RESTART_COMMAND": str(recorder), "READY_TIMEOUT": "3", "BALANCER_FAIL_TIMEOUT": "0"}
    ports = " ".join(map(str, deployment.backends))
    done = subprocess.run(
        ["bin/rolling-restart"], cwd=ROOT, env={**env, "WEB_PORTS": ports}, capture_output=True, text=True, timeout=60
    )
    assert done.returncode == 0, done.stderr
    first, second = deployment.backends
    assert log.read_text().split() == [
        f"widerpoker-web@{first}",
        f"widerpoker-web@{second}",
        "widerpoker-worker",
        "widerpoker-beat",
    ]
    log.unlink()
    dead = free_port()  # nothing listens there: that process never comes back ready
    stopped = subprocess.run(
        ["bin/rolling-restart"],
        cwd=ROOT,
        env={**env, "WEB_PORTS": f"{first} {dead}"},
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert stopped.returncode == 1
    assert f"widerpoker-web@{dead} is not ready before its restart" in stopped.stderr
    assert not log.exists()  # nothing was restarted while a process was already out
