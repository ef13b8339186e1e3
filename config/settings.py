"""Settings for the WiderPoker operator platform, read from the environment.

Two configurations, same code:

* **Embedded default** (no environment variables): SQLite in ``var/``, the in-memory
  channel layer, the table clock running inside the one ASGI process, Celery tasks run
  eagerly. ``bin/run`` starts it.
* **Production**: ``DATABASE_URL`` (PostgreSQL) and ``REDIS_URL`` switch to PostgreSQL,
  the Redis channel layer, a Celery worker and Celery beat driving the table clock, and
  any number of daphne processes. See README.md, "Production".
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import environ

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

env = environ.Env()

DEBUG: bool = env.bool("DJANGO_DEBUG", default=False)
SECRET_KEY: str = env.str("DJANGO_SECRET_KEY", default="")
if not SECRET_KEY:
    # Embedded default only: a fixed development key. Production sets DJANGO_SECRET_KEY;
    # `manage.py check --deploy` flags this one.
    SECRET_KEY = "embedded-default-insecure-key-set-DJANGO_SECRET_KEY-in-production"
ALLOWED_HOSTS: list[str] = env.list("DJANGO_ALLOWED_HOSTS", default=["localhost", "127.0.0.1", "[::1]"])
CSRF_TRUSTED_ORIGINS: list[str] = env.list("DJANGO_CSRF_TRUSTED_ORIGINS", default=[])

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
    "django.middleware.security.SecurityMiddleware",
    "whitenoise.middleware.WhiteNoiseMiddleware",
    "django.contrib.sessions.middleware.SessionMiddleware",
    "django.middleware.common.CommonMiddleware",
    "django.middleware.csrf.CsrfViewMiddleware",
    "django.contrib.auth.middleware.AuthenticationMiddleware",
    "django.contrib.messages.middleware.MessageMiddleware",
    "django.middleware.clickjacking.XFrameOptionsMiddleware",
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
            ],
        },
    },
]

# --- Database -------------------------------------------------------------------------
DATABASE_URL: str = env.str("DATABASE_URL", default="")
if DATABASE_URL:
    DATABASES: dict[str, dict[str, Any]] = {"default": env.db_url_config(DATABASE_URL)}
    DATABASES["default"].setdefault("CONN_MAX_AGE", 0)
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
DEFAULT_AUTO_FIELD = "django.db.models.BigAutoField"
USING_POSTGRES = DATABASES["default"]["ENGINE"].endswith("postgresql")

# --- Redis, channel layer, Celery ----------------------------------------------------------
REDIS_URL: str = env.str("REDIS_URL", default="")
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
                "prefix": env.str("CHANNEL_LAYER_PREFIX", default="asgi"),
            },
        }
    }
    CELERY_BROKER_URL = env.str("CELERY_BROKER_URL", default=REDIS_URL)
    CELERY_TASK_ALWAYS_EAGER = False
    # Who drives the table clock: Celery beat in production.
    TABLE_CLOCK: str = env.str("TABLE_CLOCK", default="beat")
else:
    CHANNEL_LAYERS = {"default": {"BACKEND": "channels.layers.InMemoryChannelLayer"}}
    CELERY_BROKER_URL = "memory://"
    CELERY_TASK_ALWAYS_EAGER = True
    # The in-memory layer lives in one process, so the clock must run inside the ASGI process.
    TABLE_CLOCK = env.str("TABLE_CLOCK", default="in-process")

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
}

# --- Auth, i18n, static --------------------------------------------------------------------
AUTH_PASSWORD_VALIDATORS = [
    {"NAME": "django.contrib.auth.password_validation.UserAttributeSimilarityValidator"},
    {
        "NAME": "django.contrib.auth.password_validation.MinimumLengthValidator",
        "OPTIONS": {"min_length": 8},
    },
    {"NAME": "django.contrib.auth.password_validation.CommonPasswordValidator"},
]
LOGIN_URL = "login"
LOGIN_REDIRECT_URL = "lobby"
LOGOUT_REDIRECT_URL = "lobby"

LANGUAGE_CODE = "en"
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

SESSION_COOKIE_HTTPONLY = True
SESSION_COOKIE_SECURE: bool = env.bool("DJANGO_SECURE_COOKIES", default=False)
CSRF_COOKIE_SECURE = SESSION_COOKIE_SECURE

# --- REST API -----------------------------------------------------------------------------
REST_FRAMEWORK = {
    "DEFAULT_AUTHENTICATION_CLASSES": [
        "rest_framework.authentication.SessionAuthentication",
        "rest_framework.authentication.BasicAuthentication",
    ],
    "DEFAULT_PERMISSION_CLASSES": ["rest_framework.permissions.IsAuthenticated"],
    "DEFAULT_SCHEMA_CLASS": "drf_spectacular.openapi.AutoSchema",
    "EXCEPTION_HANDLER": "config.api.exception_handler",
    "DEFAULT_THROTTLE_RATES": {"user": "120/min"},
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

# --- Game platform knobs ---------------------------------------------------------------------
# Fun chips granted at sign-up, and the top-up rule (minor units of the FUN currency).
FUN_SIGNUP_GRANT_MINOR: int = env.int("POKER_FUN_SIGNUP_GRANT_MINOR", default=100_000)
FUN_TOP_UP_BELOW_MINOR: int = env.int("POKER_FUN_TOP_UP_BELOW_MINOR", default=10_000)
FUN_TOP_UP_TO_MINOR: int = env.int("POKER_FUN_TOP_UP_TO_MINOR", default=100_000)
# A seat with no open WebSocket and no request for this long counts as disconnected.
PRESENCE_TIMEOUT_SECONDS: int = env.int("POKER_PRESENCE_TIMEOUT_SECONDS", default=30)
# A closed game page counts as still there for this long: a reload is not a disconnection.
PRESENCE_RECONNECT_GRACE_SECONDS: int = env.int("POKER_PRESENCE_RECONNECT_GRACE_SECONDS", default=10)
# WebSocket inbound rate limit: a token bucket per connection.
WS_RATE_PER_SECOND: float = env.float("POKER_WS_RATE_PER_SECOND", default=10.0)
WS_RATE_BURST: int = env.int("POKER_WS_RATE_BURST", default=20)

LOGGING = {
    "version": 1,
    "disable_existing_loggers": False,
    "handlers": {"console": {"class": "logging.StreamHandler"}},
    "root": {"handlers": ["console"], "level": env.str("LOG_LEVEL", default="INFO")},
    "loggers": {"daphne": {"level": "WARNING"}, "django.channels.server": {"level": "WARNING"}},
}
