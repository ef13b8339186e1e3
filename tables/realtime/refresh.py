"""The private states a table's public frame asks for, sent without holding the next frame.

A table frame published with ``refresh_private`` (a phase change, a Hold'em action) is
followed, on each of the table's sockets, by that player's private state, rendered in
batched reads (``render_private_frames``). At 5,000 sockets a process that work takes
seconds of the process's one thread for sync code; the hub used to await it before taking
its next delivery, so the next public frame waited behind it: a change frame began its
writes 13 s after its publication, 3 s in the other process (``bench/fanout.py 10000``,
docs/benchmarks.md, issue 23).

Now the hub writes each public frame as it arrives and hands the table to its
``PrivateRefresh``: one task per table renders and writes the private states. Three rules
keep them from slowing a public frame down (docs/benchmarks.md, "s5-fanout"):

* **Slices.** A round reads ``PRIVATE_SLICE`` players at a time and writes each slice as
  soon as it is read, yielding to the event loop in between: the loop is never held longer
  than one slice's writes (5,000 private states written in one pass held a change frame's
  pub/sub message 2.8 s), and the sync thread never renders more than one slice while a
  public frame is written.
* **Public frames first.** No slice is begun (read or written) while the hub writes and
  flushes a public frame (``hold``/``release``): the sync thread rendering probability
  panels took the GIL from the loop at each socket write, which cost about 400 µs a write
  instead of 90 µs; a slice already begun gets a shorter GIL switch interval meanwhile.
* **The newest read only.** A frame asking again while a round runs ends that round after
  its current slice; the next round reads every socket of the table after the newer frame.
  A socket the old round had not reached gets only the newer private state (the one the
  client would keep: docs/protocol.md, an ``entry_state`` older than the ``table_state``
  shown is ignored; pushes are at-most-once hints). A socket may still get the public
  frames of two quick changes, then its private state as of the first, then as of the
  second: the last state it gets is the newest, and it never gets a private state read
  before a public frame it was sent and then nothing newer.
"""

from __future__ import annotations

import asyncio
import logging
import sys
import time
from collections.abc import Awaitable, Callable, Iterable
from typing import Any

from tables.realtime.fanout import FanoutReport

logger = logging.getLogger(__name__)

WRITE_SWITCH_INTERVAL = 0.00005
"""CPython's GIL switch interval (s) while a public frame is written: the event loop gives
up the GIL at each socket's ``send()``, and a thread rendering private states then holds it
for up to the interval (the process's is 0.5 ms, config/asgi.py) before the loop gets it
back; a slice already begun is not stopped by ``hold``."""

PRIVATE_SLICE = 100
"""Players whose private states are read (one batched read) and written together: at about
2 ms a player (a WiderPoker probability panel when first computed) one slice keeps the sync
thread about 0.2 s; each slice costs the batched read's handful of statements."""

Render = Callable[[int, set[int]], Awaitable[dict[int, str]]]
"""``render(table_id, user_ids)``: each player's private frame, serialised (one batched read)."""

Write = Callable[[int, list[Any], dict[int, str]], Awaitable[None]]
"""``write(table_id, sockets, states)``: hand each socket ``states[socket.user_id]``."""

Waiting = list[tuple[FanoutReport | None, float]]
"""The reports (and publications, epoch s) of the frames a round answers."""


class PrivateRefresh:
    """The private states due at a process's tables (``want``), rendered and written by one
    task per table (``_run``), in slices, never while a public frame is being written
    (``hold``/``release``); ``settled`` waits for all of them (tests, shutdown)."""

    def __init__(
        self, loop: asyncio.AbstractEventLoop, sockets: Callable[[int], Iterable[Any]], render: Render, write: Write
    ) -> None:
        self.loop = loop
        self.sockets = sockets
        self.render = render
        self.write = write
        self.due: dict[int, Waiting] = {}
        self.tasks: dict[int, asyncio.Task[None]] = {}
        self.slice = PRIVATE_SLICE
        self.holding = 0  # public frames being written and flushed now
        self.interval = sys.getswitchinterval()  # the process's, restored after the writes
        self.clear = asyncio.Event()
        self.clear.set()
        self.slices = 0  # slices read (tests, benches)

    def hold(self) -> None:
        """A public frame is being written: no private slice begins until ``release``, and
        the GIL's switch interval is ``WRITE_SWITCH_INTERVAL`` meanwhile (a slice already
        being rendered gives the loop the GIL back sooner after each write)."""
        if self.holding == 0:
            self.interval = sys.getswitchinterval()
            sys.setswitchinterval(min(self.interval, WRITE_SWITCH_INTERVAL))
        self.holding += 1
        self.clear.clear()

    def release(self) -> None:
        """The public frame of the matching ``hold`` is written and flushed."""
        self.holding -= 1
        if self.holding <= 0:
            self.holding = 0
            sys.setswitchinterval(self.interval)
            self.clear.set()

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
                if not await self._round(table_id):
                    self.due[table_id] = waiting + self.due.get(table_id, [])  # answered by the next
                    continue
                now = time.time()
                for report, origin in waiting:
                    if report is not None:
                        report.private = now - origin
                        report.log_private()
        finally:
            del self.tasks[table_id]

    async def _round(self, table_id: int) -> bool:
        """Read and write the private states of the table's sockets, a slice at a time;
        False when a newer frame asked again before the last slice (the next round reads
        them all again)."""
        by_user: dict[int, list[Any]] = {}
        for socket in self.sockets(table_id):
            by_user.setdefault(socket.user_id, []).append(socket)
        users = sorted(by_user)
        for start in range(0, len(users), max(1, self.slice)):
            if start and table_id in self.due:
                return False  # superseded: the rest get the newer read
            await self.clear.wait()
            still = set(self.sockets(table_id))
            chunk = {u for u in users[start : start + max(1, self.slice)] if any(s in still for s in by_user[u])}
            if not chunk:
                continue  # every socket of the slice closed meanwhile: nothing to read
            self.slices += 1
            states = await self.render(table_id, chunk)
            await self.clear.wait()  # a public frame arrived during the read: it goes first
            still = set(self.sockets(table_id))  # closed meanwhile: not written to
            members = [socket for user_id in sorted(chunk) for socket in by_user[user_id] if socket in still]
            await self.write(table_id, members, states)
            await asyncio.sleep(0)  # the loop's other work (a public frame's delivery) between slices
        return True


def _log_failure(task: asyncio.Task[None]) -> None:
    if not task.cancelled() and (error := task.exception()) is not None:
        logger.error("private states of a table not sent", exc_info=error)
