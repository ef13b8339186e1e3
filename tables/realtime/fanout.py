"""How long a public frame took to reach one process's sockets of a table: the report each
hub logs (tables/realtime/hub.py, ``TableHub.deliver``) for a fan-out to
``FANOUT_REPORT_MIN_SOCKETS`` sockets or more, read by ``bench/massive.py`` and
``bench/fanout.py`` for the figures "measured at the server"."""

from __future__ import annotations

import json
import logging
import re
from dataclasses import dataclass, field
from typing import Any

fanout_logger = logging.getLogger("tables.realtime.fanout")
"""Where each process reports a broadcast's fan-out (``FanoutReport``; INFO)."""

FANOUT_REPORT_QUANTILES = 100
"""A report carries the write offsets at every 1/100 of the table's sockets (101 values)."""


@dataclass
class FanoutReport:
    """How long one public frame took to reach one process's sockets of a table, in seconds
    from ``published_at`` (the frame's publication, so Redis' pub/sub is included):

    * ``queued``: until this hub began writing (pub/sub, the event loop's queue);
    * ``written``: when each socket's write was handed to its transport, in writing order;
    * ``loop``: when the last was handed over;
    * ``flushed``: after the event loop's next full turn, in which the transports write
      their buffers to the kernel (a socket whose kernel buffer is full keeps the rest);
    * ``private``: when every socket had been handed its private state (or None);
    * ``cpu``: CPU seconds of the event loop's thread from the first write to the flush
      (``time.thread_time``: the writes' own cost, less sensitive to a shared box's load
      than the wall-clock offsets), or None.

    ``frame`` names the frame (its ``type``, ``version`` and ``phase`` when it has them,
    ``frame_head``). ``log`` writes one INFO line to ``tables.realtime.fanout`` as soon as the
    transports are flushed: ``fanout-report`` and a JSON object with these keys, ``written``
    reduced to its 101 percentiles (``written_pct``), ``private`` null; ``log_private`` a
    second one when the private states were handed over."""

    table_id: int
    frame: dict[str, Any]
    sockets: int
    queued: float
    written: list[float]
    loop: float
    flushed: float
    private: float | None = field(default=None)
    cpu: float | None = field(default=None)

    def percentiles(self) -> list[float]:
        """The write offsets at 0, 1, ..., 100 % of the sockets (nearest rank)."""
        ordered = sorted(self.written)
        if not ordered:
            return []
        last = len(ordered) - 1
        return [ordered[min(last, (q * len(ordered)) // FANOUT_REPORT_QUANTILES)] for q in range(101)]

    def log_private(self) -> None:
        """One more INFO line once the private states were handed over: ``fanout-private``
        and a JSON object (``table_id``, ``frame``, ``sockets``, ``private``)."""
        fanout_logger.info(
            "fanout-private %s",
            json.dumps(
                {
                    "table_id": self.table_id,
                    "frame": self.frame,
                    "sockets": self.sockets,
                    "private": None if self.private is None else round(self.private, 6),
                }
            ),
        )

    def log(self) -> None:
        fanout_logger.info(
            "fanout-report %s",
            json.dumps(
                {
                    "table_id": self.table_id,
                    "frame": self.frame,
                    "sockets": self.sockets,
                    "queued": round(self.queued, 6),
                    "written_pct": [round(v, 6) for v in self.percentiles()],
                    "loop": round(self.loop, 6),
                    "flushed": round(self.flushed, 6),
                    "cpu": None if self.cpu is None else round(self.cpu, 6),
                    "private": None if self.private is None else round(self.private, 6),
                }
            ),
        )


_HEAD = re.compile(r'"(type|phase)":\s*"(\w+)"|"(version)":\s*(\d+)')


def frame_head(text: str) -> dict[str, Any]:
    """The ``type``, ``version`` and ``phase`` of a serialised frame, read from its first
    300 characters without parsing the whole frame (absent keys are left out)."""
    head: dict[str, Any] = {}
    for match in _HEAD.finditer(text[:300]):
        if match.group(1):
            head.setdefault(match.group(1), match.group(2))
        else:
            head.setdefault("version", int(match.group(4)))
    return head
