"""A lean REST purchase client for the benches (bench/socket_purchase.py's REST phase).

``httpx`` costs its process about as much CPU per request as the server's lean door
(tables/api/purchase_door.py) spends answering it, and the bench's clients share the box's
cores with the servers: this client writes each ``POST /api/tables/<id>/draws/`` on a
keep-alive HTTP/1.1 connection of its own (``asyncio.Protocol``, no parsing beyond the
status line, ``Content-Length`` and, for a refusal, the body's ``code``), from several
processes (``fire_rest_processes``), each reporting its own CPU seconds so that the bench
counts the clients apart from the servers.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import resource
import time
from typing import Any


class RestConnection(asyncio.Protocol):
    """One keep-alive HTTP/1.1 connection sending one request at a time (``post``)."""

    def __init__(self) -> None:
        self.transport: asyncio.Transport | None = None
        self.buffer = b""
        self.waiting: asyncio.Future[tuple[int, bytes]] | None = None
        self.closed: asyncio.Future[None] = asyncio.get_running_loop().create_future()

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        assert isinstance(transport, asyncio.Transport)
        self.transport = transport

    def connection_lost(self, exc: Exception | None) -> None:
        if self.waiting is not None and not self.waiting.done():
            self.waiting.set_exception(ConnectionError("the server closed the connection"))
        if not self.closed.done():
            self.closed.set_result(None)

    def data_received(self, data: bytes) -> None:
        self.buffer += data
        head, sep, rest = self.buffer.partition(b"\r\n\r\n")
        if not sep:
            return
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        if len(rest) < length:
            return
        status = int(head.split(b" ", 2)[1])
        self.buffer = rest[length:]
        if self.waiting is not None and not self.waiting.done():
            self.waiting.set_result((status, rest[:length]))

    async def post(self, request: bytes) -> tuple[int, bytes]:
        """Send ``request`` (a whole HTTP request) and wait for its answer: (status, body)."""
        assert self.transport is not None
        self.waiting = asyncio.get_running_loop().create_future()
        self.transport.write(request)
        return await self.waiting


async def fire_lean(
    targets: list[str], table_id: int, tokens: list[str], buyers: int
) -> tuple[list[tuple[float, int, str]], float, float]:
    """One draw per token with ``buyers`` keep-alive connections spread over ``targets``
    (``host:port``): ([(seconds, status, code)], started, finished) (``perf_counter``)."""
    loop = asyncio.get_running_loop()
    queue = list(reversed(tokens))
    results: list[tuple[float, int, str]] = []

    async def buyer(index: int) -> None:
        host, port = targets[index % len(targets)].rsplit(":", 1)
        _transport, connection = await loop.create_connection(RestConnection, host, int(port))
        prefix = (
            f"POST /api/tables/{table_id}/draws/ HTTP/1.1\r\nHost: {host}\r\nContent-Length: 0\r\n"
            "Accept: application/json\r\nAuthorization: Token "
        ).encode()
        try:
            while queue:
                token = queue.pop()
                started = time.perf_counter()
                status, body = await connection.post(prefix + token.encode() + b"\r\n\r\n")
                elapsed = time.perf_counter() - started
                code = "" if status == 200 else str(json.loads(body or b"{}").get("code", ""))
                results.append((elapsed, status, code))
        finally:
            if connection.transport is not None:
                connection.transport.close()

    started = time.perf_counter()
    await asyncio.gather(*(buyer(i) for i in range(buyers)))
    return results, started, time.perf_counter()


def _lean_process(targets: list[str], table_id: int, tokens: list[str], buyers: int, go: Any, out: Any) -> None:
    """One client process: waits for ``go``, fires, puts (results, cpu seconds, started, finished)."""
    try:
        go.wait()
        before = resource.getrusage(resource.RUSAGE_SELF)
        results, started, finished = asyncio.run(fire_lean(targets, table_id, tokens, buyers))
        after = resource.getrusage(resource.RUSAGE_SELF)
        cpu = (after.ru_utime + after.ru_stime) - (before.ru_utime + before.ru_stime)
        out.put(
            (
                "ok",
                results,
                cpu,
                time.time() - (time.perf_counter() - started),
                time.time() - (time.perf_counter() - finished),
            )
        )
    except BaseException as error:
        out.put(("error", repr(error), 0.0, 0.0, 0.0))


def fire_rest_processes(
    targets: list[str], table_id: int, tokens: list[str], buyers: int, processes: int
) -> tuple[list[tuple[float, int, str]], float, float]:
    """``fire_lean`` from ``processes`` client processes (the tokens and ``buyers`` split
    between them): (results, the clients' CPU seconds, wall seconds from the first request
    to the last answer)."""
    context = multiprocessing.get_context("spawn")
    go, out = context.Event(), context.Queue()
    shares = [tokens[i::processes] for i in range(processes)]
    workers = [
        context.Process(target=_lean_process, args=(targets, table_id, share, max(1, buyers // processes), go, out))
        for share in shares
        if share
    ]
    for worker in workers:
        worker.start()
    time.sleep(1.0)  # the interpreters are up
    go.set()
    reports = [out.get(timeout=600) for _ in workers]
    for worker in workers:
        worker.join(timeout=30)
    failed = [payload for status, payload, *_ in reports if status != "ok"]
    if failed:
        raise RuntimeError(f"a REST client process failed: {failed[0]}")
    results = [result for _, payload, *_ in reports for result in payload]
    cpu = sum(report[2] for report in reports)
    span = max(report[4] for report in reports) - min(report[3] for report in reports)
    return results, cpu, span
