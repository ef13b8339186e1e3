"""Reads that concurrent requests of one key share: a connect storm's reads, batched.

10,000 players connecting to one table each needed the table's version (to serve the cached
public frame) and their own private state, each one read in the process's single thread for
sync code, one after another: about 8 statements a connect on top of the session and the
seat's socket count, and 10,000 sockets took 315 s to connect (docs/benchmarks.md, issue
23). A ``ReadBatches`` answers every request of a key that arrived while no read of that key
was running, or while one was running (they wait for the next), from **one** read that began
after they all arrived: nothing is served from a read older than its request.

Used by the table hub (tables/realtime/hub.py): a table's private frames at connect and on a
``snapshot`` request (``TableHub.private_state``), and the table's version that validates the
cached public frame (``TableHub.public_snapshot``).
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Hashable, Mapping
from typing import Any, Generic, TypeVar

K = TypeVar("K", bound=Hashable)
I = TypeVar("I", bound=Hashable)  # noqa: E741
V = TypeVar("V")


def _retrieve(future: asyncio.Future[Any]) -> None:
    if not future.cancelled():
        future.exception()  # raised to its waiters; not logged again as never retrieved


class ReadBatches(Generic[K, I, V]):
    """Requests ``(key, item)`` answered by ``read(key, items)`` (a coroutine returning a
    mapping item -> value for every item asked), at most one read of a key at a time.

    A request joins the key's next batch; the key's reader task takes the batch when it
    starts a read, so every request's value comes from a read begun after the request. An
    exception of ``read`` is raised to every request of its batch. A request for an item
    already in the waiting batch shares its future."""

    def __init__(self, loop: asyncio.AbstractEventLoop, read: Callable[[K, set[I]], Awaitable[Mapping[I, V]]]) -> None:
        self.loop = loop
        self.read = read
        self.waiting: dict[K, dict[I, asyncio.Future[V]]] = {}
        self.running: set[K] = set()
        self.reads = 0  # how many reads ran (the benches and tests count them)

    async def get(self, key: K, item: I) -> V:
        """The value of ``item`` from a read of ``key`` begun after this call. Raises what
        the read raised, or KeyError if the read left the item out."""
        batch = self.waiting.setdefault(key, {})
        future = batch.get(item)
        if future is None:
            future = batch[item] = self.loop.create_future()
            future.add_done_callback(_retrieve)
        if key not in self.running:
            self.running.add(key)
            self.loop.create_task(self._drain(key))
        return await asyncio.shield(future)  # a closing socket must not cancel the others' read

    async def _drain(self, key: K) -> None:
        """Read the key's waiting batches, one after another, until none is left."""
        try:
            await asyncio.sleep(0)  # the requests of this turn of the loop join the first read
            while batch := self.waiting.pop(key, None):
                self.reads += 1
                try:
                    values = await self.read(key, set(batch))
                except Exception as error:  # every request of the batch gets it
                    for future in batch.values():
                        if not future.done():
                            future.set_exception(error)
                    continue
                for item, future in batch.items():
                    if future.done():
                        continue
                    if item in values:
                        future.set_result(values[item])
                    else:
                        future.set_exception(KeyError(item))
        finally:
            self.running.discard(key)
