"""The private states a table's public frame asks for, sent without holding the next frame.

A table frame published with ``refresh_private`` (a phase change, a Hold'em action) is
followed, on each of the table's sockets, by that player's private state, rendered for all
of them in one batched read (``render_private_frames``). At 5,000 sockets a process that
read takes seconds of the process's one thread for sync code; the hub used to await it
before taking its next delivery, so the next public frame waited behind it: a change frame
began its writes 13 s after its publication, 3 s in the other process (``bench/fanout.py
10000``, docs/benchmarks.md, issue 23).

Now the hub writes each public frame as it arrives and hands the table to its
``PrivateRefresh``: one task per table renders and writes the private states, one read at a
time; frames asking for them while a read runs are answered by one more read, begun after
the last of them was written (a socket may get the public frames of two quick changes, then
its private state as of the first, then as of the second: the last state it gets is the
newest, and it never gets a private state read before a public frame it was sent and then
nothing newer).
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from tables.realtime.fanout import FanoutReport

logger = logging.getLogger(__name__)

Render = Callable[[int, set[int]], Awaitable[dict[int, str]]]
"""``render(table_id, user_ids)``: each player's private frame, serialised (one batched read)."""

Write = Callable[[int, list[Any], dict[int, str]], Awaitable[None]]
"""``write(table_id, sockets, states)``: hand each socket ``states[socket.user_id]``."""


class PrivateRefresh:
    """The private states due at a process's tables (``want``), rendered and written by one
    task per table (``_run``); ``settled`` waits for all of them (tests, shutdown)."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, sockets: Callable[[int], Iterable[Any]], render: Render, write: Write
    ) -> None:
        self.loop = loop
        self.sockets = sockets
        self.render = render
        self.write = write
        # table -> the reports (and their publication, epoch s) of the frames waiting for a read
        self.due: dict[int, list[tuple[FanoutReport | None, float]]] = {}
        self.tasks: dict[int, asyncio.Task[None]] = {}

    def want(self, table_id: int, report: FanoutReport | None, origin: float) -> None:
        """The table's sockets are due their private states after a public frame (its
        ``report``, if it is reported, completed with ``private`` and logged once they are
        written; ``origin``: its publication, epoch seconds)."""
        self.due.setdefault(table_id, []).append((report, origin))
        if table_id not in self.tasks:
            task = self.tasks[table_id] = self.loop.create_task(self._run(table_id))
            task.add_done_callback(_log_failure)

    async def settled(self) -> None:
        """Wait until every private state due has been written (or its read failed)."""
        while self.tasks:
            await asyncio.gather(*self.tasks.values(), return_exceptions=True)

    async def _run(self, table_id: int) -> None:
        try:
            while waiting := self.due.pop(table_id, None):
                members = list(self.sockets(table_id))
                if not members:
                    continue
                states = await self.render(table_id, {socket.user_id for socket in members})
                still = set(self.sockets(table_id))  # closed meanwhile: not written to
                members = [socket for socket in members if socket in still]
                await self.write(table_id, members, states)
                now = time.time()
                for report, origin in waiting:
                    if report is not None:
                        report.private = now - origin
                        report.log_private()
        finally:
            del self.tasks[table_id]


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and (error := task.exception()) is not None:
        logger.error("private states of a table not sent", exc_info=error)
