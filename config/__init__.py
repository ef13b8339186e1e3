"""Project wiring: settings, URLs, ASGI/WSGI entry points and the Celery app. No domain code."""

from __future__ import annotations

from config.celery import app as celery_app

__all__ = ["celery_app"]
