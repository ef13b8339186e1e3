"""Settings for the WiderPoker operator platform, read from the environment.

Two configurations, same code:

* **Embedded default** (no environment variables): SQLite in ``var/``, the in-memory
  channel layer, the table clock running inside the one ASGI process, Celery tasks run
  eagerly. ``bin/run`` starts it.
* **Production**: ``DATABASE_URL`` (PostgreSQL) and ``REDIS_URL`` switch to PostgreSQL,
  the Redis channel layer, a Celery worker and Celery beat driving the table clock, and
  any number of daphne processes. See README.md, "Production".

The environment's readers, the services' URLs and the secret key are config/settings_env.py;
the game platform's knobs are config/settings_poker.py, imported here (every setting is a
name of this module, ``DJANGO_SETTINGS_MODULE=config.settings``).
"""

from __future__ import annotations

import hashlib
from datetime import timedelta
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from django.core.exceptions import ImproperlyConfigured

# The settings read first (the services' URLs, the secret key), named here as settings.
from config.settings_env import BASE_DIR as BASE_DIR
from config.settings_env import DATABASE_URL as DATABASE_URL
from config.settings_env import DEBUG as DEBUG
from config.settings_env import EMBEDDED_DEFAULT as EMBEDDED_DEFAULT
from config.settings_env import REDIS_URL as REDIS_URL
from config.settings_env import SECRET_KEY as SECRET_KEY
from config.settings_env import VAR_DIR as VAR_DIR
from config.settings_env import _bool, _choice, _float, _int, env

# The key that seals the ledger's hash chain (wallet/chain.py). It lives only in the app's
# environment, never in the database. Set POKER_LEDGER_KEY to keep verifying old seals
# across a rotation of DJANGO_SECRET_KEY.
LEDGER_KEY: str = (
    env.str("POKER_LEDGER_KEY", default="") or hashlib.sha256(b"wp-ledger-key:" + SECRET_KEY.encode()).hexdigest()
)
# How transfers are sealed into the chain (wallet/chain.py): "tail" (default) seals at the
# end of a transfer when no other transaction holds the currency's chain head, else leaves
# it to the next one or the clock, without waiting; "wait": every transfer waits for the
# head (the old behaviour, one sealed transfer at a time per currency; bench/ledger.py);
# "batch": no transfer touches the head, the clock's seal_pending seals them in batches.
LEDGER_SEAL: str = _choice("POKER_LEDGER_SEAL", ("tail", "wait", "batch"), "tail")
# A transfer unsealed for longer than this is reported (verify_books, readiness, metrics).
LEDGER_SEAL_LAG_SECONDS: int = _int("POKER_LEDGER_SEAL_LAG_SECONDS", 30, minimum=2)
# Rake accounts per currency: a hand's rake goes to rake:<CUR> (table id % N == 0) or to
# rake:<CUR>:<table id % N>, so raked settlements of many tables do not queue on one row.
RAKE_ACCOUNTS: int = _int("POKER_RAKE_ACCOUNTS", 1, minimum=1, maximum=1024)
ALLOWED_HOSTS: list[str] = env.list("DJANGO_ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS: list[str] = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])
for _origin in CSRF_TRUSTED_ORIGINS:
    if urlsplit(_origin).scheme not in {"http", "https"} or not urlsplit(_origin).netloc:
        raise ImproperlyConfigured(
            f"DJANGO_CSRF_TRUSTED_ORIGINS: {_origin!r} is not an origin like https://host[:port]"
        )

INSTALLED_APPS = [
    "daphne",
    "django.contrib.admin",
    "django.contrib.auth",
    "django.contrib.contenttypes",
    "django.contrib.sessions",
    "django.contrib.messages",
    "whitenoise.runserver_nostatic",
    "django.contrib.staticfiles",
    "django.contrib.humanize",
    "rest_framework",
    "rest_framework.authtoken",
    "axes",
    "drf_spectacular",
    "drf_spectacular_sidecar",
    "channels",
    "wallet",
    "jackpots",
    "tables",
    "handhistory",
    "lobby",
    "backoffice",
]

MIDDLEWARE = [
    # First: /healthz, /readyz and /metrics for balancers and Prometheus, before the host
    # check and the HTTPS redirect (backoffice/health.py). Then requests are counted.
    "backoffice.health.OperationsMiddleware",
    "config.infra.observability.RequestMetricsMiddleware",
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    # After sessions, before common: picks the language from the django_language cookie
    # (set by the header's switch, config/i18n.py), then Accept-Language, then English.
    "django.middleware.locale.LocaleMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
    "config.middleware.DatabaseBusyMiddleware",
    # Last, as django-axes asks: turns a lockout into its 429 response.
    "axes.middleware.AxesMiddleware",
]

ROOT_URLCONF = "config.urls"
WSGI_APPLICATION = "config.wsgi.application"
ASGI_APPLICATION = "config.asgi.application"

TEMPLATES = [
    {
        "BACKEND": "django.template.backends.django.DjangoTemplates",
        "DIRS": [BASE_DIR / "templates"],
        "APP_DIRS": True,
        "OPTIONS": {
            "context_processors": [
                "django.template.context_processors.request",
                "django.contrib.auth.context_processors.auth",
                "django.contrib.messages.context_processors.messages",
                "django.template.context_processors.i18n",
                "lobby.context.guest",
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------
if DATABASE_URL:
    DATABASES: dict[str, dict[str, Any]] = {"default": env.db_url_config(DATABASE_URL)}
    if not DATABASES["default"]["ENGINE"].endswith("postgresql"):
        raise ImproperlyConfigured("DATABASE_URL must be a PostgreSQL URL (postgres://user@host:port/name)")
    # A pool of persistent connections per process (Django's psycopg pool): a burst of
    # requests waits for a connection instead of opening one each and exhausting the
    # server's max_connections. Sizing is in docs/platform.md, "Connections".
    DATABASES["default"]["CONN_MAX_AGE"] = 0  # the pool keeps connections, not Django
    DATABASES["default"].setdefault("OPTIONS", {})["pool"] = {
        "min_size": _int("DB_POOL_MIN_SIZE", 2, minimum=0),
        "max_size": _int("DB_POOL_MAX_SIZE", 10, minimum=1),
        # Seconds a request waits for a free connection before failing with 503.
        "timeout": _float("DB_POOL_TIMEOUT_SECONDS", 30.0, minimum=0.1),
    }
    if DATABASES["default"]["OPTIONS"]["pool"]["min_size"] > DATABASES["default"]["OPTIONS"]["pool"]["max_size"]:
        raise ImproperlyConfigured("DB_POOL_MIN_SIZE must not exceed DB_POOL_MAX_SIZE")
    DATABASE_NAME = str(DATABASES["default"].get("NAME") or "widerpoker")
else:
    VAR_DIR.mkdir(exist_ok=True)
    DATABASES = {
        "default": {
            "ENGINE": "django.db.backends.sqlite3",
            "NAME": env.str("SQLITE_PATH", default=str(VAR_DIR / "db.sqlite3")),
            # SQLite has no row locks: take the write lock at BEGIN so concurrent writers
            # queue instead of failing on lock upgrade; WAL lets readers run meanwhile.
            "OPTIONS": {
                "transaction_mode": "IMMEDIATE",
                "timeout": 20,
                "init_command": "PRAGMA journal_mode=WAL; PRAGMA synchronous=NORMAL;",
            },
        }
    }
    DATABASE_NAME = Path(DATABASES["default"]["NAME"]).stem
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USING_POSTGRES = DATABASES["default"]["ENGINE"].endswith("postgresql")

# --- Redis, channel layer, Celery, cache ----------------------------------------------------
# Every Redis key, channel and pub/sub name of this deployment starts with this prefix, so
# two deployments sharing one Redis server never see each other's frames or tasks (pub/sub
# ignores the db number). Default: derived from the database name.
REDIS_PREFIX: str = env.str("POKER_REDIS_PREFIX", default="") or f"wp-{DATABASE_NAME}"
if not REDIS_PREFIX.replace("-", "").replace("_", "").replace(".", "").isalnum():
    raise ImproperlyConfigured(f"POKER_REDIS_PREFIX={REDIS_PREFIX!r}: use letters, digits, '-', '_' and '.' only")
TABLE_CLOCK_CHOICES = ("beat", "in-process", "off")
# Draws and redeals bought are confirmed as holds on the buyer's wallet and moved into the
# hand's escrow by the clock in batches ("batch", PostgreSQL's default), or at once
# ("inline", the embedded default: SQLite runs one write at a time anyway). docs/platform.md.
PURCHASE_CAPTURE: str = _choice("POKER_PURCHASE_CAPTURE", ("batch", "inline"), "batch" if DATABASE_URL else "inline")
# Draws and redeals bought on a socket or over REST are queued and committed together by one
# writer thread per process ("batch", PostgreSQL only: tables/widerpoker/services/purchases.py), every
# PURCHASE_BATCH_MS milliseconds or PURCHASE_BATCH_SIZE purchases; "inline": one transaction
# per purchase in the request. docs/platform.md, "Purchase writer".
PURCHASE_WRITER: str = _choice("POKER_PURCHASE_WRITER", ("batch", "inline"), "batch")
PURCHASE_BATCH_MS: float = env.float("POKER_PURCHASE_BATCH_MS", default=5.0)
PURCHASE_BATCH_SIZE: int = env.int("POKER_PURCHASE_BATCH_SIZE", default=500)
if REDIS_URL:
    CHANNEL_LAYERS: dict[str, Any] = {
        "default": {
            "BACKEND": "channels_redis.core.RedisChannelLayer",
            "CONFIG": {
                # redis-py's asyncio pool defaults to 100 connections, which a connect storm
                # exhausts (shared/reference/REALTIME_ANCHORS.md §1.3). redis-py 8 also
                # defaults socket_timeout to 5 s, the same as channels_redis' blocking
                # BZPOPMIN timeout: under load the read times out first and the consumer dies
                # with "Timeout reading from" (measured with bench/fanout.py --redis).
                "hosts": [{"address": REDIS_URL, "max_connections": 1000, "socket_timeout": 30}],
                "capacity": 500,
                "expiry": 30,
                "group_expiry": 3600,
                "prefix": env.str("CHANNEL_LAYER_PREFIX", default=f"{REDIS_PREFIX}.asgi"),
            },
        }
    }
    CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default=REDIS_URL)
    CELERY_BROKER_TRANSPORT_OPTIONS = {"global_keyprefix": f"{REDIS_PREFIX}.celery."}
    CELERY_TASK_ALWAYS_EAGER = False
    # Who drives the table clock: Celery beat in production.
    TABLE_CLOCK: str = _choice("TABLE_CLOCK", TABLE_CLOCK_CHOICES, "beat")
    # Shared by every process: throttles, django-axes' cache, rate limits hold across them.
    CACHES: dict[str, Any] = {
        "default": {
            "BACKEND": "django.core.cache.backends.redis.RedisCache",
            "LOCATION": REDIS_URL,
            "KEY_PREFIX": f"{REDIS_PREFIX}.cache",
            # A Redis that does not answer fails fast (config/infra/throttles.py then counts in the
            # process's own memory): a request never hangs on it (security audit L7).
            "OPTIONS": {"socket_connect_timeout": 1, "socket_timeout": 1},
        }
    }
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    CELERY_BROKER_URL = "memory://"
    CELERY_TASK_ALWAYS_EAGER = True
    # The in-memory layer lives in one process, so the clock must run inside the ASGI process.
    TABLE_CLOCK = _choice("TABLE_CLOCK", TABLE_CLOCK_CHOICES, "in-process")
    if TABLE_CLOCK == "beat":
        raise ImproperlyConfigured("TABLE_CLOCK=beat needs REDIS_URL (Celery beat and a worker)")
    # One process in the embedded default: a local cache is shared by all its requests.
    CACHES = {"default": {"BACKEND": "django.core.cache.backends.locmem.LocMemCache", "LOCATION": "widerpoker"}}

CELERY_TASK_SERIALIZER = "json"
CELERY_ACCEPT_CONTENT = ["json"]
CELERY_RESULT_BACKEND = None
CELERY_TASK_IGNORE_RESULT = True
CELERY_TIMEZONE = "UTC"
CELERY_BEAT_SCHEDULE = {
    # Every second: advance every table whose phase deadline has passed. A late or
    # duplicated tick is harmless (SKIP LOCKED + version check), so stale ones expire.
    "advance-due-tables": {
        "task": "tables.tasks.advance_due_tables",
        "schedule": 1.0,
        "options": {"expires": 2.0},
    },
    # Daily: the partitions of entries and ledger legs for the newest ids and two ranges
    # ahead (config/infra/partitions.py; a no-op on SQLite). Idempotent: a late run is harmless.
    "ensure-partitions": {
        "task": "backoffice.tasks.ensure_partitions",
        "schedule": 24 * 3600.0,
        "options": {"expires": 3600.0},
    },
    # Hourly: the players' play patterns for the automated play review (backoffice, seed
    # 001 Notes 4), read from the stored hands; a late or missed run only ages the figures.
    "record-play-patterns": {
        "task": "backoffice.tasks.record_play_patterns",
        "schedule": 3600.0,
        "options": {"expires": 1800.0},
    },
}
# Partitions of entries and ledger legs (PostgreSQL; docs/platform.md, "Partitioning"):
# hands per entries partition and transfers per legs partition, about a month each at a
# busy site. A new width applies to the partitions created after the change.
ENTRY_PARTITION_HANDS: int = _int("POKER_ENTRY_PARTITION_HANDS", 100_000, minimum=1)
LEDGER_PARTITION_TRANSFERS: int = _int("POKER_LEDGER_PARTITION_TRANSFERS", 1_000_000, minimum=1)

# --- Auth, i18n, static --------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {
        "NAME": "lobby.passwords.MinimumLengthValidator",
        "OPTIONS": {"min_length": 8},
    },
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "lobby"
LOGOUT_REDIRECT_URL = "lobby"

LANGUAGE_CODE = "en"
# The site speaks English and Italian (issue 11 item 4; the operator's Italian rules are
# seed 002). Translations: locale/<lang>/LC_MESSAGES/django.po and djangojs.po, compiled
# .mo files committed (docs/i18n.md).
LANGUAGES = [("en", "English"), ("it", "Italiano")]
LOCALE_PATHS = [BASE_DIR / "locale"]
# The switch's choice lives a year in this cookie (Django's set_language writes it).
LANGUAGE_COOKIE_AGE = 365 * 24 * 3600
LANGUAGE_COOKIE_SAMESITE = "Lax"
TIME_ZONE = "UTC"
USE_I18N = True
USE_TZ = True

STATIC_URL = "static/"
STATIC_ROOT = VAR_DIR / "static"
STATIC_ROOT.mkdir(parents=True, exist_ok=True)  # whitenoise serves from finders; it warns if missing
STATICFILES_DIRS = [BASE_DIR / "static"]
STORAGES = {
    "default": {"BACKEND": "django.core.files.storage.FileSystemStorage"},
    "staticfiles": {"BACKEND": "whitenoise.storage.CompressedStaticFilesStorage"},
}
WHITENOISE_USE_FINDERS = True

# --- Security: HTTPS, cookies, sessions, brute force ------------------------------------------
# A production install is served over HTTPS behind a TLS-terminating proxy that sets
# X-Forwarded-Proto; the embedded default is plain HTTP on loopback. DJANGO_HTTPS=off lets
# a production-like install be tried over plain HTTP (then `check --deploy` warns).
HTTPS: bool = _bool("DJANGO_HTTPS", not EMBEDDED_DEFAULT)
SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE: bool = _bool("DJANGO_SECURE_COOKIES", HTTPS)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE
# A session lasts 12 hours by default (Django's default is two weeks).
SESSION_COOKIE_AGE: int = _int("DJANGO_SESSION_COOKIE_AGE", 12 * 3600, minimum=300)
SECURE_SSL_REDIRECT: bool = HTTPS
SECURE_PROXY_SSL_HEADER: tuple[str, str] | None = ("HTTP_X_FORWARDED_PROTO", "https") if HTTPS else None
SECURE_HSTS_SECONDS: int = _int("DJANGO_HSTS_SECONDS", 365 * 24 * 3600 if HTTPS else 0, minimum=0)
SECURE_HSTS_INCLUDE_SUBDOMAINS: bool = _bool("DJANGO_HSTS_INCLUDE_SUBDOMAINS", True)
SECURE_HSTS_PRELOAD: bool = _bool("DJANGO_HSTS_PRELOAD", True)
# How many reverse proxies put the client's address in X-Forwarded-For (0: use the socket's
# peer). Throttles and login lockouts key on the client address this gives.
NUM_PROXIES: int = _int("DJANGO_NUM_PROXIES", 0, minimum=0, maximum=5)

AUTHENTICATION_BACKENDS = [
    # django-axes first: a locked-out (username, address) pair is refused before the
    # password is checked, on the site's login, the admin's and the API token endpoint alike.
    "axes.backends.AxesStandaloneBackend",
    "django.contrib.auth.backends.ModelBackend",
]
AXES_FAILURE_LIMIT: int = _int("POKER_LOGIN_FAILURE_LIMIT", 5, minimum=1)
AXES_COOLOFF_TIME = timedelta(minutes=_int("POKER_LOGIN_COOLOFF_MINUTES", 15, minimum=1))
# Lock the pair (username, address): an attacker elsewhere cannot lock a player out.
AXES_LOCKOUT_PARAMETERS = [["username", "ip_address"]]
# And the address, at a higher limit, whatever the usernames (password spraying): the
# handler adds it (config/login_lockout.py).
AXES_HANDLER = "config.login_lockout.LoginLockoutHandler"
LOGIN_ADDRESS_FAILURE_LIMIT: int = _int("POKER_LOGIN_ADDRESS_FAILURE_LIMIT", 20, minimum=1)
AXES_RESET_ON_SUCCESS = True
AXES_CLIENT_IP_CALLABLE = "config.infra.client_ip.client_ip"
AXES_HTTP_RESPONSE_CODE = 429
AXES_LOCKOUT_CALLABLE = "config.infra.client_ip.lockout_response"
AXES_VERBOSE = False

# --- REST API -----------------------------------------------------------------------------
REST_FRAMEWORK = {
    # API clients send "Authorization: Token <key>" (from POST /api/auth/token/); the
    # browser's own calls use the session with CSRF. No HTTP Basic: a cross-site request
    # can never carry credentials.
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.TokenAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    # JSON bodies are decoded as strictly as socket frames (tables/commands.py).
    "DEFAULT_PARSER_CLASSES": [
        "config.parsers.StrictJSONParser",
        "rest_framework.parsers.FormParser",
        "rest_framework.parsers.MultiPartParser",
    ],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "config.api.exception_handler",
    # Every endpoint, per user and per client address, counted in the shared cache (Redis
    # in production) so the limits hold across processes. Actions have a tighter rate.
    "DEFAULT_THROTTLE_CLASSES": ["config.infra.throttles.ApiThrottles"],
    "DEFAULT_THROTTLE_RATES": {
        "user": env.str("POKER_API_USER_RATE", default="600/min"),
        "address": env.str("POKER_API_ADDRESS_RATE", default="1200/min"),
        "action": env.str("POKER_API_ACTION_RATE", default="120/min"),
    },
    "NUM_PROXIES": NUM_PROXIES,
}
SPECTACULAR_SETTINGS = {
    "TITLE": "WiderPoker operator platform API",
    "DESCRIPTION": "Play WiderPoker hands, read tables, wallets and hand histories.",
    "VERSION": "1.0.0",
    "SERVE_INCLUDE_SCHEMA": False,
    # Swagger UI served from our own static files: the API docs work without internet access.
    "SWAGGER_UI_DIST": "SIDECAR",
    "SWAGGER_UI_FAVICON_HREF": "SIDECAR",
    "REDOC_DIST": "SIDECAR",
}

# --- Game platform knobs: config/settings_poker.py ------------------------------------------------
from config.settings_poker import *  # noqa: E402, F403

# --- Operating it (docs/deployment.md, "Operating it") ----------------------------------------
# A bearer token that may read /metrics and /readyz's detail from anywhere (empty: loopback only).
OPS_TOKEN: str = env.str("POKER_OPS_TOKEN", default="")
if "CHANGE-ME" in OPS_TOKEN.upper():
    raise ImproperlyConfigured("POKER_OPS_TOKEN is deploy/env.example's placeholder: set a token of your own")
# The clock's last tick older than this is late (readiness "degraded", the status page).
OPS_CLOCK_LATE_SECONDS: int = _int("POKER_CLOCK_LATE_SECONDS", 10, minimum=2)
# Beat runs the books check (wallet.selectors.check_books) this often; 0: never.
BOOKS_CHECK_MINUTES: int = _int("POKER_BOOKS_CHECK_MINUTES", 60, minimum=0)
if BOOKS_CHECK_MINUTES:
    CELERY_BEAT_SCHEDULE["check-books"] = {
        "task": "backoffice.tasks.check_books",
        "schedule": BOOKS_CHECK_MINUTES * 60.0,
        "options": {"expires": BOOKS_CHECK_MINUTES * 60.0},
    }

# Logs: one JSON object per line (production's default) with the request, task, table or
# hand it concerns, or plain text (the embedded default); config/infra/observability.py.
LOG_FORMAT: str = _choice("LOG_FORMAT", ("json", "text"), "text" if EMBEDDED_DEFAULT else "json")
CELERY_WORKER_HIJACK_ROOT_LOGGER = False  # worker and beat log through LOGGING too
LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "filters": {"context": {"()": "config.infra.observability.ContextFilter"}},
    "formatters": {
        "json": {
            "()": "pythonjsonlogger.json.JsonFormatter",
            "fmt": "%(levelname)s %(name)s %(message)s %(process)d",
            "rename_fields": {"levelname": "level", "name": "logger", "process": "pid"},
            "timestamp": "time",  # ISO 8601, UTC
        },
        "text": {"format": "%(asctime)s %(levelname)s %(name)s [%(role)s %(process)d] %(message)s"},
    },
    "handlers": {"console": {"class": "logging.StreamHandler", "formatter": LOG_FORMAT, "filters": ["context"]}},
    "root": {
        "handlers": ["console"],
        "level": _choice("LOG_LEVEL", ("debug", "info", "warning", "error"), "info").upper(),
    },
    "loggers": {"daphne": {"level": "WARNING"}, "django.channels.server": {"level": "WARNING"}},
}
