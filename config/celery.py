"""The Celery application: the worker runs settlement-free adapters, beat drives the clock.

Each task's logs carry its ``task_id`` and ``task`` name (config/infra/observability.py); a worker
child that exits is marked dead for the Prometheus multiprocess gauges (config/infra/metrics.py).
"""

from __future__ import annotations

import os
from contextlib import suppress
from contextvars import Token
from typing import Any

from celery import Celery
from celery.signals import task_postrun, task_prerun, worker_process_shutdown
from prometheus_client import multiprocess

from config.infra.observability import pop, push

os.environ.setdefault("DJANGO_SETTINGS_MODULE", "config.settings")

app = Celery("widerpoker")
app.config_from_object("django.conf:settings", namespace="CELERY")
app.autodiscover_tasks()

_task_context: dict[str, Token[dict[str, Any] | None]] = {}


def _bind_task(task_id: str = "", task: Any = None, **kwargs: Any) -> None:
    _task_context[task_id] = push(task_id=task_id, task=getattr(task, "name", ""))


def _unbind_task(task_id: str = "", **kwargs: Any) -> None:
    token = _task_context.pop(task_id, None)
    if token is not None:
        with suppress(ValueError):  # set in another context (eager tasks nested in a request)
            pop(token)


def _mark_metrics_dead(pid: int | None = None, **kwargs: Any) -> None:
    if os.environ.get("PROMETHEUS_MULTIPROC_DIR"):
        multiprocess.mark_process_dead(pid or os.getpid())  # type: ignore[no-untyped-call]  # untyped


task_prerun.connect(_bind_task, weak=False)
task_postrun.connect(_unbind_task, weak=False)
worker_process_shutdown.connect(_mark_metrics_dead, weak=False)
