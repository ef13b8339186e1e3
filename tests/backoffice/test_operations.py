"""Operating it (issue 26): liveness, readiness and metrics through HTTP, as a balancer,
Prometheus, an outsider and staff call them; the alert rules against the metrics served."""

from __future__ import annotations

import json
import time
from collections.abc import Iterator
from datetime import datetime, timedelta
from pathlib import Path
from typing import Any

import pytest
import yaml
from django.contrib.auth.models import User
from django.db import OperationalError, connection
from django.test import Client
from prometheus_client.parser import text_string_to_metric_families

from backoffice import operations
from backoffice.tasks import check_books as check_books_task
from config.infra import ops_state
from tables.models import Hand, Table
from tests.helpers import behind_the_apps_back, deal_hand, logged_in, settle

ROOT = Path(__file__).resolve().parents[2]
OUTSIDER: dict[str, Any] = {"REMOTE_ADDR": "203.0.113.9"}
RELAYED: dict[str, Any] = {"REMOTE_ADDR": "127.0.0.1", "HTTP_X_FORWARDED_FOR": "203.0.113.9"}  # through the local nginx
LOOPBACK: dict[str, Any] = {"REMOTE_ADDR": "127.0.0.1"}


@pytest.fixture(autouse=True)
def _fresh_operations_state() -> Iterator[None]:
    """Readiness and figures are cached a second per process, the clock's tick and the books
    check live in the cache: every test starts without them."""
    from django.core.cache import cache

    cache.clear()
    operations.clear_caches()
    yield
    operations.clear_caches()
    cache.clear()


def samples(text: str) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    """The samples of a Prometheus text page, keyed by (name, sorted labels)."""
    found = {}
    for family in text_string_to_metric_families(text):
        for sample in family.samples:
            found[(sample.name, tuple(sorted(sample.labels.items())))] = sample.value
    return found


def scrape(**extra: Any) -> dict[tuple[str, tuple[tuple[str, str], ...]], float]:
    operations.clear_caches()
    response = Client().get("/metrics", **(extra or LOOPBACK))
    assert response.status_code == 200, response.content[:200]
    assert response["Content-Type"].startswith("text/plain; version=")
    return samples(response.content.decode())


def value(found: dict[tuple[str, tuple[tuple[str, str], ...]], float], name: str, **labels: str) -> float:
    return found.get((name, tuple(sorted(labels.items()))), 0.0)


# --- liveness and readiness -----------------------------------------------------------------


@pytest.mark.django_db
def test_liveness_answers_anyone_with_a_bare_status_and_no_database_query(
    django_assert_num_queries: Any,
) -> None:
    with django_assert_num_queries(0):
        response = Client().get("/healthz", **OUTSIDER)
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}
    assert response["Cache-Control"] == "no-store"


@pytest.mark.django_db
@pytest.mark.parametrize("caller", [OUTSIDER, RELAYED], ids=["outsider", "outsider-through-nginx"])
def test_an_outsider_gets_the_readiness_status_and_no_detail(caller: dict[str, Any]) -> None:
    response = Client().get("/readyz", **caller)
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_readiness_detail_is_given_on_loopback_and_with_the_token_only(settings: Any) -> None:
    settings.OPS_TOKEN = "s3cret-ops-token"
    detail = Client().get("/readyz", **LOOPBACK).json()
    assert detail["status"] == "ok"
    assert set(detail["checks"]) == {"database", "redis", "clock", "beacon", "ledger"}
    assert detail["checks"]["database"]["state"] == "ok"
    assert detail["checks"]["database"]["detail"] == {"postgresql": "postgresql (pool)"}.get(
        connection.vendor, connection.vendor
    )
    with_token = Client().get("/readyz", HTTP_AUTHORIZATION="Bearer s3cret-ops-token", **RELAYED).json()
    assert "checks" in with_token
    wrong = Client().get("/readyz", HTTP_AUTHORIZATION="Bearer guess", **RELAYED).json()
    assert wrong == {"status": "ok"}


@pytest.mark.django_db
def test_readiness_ignores_the_host_check_and_the_https_redirect(settings: Any) -> None:
    """A balancer polls a daphne process directly, by its address, over plain HTTP."""
    settings.ALLOWED_HOSTS = ["poker.example.com"]
    settings.SECURE_SSL_REDIRECT = True
    response = Client().get("/readyz", HTTP_HOST="10.0.0.5:8001", **OUTSIDER)
    assert response.status_code == 200
    assert response.json() == {"status": "ok"}


@pytest.mark.django_db
def test_readiness_is_computed_once_a_second_for_a_balancer_polling_it(
    django_assert_num_queries: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    # The readiness cache's clock stands still within the second, however slow a loaded box
    # serves the five requests; a second later the checks run again.
    now = [1000.0]
    monkeypatch.setattr(operations._readiness, "clock", lambda: now[0])
    Client().get("/readyz", **OUTSIDER)
    with django_assert_num_queries(0):
        for _ in range(5):
            assert Client().get("/readyz", **OUTSIDER).status_code == 200
    now[0] += operations.READINESS_CACHE_SECONDS
    with django_assert_num_queries(1):
        assert Client().get("/readyz", **OUTSIDER).status_code == 200


@pytest.mark.django_db
def test_an_unreachable_database_makes_the_process_unavailable(monkeypatch: pytest.MonkeyPatch) -> None:
    def refuse(*args: Any, **kwargs: Any) -> Any:
        raise OperationalError("connection refused")

    monkeypatch.setattr("backoffice.operations._ping_database", refuse)
    outsider = Client().get("/readyz", **OUTSIDER)
    assert outsider.status_code == 503
    assert outsider.json() == {"status": "unavailable"}
    operations.clear_caches()
    detail = Client().get("/readyz", **LOOPBACK).json()
    assert detail["checks"]["database"] == {
        "state": "fail",
        "detail": "OperationalError",
        "seconds": detail["checks"]["database"]["seconds"],
    }


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the connection pool is PostgreSQL's")
@pytest.mark.django_db
def test_an_exhausted_pool_fails_readiness_in_two_seconds_not_the_requests_thirty() -> None:
    from psycopg_pool import PoolTimeout

    pool = getattr(connection, "pool")  # noqa: B009  # PostgreSQL's wrapper only: django-stubs types the base
    held = []
    try:
        while True:
            try:
                held.append(pool.getconn(timeout=0.2))
            except PoolTimeout:
                break
        started = time.perf_counter()
        response = Client().get("/readyz", **LOOPBACK)
        waited = time.perf_counter() - started
    finally:
        for raw in held:
            pool.putconn(raw)
    assert response.status_code == 503
    assert response.json()["checks"]["database"]["detail"] == "PoolTimeout"
    assert waited < operations.READINESS_DATABASE_TIMEOUT_SECONDS + 1.5


@pytest.mark.skipif(connection.vendor != "postgresql", reason="the connection pool is PostgreSQL's")
@pytest.mark.django_db(transaction=True)
def test_a_fresh_process_is_ready_at_its_first_poll_before_any_other_query() -> None:
    """Django opens its pool at a process's first query; a balancer's first poll comes first."""
    import os
    import subprocess
    import sys

    db = connection.settings_dict
    env = {
        **os.environ,
        "DATABASE_URL": f"postgres://{db['USER']}@{db['HOST'] or '127.0.0.1'}:{db['PORT'] or 5432}/{db['NAME']}",
        "DJANGO_SETTINGS_MODULE": "config.settings_test",
    }
    code = (
        "import django; django.setup(); from django.test import Client; "
        "print(Client().get('/readyz', REMOTE_ADDR='127.0.0.1').content.decode())"
    )
    result = subprocess.run(
        [sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True, timeout=120, check=True
    )
    body = json.loads(result.stdout.strip().splitlines()[-1])
    assert body["checks"]["database"] == {
        "state": "ok",
        "detail": "postgresql (pool)",
        "seconds": body["checks"]["database"]["seconds"],
    }


@pytest.mark.django_db
def test_a_late_clock_makes_the_process_degraded_but_keeps_it_in_the_balancer(settings: Any) -> None:
    settings.TABLE_CLOCK = "beat"
    ops_state.record_tick(duration_seconds=0.1, advanced=1, at=time.time() - 60)
    response = Client().get("/readyz", **LOOPBACK)
    assert response.status_code == 200
    body = response.json()
    assert body["status"] == "degraded"
    assert body["checks"]["clock"]["state"] == "warn"
    assert body["checks"]["clock"]["seconds"] >= 59


@pytest.mark.django_db
def test_a_clock_that_never_ticked_is_late_only_once_the_process_is_older_than_the_threshold(
    settings: Any, monkeypatch: pytest.MonkeyPatch
) -> None:
    settings.TABLE_CLOCK = "in-process"
    monkeypatch.setattr(operations, "STARTED_AT", time.time() - 2)
    assert Client().get("/readyz", **LOOPBACK).json()["checks"]["clock"]["state"] == "ok"
    operations.clear_caches()
    monkeypatch.setattr(operations, "STARTED_AT", time.time() - 60)
    body = Client().get("/readyz", **LOOPBACK).json()
    assert (body["status"], body["checks"]["clock"]["state"]) == ("degraded", "warn")


@pytest.mark.django_db
def test_a_silent_beacon_is_reported_from_its_first_failure() -> None:
    ops_state.record_beacon(ok=True, at=time.time() - 100)
    ops_state.record_beacon(ok=False, at=time.time() - 40)
    ops_state.record_beacon(ok=False, at=time.time() - 5)  # still failing: the start stays
    body = Client().get("/readyz", **LOOPBACK).json()
    assert body["status"] == "degraded"
    assert body["checks"]["beacon"]["state"] == "warn"
    assert 39 <= body["checks"]["beacon"]["seconds"] < 60
    ops_state.record_beacon(ok=True)
    operations.clear_caches()
    assert Client().get("/readyz", **LOOPBACK).json()["checks"]["beacon"]["state"] == "ok"


# --- metrics --------------------------------------------------------------------------------


@pytest.mark.django_db
@pytest.mark.parametrize("caller", [OUTSIDER, RELAYED], ids=["outsider", "outsider-through-nginx"])
def test_metrics_are_not_found_for_an_outsider(caller: dict[str, Any]) -> None:
    response = Client().get("/metrics", **caller)
    assert response.status_code == 404
    assert b"widerpoker" not in response.content


@pytest.mark.django_db
def test_staff_logged_in_do_not_read_metrics_from_outside_but_the_token_does(croupier: User, settings: Any) -> None:
    assert logged_in(croupier).get("/metrics", **OUTSIDER).status_code == 404
    settings.OPS_TOKEN = "s3cret-ops-token"
    response = Client().get("/metrics", HTTP_AUTHORIZATION="Bearer s3cret-ops-token", **OUTSIDER)
    assert response.status_code == 200
    assert b"widerpoker_ready 1.0" in response.content


@pytest.mark.django_db(transaction=True)
def test_hands_dealt_and_settled_are_counted_when_they_commit_with_their_durations(
    fun_table: Table, alice: User, bob: User, now: datetime
) -> None:
    before = scrape()
    deal_hand(fun_table, [alice, bob], now - timedelta(seconds=31))
    settle(fun_table)
    after = scrape()
    for event in ("dealt", "settled"):
        counted = value(after, "widerpoker_hands_total", game="widerpoker", event=event)
        assert counted - value(before, "widerpoker_hands_total", game="widerpoker", event=event) == 1
    for histogram in ("widerpoker_deal_duration_seconds_count", "widerpoker_settlement_duration_seconds_count"):
        assert value(after, histogram, game="widerpoker") - value(before, histogram, game="widerpoker") == 1


@pytest.mark.django_db(transaction=True)
@pytest.mark.usefixtures("fresh_throttle_counters")
def test_purchases_are_counted_confirmed_and_refused_by_their_code(
    fun_table: Table, alice: User, bob: User, carol: User, now: datetime
) -> None:
    from django.utils import timezone

    deal_hand(fun_table, [alice, bob], timezone.now())
    before = scrape()
    assert logged_in(alice).post(f"/api/tables/{fun_table.pk}/draws/").status_code == 200
    refused = logged_in(carol).post(f"/api/tables/{fun_table.pk}/draws/")
    assert refused.status_code >= 400
    code = refused.json()["code"]
    after = scrape()
    confirmed = {"game": "widerpoker", "action": "buy_draw", "outcome": "confirmed", "reason": ""}
    refusal = {"game": "widerpoker", "action": "buy_draw", "outcome": "refused", "reason": code}
    assert (
        value(after, "widerpoker_player_actions_total", **confirmed)
        - value(before, "widerpoker_player_actions_total", **confirmed)
        == 1
    )
    assert (
        value(after, "widerpoker_player_actions_total", **refusal)
        - value(before, "widerpoker_player_actions_total", **refusal)
        == 1
    )


@pytest.mark.django_db
def test_requests_are_counted_by_route_pattern_not_by_path(fun_table: Table, alice: User) -> None:
    before = scrape()
    client = logged_in(alice)
    assert client.get(f"/tables/{fun_table.pk}/").status_code == 200
    assert client.get("/tables/999999/").status_code == 404
    after = scrape()
    route = "/tables/<int:table_id>/"
    assert (
        value(after, "widerpoker_http_requests_total", route=route, method="GET", status="200")
        - value(before, "widerpoker_http_requests_total", route=route, method="GET", status="200")
        == 1
    )
    assert (
        value(after, "widerpoker_http_requests_total", route=route, method="GET", status="404")
        - value(before, "widerpoker_http_requests_total", route=route, method="GET", status="404")
        == 1
    )
    assert not [key for key in after if "999999" in str(key)]


@pytest.mark.django_db
def test_each_open_table_reports_how_late_its_clock_is(fun_table: Table, alice: User, bob: User) -> None:
    from django.utils import timezone

    deal_hand(fun_table, [alice, bob], timezone.now() - timedelta(seconds=45))  # deadline 15 s ago
    found = scrape()
    late = value(found, "widerpoker_table_clock_late_seconds", table=str(fun_table.pk), game="widerpoker")
    assert 14 <= late < 30
    assert value(found, "widerpoker_table_clock_max_late_seconds") == late
    assert value(found, "widerpoker_open_hands") == 1
    assert 44 <= value(found, "widerpoker_oldest_open_hand_age_seconds") < 60


@pytest.mark.django_db(transaction=True)
def test_the_books_check_from_beat_is_reported_intact_then_not(settled_hand: Hand) -> None:
    assert ("widerpoker_books_intact", ()) not in scrape()  # never ran: absent, not "intact"
    check_books_task.delay()
    found = scrape()
    assert value(found, "widerpoker_books_intact") == 1
    assert time.time() - value(found, "widerpoker_books_last_check_timestamp_seconds") < 60
    from wallet.models import LedgerEntry

    with behind_the_apps_back():
        entry = LedgerEntry.objects.filter(delta_minor__gt=0).order_by("pk").first()
        assert entry is not None
        LedgerEntry.objects.filter(pk=entry.pk).update(delta_minor=entry.delta_minor + 1)
    check_books_task.delay()
    assert value(scrape(), "widerpoker_books_intact") == 0


# --- alert rules ------------------------------------------------------------------------------


@pytest.mark.django_db
def test_the_alert_rules_cover_what_an_operator_must_hear_of_and_name_served_metrics(
    fun_table: Table, alice: User, bob: User
) -> None:
    import re

    rules = yaml.safe_load((ROOT / "deploy/prometheus/alerts.yml").read_text())
    (group,) = rules["groups"]
    alerts = {rule["alert"]: rule for rule in group["rules"]}
    for name in (
        "WiderPokerClockStopped",
        "WiderPokerTablesLate",
        "WiderPokerBooksNotIntact",
        "WiderPokerBeaconSilent",
        "WiderPokerCancellationsRising",
        "WiderPokerNotReady",
        "WiderPokerWebProcessMissing",
    ):
        assert name in alerts
    for rule in alerts.values():
        assert set(rule) <= {"alert", "expr", "for", "labels", "annotations"}
        assert rule["labels"]["severity"] in {"page", "ticket"}
        assert rule["annotations"]["summary"] and rule["annotations"]["description"]
        if "for" in rule:
            assert re.fullmatch(r"\d+[smh]", rule["for"])
    # Every widerpoker_* series an expression names is one /metrics serves (a renamed metric
    # would silently never fire). Counters appear once something was counted: deal a hand.
    from django.utils import timezone

    deal_hand(fun_table, [alice, bob], timezone.now())
    ops_state.record_tick(duration_seconds=0.1, advanced=1)
    ops_state.record_books_check(ok=True, findings=0, duration_seconds=0.1)
    Client().get("/")
    served = {name for name, _labels in scrape()}
    from prometheus_client.metrics import MetricWrapperBase

    from config.infra import metrics

    declared = {
        family.name + suffix
        for metric in vars(metrics).values()
        if isinstance(metric, MetricWrapperBase)
        for family in metric.describe()
        for suffix in ("", "_total", "_count", "_sum", "_bucket")
    }
    for rule in alerts.values():
        for name in re.findall(r"widerpoker_[a-z_]+", rule["expr"]):
            assert name in served or name in declared, f"{rule['alert']}: {name} is not a metric"


# --- the status page -------------------------------------------------------------------------


@pytest.mark.django_db
def test_players_and_outsiders_are_sent_to_the_staff_login_from_the_status_page(alice: User) -> None:
    for client in (Client(), logged_in(alice)):
        response = client.get("/backoffice/status/")
        assert response.status_code == 302
        assert "/admin/login/" in response["Location"]


@pytest.mark.django_db
def test_an_auditor_reads_the_clock_the_beacon_the_books_the_processes_and_the_open_hands(
    auditor: User, fun_table: Table, alice: User, bob: User, settings: Any
) -> None:
    from django.utils import timezone

    from tables.services.presence import beat

    settings.TABLE_CLOCK = "beat"
    deal_hand(fun_table, [alice, bob], timezone.now() - timedelta(seconds=45))
    beat(now=timezone.now(), process_id="a" * 32)
    ops_state.record_tick(duration_seconds=0.25, advanced=3, at=time.time() - 2)
    ops_state.record_beacon(ok=False, at=time.time() - 20)
    ops_state.record_books_check(ok=False, findings=2, duration_seconds=1.5)
    response = logged_in(auditor).get("/backoffice/status/")
    assert response.status_code == 200
    page = response.content.decode()
    figures = response.context["figures"]
    assert [t.table_id for t in figures.open_hands] == [fun_table.pk]
    assert f'data-table="{fun_table.pk}"' in page
    assert "Not intact" in page and "2 finding(s)" in page
    assert "Silent since" in page and response.context["beacon_failing_since"] is not None
    assert "aaaaaaaa" in page  # the process's id, with its heartbeat
    assert 'data-check="clock" data-state="ok"' in page
    assert 'data-check="beacon" data-state="warn"' in page
    # The same figures as the metrics.
    found = scrape()
    assert value(found, "widerpoker_open_hands") == len(figures.open_hands)
    assert value(found, "widerpoker_books_intact") == 0
    assert value(found, "widerpoker_asgi_processes_alive") == 1


@pytest.mark.django_db(transaction=True)
def test_a_croupier_who_is_not_a_superuser_reads_the_status_page(db: Any) -> None:
    from django.contrib.auth.models import Group
    from django.core.management import call_command

    call_command("create_staff_groups")
    user = User.objects.create_user(username="dealer", password="dealer pass 1", is_staff=True)
    user.groups.add(Group.objects.get(name="Croupiers"))
    response = logged_in(user).get("/backoffice/status/")
    assert response.status_code == 200
    assert "Platform status" in response.content.decode()


# --- structured logs ---------------------------------------------------------------------------


@pytest.mark.django_db
def test_a_request_logs_json_lines_with_the_request_id_nginx_gave_it(settings: Any) -> None:
    import io
    import json
    import logging

    from config.infra.observability import ContextFilter

    formatter_config = dict(settings.LOGGING["formatters"]["json"])
    factory = formatter_config.pop("()")
    module, _, name = factory.rpartition(".")
    formatter = getattr(__import__(module, fromlist=[name]), name)(**formatter_config)
    stream = io.StringIO()
    handler = logging.StreamHandler(stream)
    handler.setFormatter(formatter)
    handler.addFilter(ContextFilter())
    logger = logging.getLogger("django.request")
    logger.addHandler(handler)
    try:
        response = Client().get("/no-such-page/", HTTP_X_REQUEST_ID="req-0123456789abcdef")
        bogus = Client().get("/no-such-page/", HTTP_X_REQUEST_ID="bad id\nwith a newline")
    finally:
        logger.removeHandler(handler)
    assert response.status_code == 404
    assert response["X-Request-ID"] == "req-0123456789abcdef"
    assert bogus["X-Request-ID"] != "bad id\nwith a newline" and len(bogus["X-Request-ID"]) == 32
    first, second = (json.loads(line) for line in stream.getvalue().splitlines())
    assert first["request_id"] == "req-0123456789abcdef"
    assert first["level"] == "WARNING" and first["logger"] == "django.request"
    assert first["role"] == "web" and isinstance(first["pid"], int) and "time" in first
    assert second["request_id"] == bogus["X-Request-ID"]


def test_the_log_format_is_json_in_production_and_refuses_a_typo() -> None:
    import os
    import subprocess
    import sys

    def load(**env: str) -> subprocess.CompletedProcess[str]:
        code = "import config.settings as s; print(s.LOG_FORMAT)"
        clean = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL", "LOG_FORMAT"}}
        return subprocess.run(
            [sys.executable, "-c", code], env={**clean, **env}, cwd=ROOT, capture_output=True, text=True, timeout=60
        )

    assert load().stdout.strip() == "text"
    production = {"REDIS_URL": "redis://127.0.0.1:6379/0", "DJANGO_SECRET_KEY": "k" * 50}
    assert load(**production).stdout.strip() == "json"
    assert load(**production, LOG_FORMAT="text").stdout.strip() == "text"
    typo = load(**production, LOG_FORMAT="jsno")
    assert typo.returncode != 0 and "LOG_FORMAT='jsno' is not one of json, text" in typo.stderr


def test_in_multiprocess_mode_one_scrape_adds_up_every_process(tmp_path: Path) -> None:
    """The systemd units set PROMETHEUS_MULTIPROC_DIR: a hand counted in the worker and a
    socket opened in each daphne are all in the one /metrics any daphne serves."""
    import os
    import subprocess
    import sys

    env = {k: v for k, v in os.environ.items() if k not in {"DATABASE_URL", "REDIS_URL"}}
    env.update(
        PROMETHEUS_MULTIPROC_DIR=str(tmp_path),
        DJANGO_SETTINGS_MODULE="config.settings_test",
        SQLITE_PATH=str(tmp_path / "empty.sqlite3"),
    )
    setup = "import django; django.setup(); from config.infra import metrics; "
    count = "metrics.HANDS.labels('widerpoker', 'dealt').inc(3); metrics.SOCKETS_OPEN.inc(2); "
    # Two processes: one exits (marked dead at exit: its live gauges go), one is killed
    # (os._exit skips the exit hooks, as a crash would: its gauges stay until the directory
    # is emptied at the platform's next start).
    for ending in ("", "import os; os._exit(0)"):
        subprocess.run([sys.executable, "-c", setup + count + ending], cwd=ROOT, env=env, check=True, timeout=120)
    scraped = subprocess.run(
        [
            sys.executable,
            "-c",
            setup + "from django.test import Client; "
            "print(Client().get('/metrics', REMOTE_ADDR='127.0.0.1').content.decode())",
        ],
        cwd=ROOT,
        env=env,
        check=True,
        timeout=120,
        capture_output=True,
        text=True,
    )
    found = samples(scraped.stdout)
    assert value(found, "widerpoker_hands_total", game="widerpoker", event="dealt") == 6
    # Sockets are "liveall": one series per live process (by pid label): the killed one's
    # two and the scraping process's zero; counters keep the exited process's three.
    sockets = sorted(v for (name, _labels), v in found.items() if name == "widerpoker_websockets_open")
    assert sockets == [0.0, 2.0]
