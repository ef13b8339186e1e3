"""What every setting is read with: the environment (``env`` and the checked readers
``_choice``, ``_int``, ``_float``, ``_bool``), where the install lives, and the values the
rest derive from: the services' URLs (embedded default or production) and the secret key.
Imported by config.settings and config.settings_poker; ``DJANGO_SETTINGS_MODULE`` stays
``config.settings``."""

from __future__ import annotations

from pathlib import Path

import environ
from django.core.exceptions import ImproperlyConfigured

BASE_DIR = Path(__file__).resolve().parent.parent
VAR_DIR = BASE_DIR / "var"

env = environ.Env()


def _choice(name: str, choices: tuple[str, ...], default: str) -> str:
    """Read ``name`` from the environment and refuse anything outside ``choices``.

    Raises:
        ImproperlyConfigured: the value is not one of ``choices`` (a typo must not, say,
            silently stop the table clock).
    """
    value = str(env.str(name, default=default)).strip().lower()
    if value not in choices:
        raise ImproperlyConfigured(f"{name}={value!r} is not one of {', '.join(choices)}")
    return value


def _int(name: str, default: int, *, minimum: int = 0, maximum: int | None = None) -> int:
    """Read an integer from the environment within ``[minimum, maximum]``.

    Raises:
        ImproperlyConfigured: not an integer, or out of range; the message names the variable.
    """
    raw = env.str(name, default=str(default)).strip()
    try:
        value = int(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a whole number") from None
    if value < minimum or (maximum is not None and value > maximum):
        upper = "" if maximum is None else f" and at most {maximum}"
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum}{upper}")
    return value


def _float(name: str, default: float, *, minimum: float = 0.0) -> float:
    """Read a number from the environment, at least ``minimum``.

    Raises:
        ImproperlyConfigured: not a number, or below ``minimum``.
    """
    raw = env.str(name, default=str(default)).strip()
    try:
        value = float(raw)
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not a number") from None
    if not value >= minimum:  # also refuses NaN
        raise ImproperlyConfigured(f"{name}={value} must be at least {minimum}")
    return value


def _ints(name: str, default: tuple[int, ...], *, minimum: int = 0) -> tuple[int, ...]:
    """Read comma-separated integers from the environment: as many as ``default`` has, each
    at least ``minimum``.

    Raises:
        ImproperlyConfigured: another count, not whole numbers, or one below ``minimum``.
    """
    raw = env.str(name, default=",".join(map(str, default))).strip()
    try:
        values = tuple(int(part) for part in raw.split(","))
    except ValueError:
        raise ImproperlyConfigured(f"{name}={raw!r} is not {len(default)} comma-separated whole numbers") from None
    if len(values) != len(default) or min(values) < minimum:
        raise ImproperlyConfigured(f"{name}={raw!r} must be {len(default)} whole numbers of at least {minimum}")
    return values


def _bool(name: str, default: bool) -> bool:
    """Read a boolean (1/0, true/false, yes/no, on/off) from the environment.

    Raises:
        ImproperlyConfigured: any other spelling.
    """
    raw = env.str(name, default="").strip().lower()
    if not raw:
        return default
    if raw in {"1", "true", "yes", "on"}:
        return True
    if raw in {"0", "false", "no", "off"}:
        return False
    raise ImproperlyConfigured(f"{name}={raw!r} is not a boolean (use 1/0, true/false, yes/no, on/off)")


DATABASE_URL: str = env.str("DATABASE_URL", default="")
REDIS_URL: str = env.str("REDIS_URL", default="")
# The embedded default is the configuration with no services at all. Anything else is a
# production install: it fails closed (no fallback secret key, HTTPS on, no demo data).
EMBEDDED_DEFAULT = not DATABASE_URL and not REDIS_URL

DEBUG: bool = _bool("DJANGO_DEBUG", False)
SECRET_KEY: str = env.str("DJANGO_SECRET_KEY", default="")
if not SECRET_KEY:
    if not EMBEDDED_DEFAULT:
        raise ImproperlyConfigured(
            "DJANGO_SECRET_KEY is not set: a production install (DATABASE_URL or REDIS_URL set) "
            "needs its own secret key, e.g. from "
            "`python -c 'import secrets; print(secrets.token_urlsafe(50))'`"
        )
    # Embedded default only (SQLite, no services): a fixed development key.
    SECRET_KEY = "embedded-default-insecure-key-set-DJANGO_SECRET_KEY-in-production"
elif "CHANGE-ME" in SECRET_KEY.upper():
    # deploy/env.example's placeholder: a key everyone who read the repository knows.
    raise ImproperlyConfigured("DJANGO_SECRET_KEY is deploy/env.example's placeholder: set a secret key of your own")
