"""Fixtures of the browser tests: one daphne server per module, each on a copy of a database
migrated once per session, and one Chromium."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest
from playwright.sync_api import Browser, expect, sync_playwright

from tests.e2e.server import (
    CHROMIUM,
    CHROMIUM_ARGS,
    CREATE_TABLE,
    ROOT,
    SERVER_ENVS,
    SERVER_PROCESSES,
    _drop_redis_keys,
    _free_port,
    _run_postgres,
    _wait_until_serving,
    _with_database,
    _with_user,
)

APP_ROLE = "wp_e2e_app"

# A page's assertions wait up to 15 s, not Playwright's 5: on the project's two cores the
# server, its clock, PostgreSQL and Chromium share the box with the suite, and a hand's
# run-out can take a few clock beats more than on a quiet machine. A wrong state still
# fails, 15 s later.
expect.set_options(timeout=15_000)


# The migrated database every server starts from: migrate, the e2e table and the app role's
# grants are done once per session (15-24 s of each module's set-up on the project's two
# cores), and each module's server gets a copy (PostgreSQL: CREATE DATABASE ... TEMPLATE,
# a file copy; SQLite: a file copy). It is built without the modules' E2E_SERVER_ENV, which
# changes how a server runs, not what the migrations write.
_TEMPLATE: list[str] = []  # its PostgreSQL URL or SQLite path, once built


def _template(env: dict[str, str], workdir: Path) -> str:
    """The template database (PostgreSQL URL, or SQLite path), built once with ``env``."""
    if _TEMPLATE:
        return _TEMPLATE[0]
    env = dict(env)
    database_url = env.get("DATABASE_URL", "")
    if database_url:
        name = f"test_e2e_template_{os.getpid()}"
        _run_postgres(database_url, f'DROP DATABASE IF EXISTS "{name}" WITH (FORCE)')
        _run_postgres(database_url, f'CREATE DATABASE "{name}"')
        env["DATABASE_URL"] = template = _with_database(database_url, name)
    else:
        env["SQLITE_PATH"] = template = str(workdir / "template.sqlite3")
    python = sys.executable
    for command in (["migrate", "--noinput"], ["shell", "-c", CREATE_TABLE]):
        subprocess.run([python, "manage.py", *command], cwd=ROOT, env=env, check=True, capture_output=True)
    if database_url:
        # As in production (README): the owner migrated; the server runs as the app's
        # least-privilege role, which cannot rewrite the ledger or a finished hand. The
        # grants on the tables are copied with the template; CONNECT is the database's own.
        grant = [python, "manage.py", "grant_app_role", APP_ROLE, "--create"]
        subprocess.run(grant, cwd=ROOT, env=env, check=True, capture_output=True)
    _TEMPLATE.append(template)
    return template


@pytest.fixture(scope="session", autouse=True)
def _drop_templates() -> Iterator[None]:
    """Drop the session's template database at its end."""
    yield
    database_url = os.environ.get("DATABASE_URL", "")
    if _TEMPLATE and database_url:
        _run_postgres(database_url, f'DROP DATABASE IF EXISTS "{_TEMPLATE[0].rsplit("/", 1)[-1]}" WITH (FORCE)')
    _TEMPLATE.clear()


@pytest.fixture(scope="module")
def server(tmp_path_factory: pytest.TempPathFactory, request: pytest.FixtureRequest) -> Iterator[str]:
    """A daphne server on a free port with a migrated database and the e2e table."""
    workdir = tmp_path_factory.mktemp("e2e")
    env = {key: value for key, value in os.environ.items() if key != "DJANGO_ALLOW_ASYNC_UNSAFE"}
    # A module sets E2E_TABLE_CLOCK = "off" to play hands itself with an injected clock.
    clock = getattr(request.module, "E2E_TABLE_CLOCK", "in-process")
    env.update(DJANGO_SETTINGS_MODULE="config.settings", TABLE_CLOCK=clock)
    template = _template(env, tmp_path_factory.mktemp("e2e-template"))
    # A module may set E2E_SERVER_ENV, e.g. a low socket rate limit to provoke refusals.
    env.update(getattr(request.module, "E2E_SERVER_ENV", {}))
    database_url = os.environ.get("DATABASE_URL", "")
    database = f"test_e2e_{os.getpid()}"
    if database_url:
        _run_postgres(database_url, f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        _run_postgres(database_url, f'CREATE DATABASE "{database}" TEMPLATE "{template.rsplit("/", 1)[-1]}"')
        _run_postgres(database_url, f'GRANT CONNECT ON DATABASE "{database}" TO {APP_ROLE}')
        env["DATABASE_URL"] = _with_user(_with_database(database_url, database), APP_ROLE)
    else:
        env["SQLITE_PATH"] = str(workdir / "e2e.sqlite3")
        shutil.copyfile(template, env["SQLITE_PATH"])
    prefix = f"e2e{os.getpid()}"
    if os.environ.get("REDIS_URL"):
        env["CHANNEL_LAYER_PREFIX"] = prefix
    python = sys.executable
    port = _free_port()
    log = (workdir / "daphne.log").open("w")
    daphne = Path(python).with_name("daphne")
    process = subprocess.Popen(
        [str(daphne), "-b", "127.0.0.1", "-p", str(port), "config.asgi:application"],
        cwd=ROOT,
        env=env,
        stdout=log,
        stderr=subprocess.STDOUT,
    )
    url = f"http://127.0.0.1:{port}"
    try:
        _wait_until_serving(f"{url}/lobby/tables.json", process)
        SERVER_ENVS[url] = env
        SERVER_PROCESSES[url] = process
        yield url
    finally:
        process.terminate()
        try:
            process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            process.kill()
            process.wait()
        log.close()
        print((workdir / "daphne.log").read_text()[-4000:])  # shown when the test fails
        if database_url:
            _run_postgres(database_url, f'DROP DATABASE IF EXISTS "{database}" WITH (FORCE)')
        if os.environ.get("REDIS_URL"):
            _drop_redis_keys(os.environ["REDIS_URL"], prefix)


@pytest.fixture(scope="module")
def browser() -> Iterator[Browser]:
    if not Path(CHROMIUM).exists() and not shutil.which("chromium"):
        if os.environ.get("CI") == "true":
            pytest.fail(f"{CHROMIUM} is missing and CI=true: browser tests must run in CI")
        pytest.skip(f"{CHROMIUM} is not installed")
    with sync_playwright() as playwright:
        browser = playwright.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS, headless=True)
        yield browser
        browser.close()
