"""The Celery application: the worker runs settlement-free adapters, beat drives the clock."""

from __future__ import annotations

import os

from celery import Celery

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("widerpoker")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()
