"""The chain signer: seed chains' terminal seeds kept out of the application database
(docs/provably-fair.md, 1.10; issue 22, item 1).

A chain created since 2026-11-26 stores a random ``nonce``, its ``length`` and its public
anchor, never its terminal seed. The signer derives the terminal seed from a key the
application's database role cannot read,

    terminal = HMAC-SHA256(key, "chain" 0x00 nonce 0x00 length)

and releases an element ``s_i`` only for the hand being dealt: index ``i`` at most one past
the highest it released for that chain (the same index again is fine: a deal whose
transaction rolled back asks again). An element ahead is refused (``SignerRefusedError``),
so nobody holding the signer's answers knows a hand's element before its deal.

Two ways to reach it (``POKER_SIGNER``):

* ``embedded`` (default): in process, the key in ``POKER_SIGNER_KEY_FILE`` (created with
  mode 0600 under ``var/signer/`` when absent, so a fresh checkout runs with no service),
  the highest released index per chain in a state file beside it (locked with ``flock``,
  shared by every process of the host).
* ``socket``: a separate process, ``manage.py run_signer``, on the Unix socket
  ``POKER_SIGNER_SOCKET``, run as a user whose key file the application cannot read.

``database`` is the behaviour of chains created before (terminal seed in the database):
for the test suite's algorithm-2 hands only; production refuses it.
"""

from __future__ import annotations

import fcntl
import hashlib
import hmac
import json
import os
import secrets
import socket
import socketserver
import threading
from collections import OrderedDict
from pathlib import Path
from typing import Any, Protocol

from tables.engine import fairness


class SignerRefusedError(Exception):
    """The signer refused: an element ahead of the hand being dealt, or a bad request."""


class Signer(Protocol):
    def anchor(self, nonce: str, length: int) -> bytes: ...

    def release(self, nonce: str, length: int, index: int) -> bytes: ...


def _check(nonce: str, length: int, index: int = 0) -> None:
    if not (isinstance(nonce, str) and 16 <= len(nonce) <= 64 and all(c in "0123456789abcdef" for c in nonce)):
        raise SignerRefusedError("a chain nonce is 16 to 64 lowercase hex characters")
    if not (isinstance(length, int) and isinstance(index, int) and 0 <= index <= length <= fairness.MAX_CHAIN_LENGTH):
        raise SignerRefusedError(f"need 0 <= index <= length <= {fairness.MAX_CHAIN_LENGTH}")


def read_or_create_key(path: Path) -> bytes:
    """The 32-byte signer key in ``path`` (hex), created with mode 0600 when absent."""
    if not path.exists():
        path.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        descriptor = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(descriptor, "w") as handle:
            handle.write(secrets.token_hex(32) + "\n")
    key = bytes.fromhex(path.read_text().strip())
    if len(key) != 32:
        raise SignerRefusedError(f"{path} must hold 32 bytes in hex")
    return key


class KeySigner:
    """The signer itself (module docstring): ``key`` 32 bytes; ``state`` the JSON file of
    the highest index released per chain nonce."""

    WALKS = 4096
    """Chains whose walk (``fairness.ChainWalk``: checkpoints every square root of the
    length) the signer keeps in its memory, the most recently used."""

    def __init__(self, key: bytes, state: Path) -> None:
        self._key = key
        self._state = state
        self._walks: OrderedDict[tuple[str, int], fairness.ChainWalk] = OrderedDict()
        self._walks_lock = threading.Lock()

    def _terminal(self, nonce: str, length: int) -> bytes:
        return hmac.digest(self._key, b"chain\x00" + nonce.encode() + b"\x00" + str(length).encode(), hashlib.sha256)

    def _walk(self, nonce: str, length: int) -> fairness.ChainWalk:
        """The chain's walk, kept in this process only (never written anywhere): an element
        costs at most 100 hashes of a chain of 10,000 instead of up to 10,000."""
        with self._walks_lock:
            walk = self._walks.get((nonce, length))
            if walk is None:
                walk = self._walks[(nonce, length)] = fairness.ChainWalk(self._terminal(nonce, length), length)
                while len(self._walks) > self.WALKS:
                    self._walks.popitem(last=False)
            self._walks.move_to_end((nonce, length))
            return walk

    def anchor(self, nonce: str, length: int) -> bytes:
        """The chain's public anchor ``s_0``."""
        _check(nonce, length)
        return self._walk(nonce, length).seed(0)

    def release(self, nonce: str, length: int, index: int) -> bytes:
        """Element ``s_index`` (1 <= index <= length), if at most one past the highest
        released for the chain; raises SignerRefusedError otherwise."""
        _check(nonce, length, index)
        if index < 1:
            raise SignerRefusedError("element 0 is the anchor")
        self._state.parent.mkdir(parents=True, exist_ok=True, mode=0o700)
        with open(self._state, "a+") as handle:
            fcntl.flock(handle, fcntl.LOCK_EX)
            handle.seek(0)
            text = handle.read()
            released: dict[str, int] = json.loads(text) if text.strip() else {}
            highest = int(released.get(nonce, 0))
            if index > highest + 1:
                raise SignerRefusedError(f"element {index} is ahead: {highest} released so far")
            if index > highest:
                released[nonce] = index
                handle.seek(0)
                handle.truncate()
                handle.write(json.dumps(released, sort_keys=True))
                handle.flush()
                os.fsync(handle.fileno())
        return self._walk(nonce, length).seed(index)


class SocketSigner:
    """A client of ``manage.py run_signer`` on the Unix socket ``path``: one JSON line each way."""

    def __init__(self, path: str, timeout: float = 5.0) -> None:
        self._path = path
        self._timeout = timeout

    def _ask(self, request: dict[str, Any]) -> bytes:
        with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
            connection.settimeout(self._timeout)
            connection.connect(self._path)
            connection.sendall(json.dumps(request).encode() + b"\n")
            answer = json.loads(connection.makefile("rb").readline() or b"{}")
        if "error" in answer or "seed" not in answer:
            raise SignerRefusedError(str(answer.get("error", "no answer")))
        return bytes.fromhex(str(answer["seed"]))

    def anchor(self, nonce: str, length: int) -> bytes:
        return self._ask({"op": "anchor", "nonce": nonce, "length": length})

    def release(self, nonce: str, length: int, index: int) -> bytes:
        return self._ask({"op": "release", "nonce": nonce, "length": length, "index": index})


def answer(signer: KeySigner, line: bytes) -> dict[str, str]:
    """The server's answer to one request line (``{"seed": hex}`` or ``{"error": why}``)."""
    try:
        request = json.loads(line)
        nonce, length = str(request["nonce"]), int(request["length"])
        if request.get("op") == "anchor":
            return {"seed": signer.anchor(nonce, length).hex()}
        if request.get("op") == "release":
            return {"seed": signer.release(nonce, length, int(request["index"])).hex()}
        return {"error": "unknown op"}
    except SignerRefusedError as error:
        return {"error": str(error)}
    except (ValueError, KeyError, TypeError) as error:
        return {"error": f"bad request: {type(error).__name__}"}


def serve(signer: KeySigner, path: str) -> socketserver.UnixStreamServer:
    """A server of ``signer`` on the Unix socket ``path`` (mode 0660), ready for
    ``serve_forever``."""

    class Handler(socketserver.StreamRequestHandler):
        def handle(self) -> None:
            line = self.rfile.readline(4096)
            self.wfile.write(json.dumps(answer(signer, line)).encode() + b"\n")

    if os.path.exists(path):
        os.unlink(path)
    server = socketserver.ThreadingUnixStreamServer(path, Handler)
    os.chmod(path, 0o660)
    return server


_signer: Signer | None = None
_configured: tuple[str, str, str] | None = None


def get_signer() -> Signer:
    """The configured signer (``POKER_SIGNER``); raises SignerRefusedError for ``database``."""
    from django.conf import settings

    global _signer, _configured
    configured = (str(settings.SIGNER), str(settings.SIGNER_KEY_FILE), str(settings.SIGNER_SOCKET))
    if _signer is None or _configured != configured:
        kind, key_file, path = configured
        if kind == "socket":
            _signer = SocketSigner(path)
        elif kind == "embedded":
            key_path = Path(key_file)
            _signer = KeySigner(read_or_create_key(key_path), key_path.with_suffix(".released.json"))
        else:
            raise SignerRefusedError(f"POKER_SIGNER={kind} keeps terminal seeds in the database; no signer")
        _configured = configured
    return _signer
